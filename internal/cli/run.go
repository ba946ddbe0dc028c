package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/apicommit"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/session"
)

// runOptions are the main command's flags.
type runOptions struct {
	yes            bool
	concurrency    int
	continueID     string
	repoDir        string
	verbose        bool
	agentFlags     agentFlags
	exploreTimeout time.Duration
	executeTimeout time.Duration
	planTimeout    time.Duration
	directiveTime  time.Duration
	maxCost        float64
	maxTokens      int64
	noMap          bool
	review         string
	commitSigning  string
}

// continueLatest is the value of a bare --continue (and the id that
// names the newest session). It is printable: it shows in --help.
const continueLatest = "latest"

func (o *runOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVarP(&o.yes, "yes", "y", false, "approve both gates (angles and tasks) without asking")
	f.IntVarP(&o.concurrency, "concurrency", "c", 4, "tasks (and angles) run at the same time")
	f.StringVar(&o.continueID, "continue", "", "resume a session where it stopped: the newest, or the `SESSION_ID` given (--continue ID or --continue=ID)")
	f.Lookup("continue").NoOptDefVal = continueLatest
	f.StringVarP(&o.repoDir, "repo", "C", ".", "the repository `DIR` to work in")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log details to stderr")
	f.DurationVar(&o.exploreTimeout, "explore-timeout", 300*time.Second, "time limit of one exploration (and of analyze)")
	f.DurationVar(&o.planTimeout, "plan-timeout", 300*time.Second, "time limit of the planning step")
	f.DurationVar(&o.executeTimeout, "execute-timeout", 600*time.Second, "time limit of one task's agent")
	f.DurationVar(&o.directiveTime, "directive-timeout", 600*time.Second, "time limit of one task's execution directives")
	f.Float64Var(&o.maxCost, "max-cost-usd", 0, "stop before a step that would take the estimated cost past this (0: no limit)")
	f.Int64Var(&o.maxTokens, "max-tokens", 0, "stop before a step that would take the tokens used past this (0: no limit)")
	f.BoolVar(&o.noMap, "no-map", false, "do not build the repository map before exploring")
	f.StringVar(&o.review, "review", string(review.ModeAgent), "after the last wave: agent (the agent reviews each task's commit read-only) or skip")
	f.StringVar(&o.commitSigning, "commit-signing", apicommit.ModeGit, "how task commits are made: git (locally) or api (by GitHub through its API, so they show as Verified; needs GITHUB_TOKEN and the origin remote on GitHub)")
	o.agentFlags.register(f)
}

func runMain(cmd *cobra.Command, stdio IO, o *runOptions, args []string) error {
	// What a step leaves in a folder every step may write is no program
	// for planex's own git (a git or ssh there, on PATH).
	ctx := gitrepo.AvoidingFolders(cmd.Context(), o.agentFlags.writeDirs(stdio.Getenv))
	continuing := cmd.Flags().Changed("continue")
	if err := checkRunArgs(cmd, o, continuing, args); err != nil {
		return err
	}
	reviewMode, err := review.ParseMode(o.review)
	if err != nil {
		return usageError(cmd, "--%v", err)
	}
	signing, err := apicommit.ParseMode(o.commitSigning)
	if err != nil {
		return usageError(cmd, "--%v", err)
	}
	repo, err := openRepo(ctx, o.repoDir, stdio.Getenv)
	if err != nil {
		return fmt.Errorf("planex works inside a git repository: %w", err)
	}
	if continuing && !cmd.Flags().Changed("commit-signing") {
		signing = recordedSigning(session.StoreFor(repo.Root, repo.CommonDir), continueSessionID(o.continueID, args), signing)
	}
	// The requirement is read before anything starts: a missing file or an
	// empty requirement is the user's mistake (exit 2), found at once.
	var req engine.Request
	if !continuing {
		if req, err = readRequest(args, repo.Root); err != nil {
			return &exitError{code: exitUsage, msg: "planex: " + err.Error()}
		}
		if strings.TrimSpace(req.Requirement) == "" && len(req.Imported) == 0 {
			return usageError(cmd, "the requirement is empty: say what to change, or name a file holding it")
		}
	}
	prompt := terminalGate(stdio)
	eng, err := newRunEngine(ctx, stdio, o, repo, reviewMode, signing, prompt)
	if err != nil {
		return err
	}
	var out *engine.Outcome
	if continuing {
		out, err = eng.Continue(ctx, continueSessionID(o.continueID, args))
	} else {
		out, err = eng.Start(ctx, req)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitInterrupted, msg: "planex: interrupted; resume with planex --continue"}
		}
		return err
	}
	return report(stdio, out, prompt != nil && prompt.modify)
}

// checkRunArgs rejects flag and argument combinations that make no sense:
// a run needs a requirement, --continue takes at most a session id.
func checkRunArgs(cmd *cobra.Command, o *runOptions, continuing bool, args []string) error {
	if o.concurrency < 1 {
		return usageError(cmd, "--concurrency must be at least 1, got %d", o.concurrency)
	}
	if !continuing && len(args) == 0 {
		return usageError(cmd, "give a requirement (text or a file), or --continue")
	}
	if !continuing {
		return unknownCommand(cmd.Root(), args)
	}
	if o.continueID != continueLatest && len(args) > 0 {
		return usageError(cmd, "--continue does not take a requirement")
	}
	if len(args) > 1 {
		return usageError(cmd, "--continue takes at most one session id")
	}
	return nil
}

// continueSessionID is the session --continue names: its value, or the
// one argument after a bare --continue; "" means the newest.
func continueSessionID(flag string, args []string) string {
	id := flag
	if id == continueLatest && len(args) == 1 {
		id = args[0]
	}
	if id == continueLatest {
		id = "" // the newest
	}
	return id
}

// newRunEngine builds the engine a run uses: the commit publisher, the
// contained agent, the reviewer and the gate (prompt, when on a terminal).
func newRunEngine(ctx context.Context, stdio IO, o *runOptions, repo *gitrepo.Repo, reviewMode review.Mode, signing string, prompt *promptGate) (*engine.Engine, error) {
	publisher, err := commitPublisher(ctx, signing, repo, stdio.Getenv, stdio.GitHubRetry, logger(stdio.Err, o.verbose))
	if err != nil {
		return nil, err
	}
	if err := o.agentFlags.checkPrice(o.maxCost, stdio.Getenv, "Pass its prices with --price-in and --price-out (dollars per million tokens), choose a priced model with --model, or leave out --max-cost-usd."); err != nil {
		return nil, err
	}
	contain, err := o.agentFlags.containment(ctx, repo, false, stdio.Err, stdio.Getenv)
	if err != nil {
		return nil, err
	}
	ag, err := o.agentFlags.build(stdio.Getenv, contain, logger(stdio.Err, o.verbose))
	if err != nil {
		return nil, err
	}
	var gate engine.Gate
	if prompt != nil {
		gate = prompt
	}
	return engine.New(repo, engine.Options{
		Reviewer:    reviewerFor(reviewMode, ag, repo, o.executeTimeout, stdio.Out, logger(stdio.Err, o.verbose)),
		Agent:       ag,
		Gate:        gate,
		Yes:         o.yes,
		Concurrency: o.concurrency,
		Timeouts: map[agent.Phase]time.Duration{
			agent.PhaseAnalyze: o.exploreTimeout, agent.PhaseExplore: o.exploreTimeout,
			agent.PhasePlan: o.planTimeout, agent.PhaseExecute: o.executeTimeout,
		},
		DirectiveTimeout: o.directiveTime,
		Contain:          contain,
		Budget:           engine.Budget{MaxCostUSD: o.maxCost, MaxTokens: o.maxTokens},
		Mapper:           newMapper(o.noMap, logger(stdio.Err, o.verbose)),
		Out:              stdio.Out,
		Log:              logger(stdio.Err, o.verbose),
		LockSessions:     true,
		Publisher:        publisher,
		CommitSigning:    signing,
	})
}

// recordedSigning is the commit-signing mode the session being continued
// was started with, or def when it recorded none (or cannot be read:
// Continue reports that itself).
func recordedSigning(st session.Store, id, def string) string {
	s, err := session.Open(st, id)
	if err != nil || s.Meta.CommitSigning == "" {
		return def
	}
	if mode, err := apicommit.ParseMode(s.Meta.CommitSigning); err == nil {
		return mode
	}
	return def
}

// report explains where a run stopped and what to do next, and sets the
// exit code: 3 when it waits at a gate for the user, unless they chose
// Modify at the prompt (they asked to stop); 1 when it failed.
func report(stdio IO, out *engine.Outcome, modifying bool) error {
	s := out.Session
	switch out.Stage {
	case engine.StageWaiting:
		file := session.ExploreFile
		what, verb, pronoun := "exploration angles", "are", "them"
		if out.Gate == session.GateTasks {
			file, what, verb, pronoun = session.TasksFile, "plan", "is", "it"
		}
		fmt.Fprintf(stdio.Out, "\nThe %s %s in %s. Review (or edit) %s, then continue with:\n  planex --continue %s\n",
			what, verb, s.File(file), pronoun, s.Meta.ID)
		if modifying {
			return nil
		}
		return &exitError{code: exitWaiting}
	case engine.StageCancelled:
		fmt.Fprintf(stdio.Out, "cancelled: %s\n", out.Reason)
		return nil
	case engine.StageStopped:
		return &exitError{code: exitFailed, msg: "planex: " + out.Reason}
	}
	if c := out.Counts; c.Failed+c.Skipped > 0 {
		var what []string
		if c.Failed > 0 {
			what = append(what, plural.Count(c.Failed, "task failed", "tasks failed"))
		}
		if c.Skipped > 0 {
			what = append(what, plural.Count(c.Skipped, "task was skipped", "tasks were skipped"))
		}
		return &exitError{code: exitFailed, msg: fmt.Sprintf("planex: %s; see %s. To run them again as approved: planex retry %s",
			strings.Join(what, " and "), s.File(session.ContextFile), s.Meta.ID)}
	}
	return nil
}

// readRequest interprets the positional arguments: a requirement text, a
// .md/.txt file holding one, or a plan the user already has.
func readRequest(args []string, root string) (engine.Request, error) {
	text := joinArgs(args)
	if len(args) != 1 {
		return engine.Request{Requirement: text}, nil
	}
	path := args[0]
	ext := strings.ToLower(filepath.Ext(path))
	info, statErr := os.Stat(path)
	if statErr != nil || info.IsDir() {
		if ext == ".md" || ext == ".txt" || ext == ".json" || ext == ".csv" {
			if looksLikePath(path) {
				return engine.Request{}, fmt.Errorf("requirement file %s: %w", path, statErr)
			}
		}
		return engine.Request{Requirement: text}, nil
	}
	data, err := readRequirementFile(path, root)
	if err != nil {
		return engine.Request{}, fmt.Errorf("reading requirement file: %w", err)
	}
	switch {
	case ext == ".json":
		var pr agent.PlanResult
		if err := agent.Decode(agent.PhasePlan, data, &pr); err != nil {
			return engine.Request{}, fmt.Errorf("%s: %w", path, err)
		}
		req := engine.Request{Source: path, Imported: engine.TasksFromPlan(pr), Summary: pr.Summary, Approach: pr.Approach}
		req.Requirement = firstNonEmpty(pr.Summary, "plan from "+filepath.Base(path))
		return req, nil
	case ext == ".csv":
		tasks, err := plan.ReadTasks(path, data)
		if err != nil {
			return engine.Request{}, err
		}
		for i, t := range tasks {
			// An imported plan starts fresh: only what it plans is taken,
			// never what a run recorded (status, commit, findings, usage),
			// which a committed tasks.csv sets as it likes: a cost there
			// counted against --max-cost-usd, and findings reached the
			// prompts of the tasks drawing on that row.
			tasks[i] = plan.Task{ID: t.ID, Title: t.Title, Description: t.Description, Test: t.Test,
				AcceptanceCriteria: t.AcceptanceCriteria, Scope: t.Scope, Hints: t.Hints, ExecutionDirectives: t.ExecutionDirectives,
				Deps: t.Deps, ContextFrom: t.ContextFrom, Wave: t.Wave, Status: plan.StatusPending, Line: t.Line}
		}
		return engine.Request{Source: path, Imported: tasks, Requirement: "plan from " + filepath.Base(path)}, nil
	default:
		if !json.Valid(data) && strings.ContainsRune(string(data), 0) {
			return engine.Request{}, fmt.Errorf("%s is a binary file, not a requirement", path)
		}
		return engine.Request{Requirement: strings.TrimSpace(string(data)), Source: path}, nil
	}
}

// maxRequirementFile bounds the requirement, plan.json or tasks.csv file
// planex reads whole.
const maxRequirementFile = 16 << 20

// readRequirementFile reads the file named as the requirement: a regular
// file of at most maxRequirementFile bytes (a FIFO, a device or a larger
// file is refused at once, never waited on or read without end). A path
// inside root (the repository), where a clone decides what the name is,
// is refused when it is a link that leads out of the repository: a
// committed TODO.md -> ../../.aws/credentials would make the user's
// credentials the requirement, sent to the model and kept in the plan.
func readRequirementFile(path, root string) ([]byte, error) {
	if out := linkOutOf(path, root); out != "" {
		return nil, fmt.Errorf("%s is a link out of the repository (to %s): planex does not take a repository's link to a file elsewhere as the requirement; name that file itself", path, out)
	}
	return safefile.ReadRegular(path, maxRequirementFile)
}

// linkOutOf returns where path leads when path lies in root but, its
// links followed, leads outside it; "" otherwise (root "": no check).
func linkOutOf(path, root string) string {
	if root == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	if !within(abs, filepath.Clean(root)) && !within(abs, realRoot) {
		return ""
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil || within(real, realRoot) {
		return ""
	}
	return real
}

func looksLikePath(s string) bool { return !strings.ContainsAny(s, " \n\t") }

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// terminalGate asks Approve / Modify / Cancel on a terminal; without one
// it returns nil, so the engine stops at the gate and says how to go on.
func terminalGate(stdio IO) *promptGate {
	if !stdio.IsTerminal {
		return nil
	}
	return &promptGate{stdio: stdio, in: bufio.NewReader(stdio.In)}
}

type promptGate struct {
	stdio IO
	in    *bufio.Reader
	// modify: the user chose Modify, so stopping at the gate is what they
	// asked for.
	modify bool
}

func (g *promptGate) Confirm(ctx context.Context, gate session.Gate, s *session.Session, preview string) (engine.Decision, error) {
	fmt.Fprintf(g.stdio.Out, "\n%s\n", preview)
	for {
		fmt.Fprintf(g.stdio.Out, "Approve the %s? [a]pprove / [m]odify / [c]ancel: ", gate)
		line, err := g.in.ReadString('\n')
		if err != nil && line == "" {
			return engine.Defer, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "approve", "y", "yes":
			return engine.Approve, nil
		case "m", "modify":
			g.modify = true
			return engine.Modify, nil
		case "c", "cancel", "n", "no":
			return engine.Cancel, nil
		}
	}
}
