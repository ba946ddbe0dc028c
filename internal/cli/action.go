package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/action"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/apicommit"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/explore"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/proc"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/render/md"
	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/review"
)

func newActionCmd(stdio IO) *cobra.Command {
	var finalize, verbose bool
	var m matrixFlags
	cmd := &cobra.Command{
		Use:   "action",
		Short: "Run as a GitHub Action step (reads the Actions environment and inputs)",
		Long: `action handles the event that started the workflow: /planex comment commands on
issues and on pull requests planex opened, issues given the label input ("planex"), workflow_dispatch
and schedule. It reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY,
GITHUB_WORKSPACE, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID and the step's
inputs, and writes outputs and the job summary. See docs/action.md.

--finalize is for an "if: cancelled() || failure()" step: it marks a plan that was
still running as failed and says so on the issue.

Matrix mode (input mode: matrix, see docs/matrix.md) runs each task of a wave as a
job of its own: --prepare emits the next wave as a job matrix, --task Tn runs one
task and publishes its result, --collect (if: always()) puts the results on the run
branch and dispatches the next wave or opens the pull request. The input
matrix-step (prepare, task, collect) with the input task does the same.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAction(cmd.Context(), stdio, finalize, verbose, m)
		},
	}
	cmd.Flags().BoolVar(&m.prepare, "prepare", false, "matrix mode: emit the next wave of a running plan as a job matrix")
	cmd.Flags().StringVar(&m.task, "task", "", "matrix mode: run this one task of the prepared wave")
	cmd.Flags().BoolVar(&m.collect, "collect", false, "matrix mode: integrate the wave's results, then dispatch the next wave or open the pull request")
	cmd.Flags().BoolVar(&finalize, "finalize", false, "report a job that ended before its plan did")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log details")
	return cmd
}

// actionInputs reads inputs the way both kinds of action see them: a
// JavaScript/Docker action gets INPUT_<NAME> with the name as written; a
// composite action maps them through env: with '-' spelled '_'.
type actionInputs struct {
	gha    *githubactions.Action
	getenv func(string) string
}

func (a actionInputs) get(name string) string {
	if v := strings.TrimSpace(a.gha.GetInput(name)); v != "" {
		return v
	}
	return strings.TrimSpace(a.getenv("INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))))
}

// trustedBots reads the trusted-bots input: App logins ("<slug>[bot]"),
// separated by commas, spaces or new lines. A person's login or the
// Actions bot is refused: a person needs no naming, and the Actions bot
// acts for every workflow, whoever started it.
func trustedBots(v string) ([]string, error) {
	var out []string
	for _, b := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		switch {
		case !action.IsLogin(b) || !strings.HasSuffix(strings.ToLower(b), "[bot]"):
			return nil, fmt.Errorf("input trusted-bots: %q is not a GitHub App's login (\"<app-slug>[bot]\")", b)
		case strings.EqualFold(b, action.ActionsBot):
			return nil, fmt.Errorf("input trusted-bots: %s acts for every workflow of the repository, whoever started it, and cannot be trusted to start planex", b)
		}
		out = append(out, b)
	}
	return out, nil
}

func (a actionInputs) boolean(name string, def bool) (bool, error) {
	v := a.get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("input %s: %q is not true or false", name, v)
	}
	return b, nil
}

func (a actionInputs) integer(name string, def int) (int, error) {
	v := a.get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("input %s: %q is not a positive whole number", name, v)
	}
	return n, nil
}

// logStartup prints how long the step took to reach planex's first API
// call, when action.yml recorded the step's start (PLANEX_STEP_STARTED_AT,
// Unix seconds): the start-up figure docs/action.md reports.
func logStartup(stdio IO, getenv func(string) string) {
	v := getenv("PLANEX_STEP_STARTED_AT")
	if v == "" {
		return
	}
	started, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return
	}
	sec, frac := math.Modf(started)
	elapsed := time.Since(time.Unix(int64(sec), int64(frac*1e9)))
	fmt.Fprintf(stdio.Out, "start-up: %.2fs from step start to the first GitHub API call\n", elapsed.Seconds())
}

// matrixFlags selects a matrix-mode step.
type matrixFlags struct {
	prepare, collect bool
	task             string
}

// fromInputs fills the step from the matrix-step and task inputs when no
// flag chose one.
func (m *matrixFlags) fromInputs(in actionInputs) error {
	if m.prepare || m.collect || m.task != "" {
		return m.check()
	}
	switch step := in.get("matrix-step"); step {
	case "":
	case "prepare":
		m.prepare = true
	case "collect":
		m.collect = true
	case "task":
		if m.task = in.get("task"); m.task == "" {
			return fmt.Errorf("input matrix-step is task but the input task is empty")
		}
	default:
		return fmt.Errorf("input matrix-step: %q is not prepare, task or collect", step)
	}
	return m.check()
}

func (m *matrixFlags) check() error {
	n := 0
	for _, on := range []bool{m.prepare, m.collect, m.task != ""} {
		if on {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("--prepare, --task and --collect are separate steps; give one")
	}
	return nil
}

// runAction runs the Action step and reports it the way Actions users
// expect: the log folded into a group per phase, failures as ::error
// annotations, the report in the job summary, and a non-zero exit when
// the run failed (a plan posted and waiting for approval is a success).
func runAction(ctx context.Context, stdio IO, finalize, verbose bool, m matrixFlags) error {
	// Everything planex prints goes through these logs, which defuse
	// workflow commands in text agents wrote.
	alog := newActionLog(stdio.Out, stdio.Getenv)
	elog := &actionLog{w: stdio.Err}
	defer elog.close()
	defer alog.close()
	stdio.Out, stdio.Err = alog, elog
	alog.group("setup")
	runner, err := actionStep(ctx, stdio, alog, finalize, verbose, m)
	alog.close()
	gha := alog.gha
	var o action.Outputs
	if runner != nil {
		o = runner.Outputs
		writeOutputs(gha, elog, stdio.Getenv, o)
	}
	if o.Notice != "" && err == nil {
		gha.Noticef("%s", o.Notice)
	}
	summary := o.Summary
	switch {
	case err != nil:
		annotate(gha, err)
		summary = joinSummary("### planex failed\n\n"+md.CodeBlock("", err.Error()), summary)
	case o.Failure != "":
		gha.WithFieldsMap(map[string]string{"title": "planex"}).Errorf("%s", o.Failure)
		if o.Summary == "" {
			summary = "### planex failed\n\n" + md.CodeBlock("", o.Failure)
		}
	}
	if summary != "" && stdio.Getenv("GITHUB_STEP_SUMMARY") != "" {
		// The runner drops a summary past 1 MiB whole: bounded here, for
		// a report an agent made long.
		runnerFile(elog, "the job summary", func() { gha.AddStepSummary(render.StepSummary(summary)) })
	}
	if err != nil {
		fmt.Fprintf(elog, "planex: %v\n", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return &exitError{code: ee.code}
		}
		return &exitError{code: exitFailed}
	}
	if o.Failure != "" {
		return &exitError{code: exitFailed}
	}
	return nil
}

// writeOutputs sets the step's outputs from o: the four always, the
// others when they have a value. Outside a runner's step (no
// GITHUB_OUTPUT) none is written, and the log says so.
func writeOutputs(gha *githubactions.Action, log io.Writer, getenv func(string) string, o action.Outputs) {
	if getenv("GITHUB_OUTPUT") == "" {
		fmt.Fprintln(log, "planex: GITHUB_OUTPUT is not set (not a GitHub Actions step): the step's outputs are not written")
		return
	}
	for _, kv := range [][2]string{{"session-id", o.SessionID}, {"plan-id", o.PlanID}, {"status", string(o.Status)}, {"pull-request-url", o.PullRequestURL}} {
		setOutput(gha, log, kv[0], kv[1])
	}
	for _, kv := range [][2]string{{"matrix", o.Matrix}, {"max-parallel", o.MaxParallel}, {"has-tasks", o.HasTasks}, {"planned-issues", o.PlannedIssues}} {
		if kv[1] != "" {
			setOutput(gha, log, kv[0], kv[1])
		}
	}
}

// runnerFile runs a toolkit call that appends to a runner's file (an
// output, the job summary). The toolkit panics when it cannot open the
// file (a path in a folder that is gone, one planex may not write): the
// log says which was not written, and the step goes on to report.
func runnerFile(log io.Writer, what string, write func()) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(log, "planex: %s not written: %v\n", what, p)
		}
	}()
	write()
}

// setOutput sets the step output k. The toolkit writes an output between
// lines of a fixed delimiter, so a value holding a line break could set
// outputs of its own (the delimiter, then "matrix<<…"); planex's values
// never hold one, and a value that does (a forged record's) is left unset,
// with a line in the log saying so.
func setOutput(gha *githubactions.Action, log io.Writer, k, v string) {
	if strings.ContainsAny(v, "\r\n") {
		fmt.Fprintf(log, "planex: output %s left unset: its value holds a line break\n", k)
		return
	}
	runnerFile(log, "output "+k, func() { gha.SetOutput(k, v) })
}

func joinSummary(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n")
}

// annotate reports err as ::error annotations: one per problem that has a
// file (and line) — a plan's validation problems, .github/planex.yml —
// else one for the whole error.
func annotate(gha *githubactions.Action, err error) {
	var probs plan.Problems
	if errors.As(err, &probs) {
		for _, p := range probs {
			annotate(gha, p)
		}
		return
	}
	fields := map[string]string{"title": "planex"}
	var loc interface{ Location() (string, int) }
	if errors.As(err, &loc) {
		file, line := loc.Location()
		fields["file"] = file
		if line > 0 {
			fields["line"] = strconv.Itoa(line)
		}
	}
	gha.WithFieldsMap(fields).Errorf("%s", err.Error())
}

// actionStep reads the Actions environment and inputs and handles the
// event. The runner is nil when it never got as far as handling it.
func actionStep(ctx context.Context, stdio IO, alog *actionLog, finalize, verbose bool, m matrixFlags) (*action.Runner, error) {
	getenv := stdio.Getenv
	gha := alog.gha
	in := actionInputs{gha: gha, getenv: getenv}
	log := logger(stdio.Err, verbose)

	full := getenv("GITHUB_REPOSITORY")
	owner, repoName, ok := strings.Cut(full, "/")
	if !ok || owner == "" || repoName == "" {
		return nil, fmt.Errorf("GITHUB_REPOSITORY is %q, expected owner/name (is this running in GitHub Actions?)", full)
	}
	ev, err := event.Load(getenv("GITHUB_EVENT_NAME"), getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return nil, err
	}
	if ev.Owner == "" {
		if err := ev.SetRepository(full); err != nil {
			return nil, err
		}
	}
	tokenInput := in.get("github-token")
	token := cmp.Or(tokenInput, getenv("GITHUB_TOKEN"))
	if token == "" {
		return nil, fmt.Errorf("no GitHub token: set the github-token input")
	}
	// The token, and the credential git sends derived from it.
	gha.AddMask(token)
	gha.AddMask(gitrepo.BasicCredential(token))
	serverURL := cmp.Or(getenv("GITHUB_SERVER_URL"), "https://github.com")
	repo, err := openRepo(ctx, cmp.Or(getenv("GITHUB_WORKSPACE"), "."), getenv)
	if err != nil {
		return nil, fmt.Errorf("GITHUB_WORKSPACE must be a checkout of the repository (actions/checkout): %w", err)
	}
	// The checkout's remote is the workflow's repository: a push URL a
	// git-directory writer pointed elsewhere would take the token's pushes,
	// and one on this machine would run its hooks on planex's push.
	if err := gitrepo.CheckRemote(repo, "origin", strings.TrimSuffix(serverURL, "/")+"/"+full, stdio.AllowLocalOrigin); err != nil {
		return nil, err
	}
	if removed, err := repo.DropPersistedCredentials(ctx); err != nil {
		return nil, err
	} else if len(removed) > 0 {
		fmt.Fprintf(stdio.Out, "removed the token actions/checkout left for later steps (%s), so agents cannot read it; set persist-credentials: false to avoid this\n", strings.Join(removed, ", "))
	}
	if repo, err = gitrepo.Authenticated(ctx, repo, serverURL, token); err != nil {
		return nil, err
	}

	cfg, err := actionConfig(in, getenv, owner, repoName, ev.DefaultBranch, serverURL)
	if err != nil {
		return nil, err
	}
	if err := m.fromInputs(in); err != nil {
		return nil, inputError(err)
	}
	ag, contain, agentErr, err := actionAgent(ctx, in, repo, stdio.Err, getenv, cfg.MaxCostUSD, log)
	if err != nil {
		return nil, err
	}
	// What a step leaves in a folder every step may write is no program
	// for planex's own git (a git or ssh there, on PATH).
	ctx = gitrepo.AvoidingFolders(ctx, contain.Write)
	// No value planex holds and does not pass to agents reaches a comment,
	// issue, pull request or review, nor the job's log, whatever an agent
	// wrote.
	secrets := contain.Secrets()
	for v := range secrets {
		gha.AddMask(v)
	}
	client, err := gh.NewClient(ctx, gh.Options{Token: token, APIURL: getenv("GITHUB_API_URL"), ServerURL: serverURL, UserAgent: "planex", Logger: log,
		Publish: func(s string) string { return agent.Redact(s, secrets) }, Retry: stdio.GitHubRetry})
	if err != nil {
		return nil, err
	}
	runner := &action.Runner{Cfg: cfg, GH: action.NewGitHub(client), Repo: repo, Out: stdio.Out, Log: log, AgentErr: agentErr,
		Engine: engine.Options{Agent: ag, Mapper: actionMapper(log), Log: log, Contain: contain, Phase: alog.group}}
	if cfg.CommitSigning == apicommit.ModeAPI {
		runner.Engine.Publisher = &apicommit.Publisher{GH: client, Local: repo, Owner: owner, Repo: repoName, Remote: "origin", Log: log}
	}
	logStartup(stdio, getenv)
	if err := runner.LoadSettings(ctx); err != nil {
		return nil, err
	}
	return runner, runActionStep(ctx, runner, ev, finalize, m)
}

// actionConfig is the Action's configuration from the step's inputs and
// the Actions environment; a bad input is a usage error naming it.
func actionConfig(in actionInputs, getenv func(string) string, owner, repoName, defaultBranch, serverURL string) (action.Config, error) {
	full := owner + "/" + repoName
	cfg := action.Config{Owner: owner, Repo: repoName, ServerURL: serverURL, DefaultBranch: defaultBranch,
		Trigger: in.get("trigger-phrase"), BaseBranch: in.get("base-branch"), Label: in.get("label")}
	if id := getenv("GITHUB_RUN_ID"); id != "" {
		cfg.RunURL = fmt.Sprintf("%s/%s/actions/runs/%s", strings.TrimSuffix(serverURL, "/"), full, id)
	}
	cfg.DefaultToken = usesDefaultToken(getenv)
	if cfg.BotLogin = in.get("bot-login"); cfg.BotLogin != "" && !action.IsLogin(cfg.BotLogin) {
		return cfg, inputError(fmt.Errorf("input bot-login: %q is not a GitHub login (a user's, or an App's \"<app-slug>[bot]\")", cfg.BotLogin))
	}
	var err error
	if cfg.TrustedBots, err = trustedBots(in.get("trusted-bots")); err != nil {
		return cfg, inputError(err)
	}
	if cfg.Concurrency, err = in.integer("concurrency", 4); err != nil {
		return cfg, inputError(err)
	}
	if cfg.MaxIssues, err = in.integer("max-issues", 3); err != nil {
		return cfg, inputError(err)
	}
	if cfg.Draft, err = in.boolean("draft", true); err != nil {
		return cfg, inputError(err)
	}
	if cfg.AutoApprove, err = in.boolean("auto-approve", false); err != nil {
		return cfg, inputError(err)
	}
	switch cfg.Mode = action.Mode(in.get("mode")); cfg.Mode {
	case "", action.ModeSingle:
		cfg.Mode = action.ModeSingle
	case action.ModeMatrix:
	default:
		return cfg, inputError(fmt.Errorf("input mode: %q is not single or matrix", cfg.Mode))
	}
	cfg.MatrixWorkflow, cfg.RunID, cfg.RunAttempt = in.get("matrix-workflow"), getenv("GITHUB_RUN_ID"), getenv("GITHUB_RUN_ATTEMPT")
	// Waves run on the triggering run's full ref: its short name
	// (GITHUB_REF_NAME) would be resolved by GitHub tags first. Another
	// kind of ref (a pull request's merge ref) leaves the default branch.
	if ref := getenv("GITHUB_REF"); strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/tags/") {
		cfg.DispatchRef = ref
	}
	if v := in.get("max-cost-usd"); v != "" {
		if cfg.MaxCostUSD, err = strconv.ParseFloat(v, 64); err != nil || cfg.MaxCostUSD < 0 {
			return cfg, inputError(fmt.Errorf("input max-cost-usd: %q is not a non-negative number", v))
		}
	}
	if cfg.Review, err = review.ParseMode(in.get("review")); err != nil {
		return cfg, inputError(fmt.Errorf("input %w", err))
	}
	if cfg.CommitSigning, err = apicommit.ParseMode(in.get("commit-signing")); err != nil {
		return cfg, inputError(fmt.Errorf("input %w", err))
	}
	if cfg.CIFix, cfg.CIFixAttempts, err = ciFixInputs(in); err != nil {
		return cfg, inputError(err)
	}
	return cfg, nil
}

// ciFixInputs reads ci-fix and ci-fix-attempts.
func ciFixInputs(in actionInputs) (action.CIFixMode, int, error) {
	mode := action.CIFixMode(in.get("ci-fix"))
	switch mode {
	case "":
		mode = action.CIFixPlan
	case action.CIFixPlan, action.CIFixAuto, action.CIFixOff:
	default:
		return "", 0, fmt.Errorf("input ci-fix: %q is not plan, auto or off", mode)
	}
	n, err := in.integer("ci-fix-attempts", action.DefaultCIFixAttempts)
	return mode, n, err
}

// actionAgent builds the agent the inputs name, contained. Without a
// sandbox no agent runs: agentErr says why, and every flow that needs an
// agent fails with it while help, status and cancel still answer.
func actionAgent(ctx context.Context, in actionInputs, repo *gitrepo.Repo, warn io.Writer, getenv func(string) string, maxCost float64, log *slog.Logger) (agent.Agent, agent.Containment, error, error) {
	af := agentFlags{name: in.get("agent"), command: in.get("agent-command"), model: in.get("model"), baseURL: in.get("base-url"), apiKeyEnv: in.get("api-key-env"), hideSelf: proc.HideFromSameUser}
	if allow := in.get("allow-env"); allow != "" {
		af.allowEnv = strings.Split(allow, ",")
	}
	if af.name == "" && af.command != "" {
		af.name = "command"
	}
	if af.name == "" {
		af.name = "anthropic"
	}
	af.sandbox = in.get("sandbox")
	af.network = in.get("network")
	if hosts := in.get("allow-hosts"); hosts != "" {
		af.allowHosts = []string{hosts}
	}
	// A path in the repository, as checked out for the workflow.
	af.mcpConfig, af.mcpDir, af.mcpInput = in.get("mcp-config"), repo.Root, "input mcp-config"
	contain, err := af.containment(ctx, repo, true, warn, getenv)
	input := "input sandbox"
	if ne := (*networkError)(nil); errors.As(err, &ne) {
		input = "input network"
	}
	var usage *exitError
	if errors.As(err, &usage) {
		return nil, agent.Containment{}, nil, fmt.Errorf("%s: %w", input, err)
	}
	var ag agent.Agent
	agentErr := err
	if agentErr != nil {
		agentErr = fmt.Errorf("%s: %w", input, err)
	} else if agentErr = af.checkPrice(maxCost, getenv, "Set the input model to a model planex has a price for, or leave out max-cost-usd."); agentErr == nil {
		ag, agentErr = af.build(getenv, contain, log)
	}
	if agentErr != nil {
		ag = agent.Func(func(context.Context, agent.Step) (agent.Result, error) { return agent.Result{}, agentErr })
	}
	return ag, contain, agentErr, nil
}

// runActionStep runs the step the flags chose: finalize, a matrix step,
// or the event.
func runActionStep(ctx context.Context, runner *action.Runner, ev *event.Event, finalize bool, m matrixFlags) error {
	switch {
	case finalize:
		return runner.Finalize(ctx, ev)
	case m.prepare:
		return runner.Prepare(ctx, ev)
	case m.task != "":
		return runner.RunTask(ctx, ev, m.task)
	case m.collect:
		return runner.Collect(ctx, ev)
	}
	return runner.Handle(ctx, ev)
}

// inputError is a bad input value: a usage error (exit 2).
func inputError(err error) error { return &exitError{code: exitUsage, msg: err.Error()} }

// usesDefaultToken says whether token is the workflow's own GITHUB_TOKEN.
// action.yml compares the github-token input with github.token in the
// workflow expression language and passes only the answer, "true" or
// "false", as PLANEX_DEFAULT_TOKEN (the job token itself never reaches
// planex). Without that answer (planex action run from a step of your
// own) the token is not taken for the job's: a GITHUB_TOKEN variable may
// hold any token, and the job token makes github-actions[bot], which
// every workflow of the repository posts as, planex's own account.
func usesDefaultToken(getenv func(string) string) bool {
	v, err := strconv.ParseBool(strings.TrimSpace(getenv("PLANEX_DEFAULT_TOKEN")))
	return err == nil && v
}

// actionMapper maps the repository for the Action's exploration from the
// files git tracks alone: the checkout is fresh, so an untracked file in
// it came from the workflow's earlier steps (a cloud login's
// credentials file), and its name must not reach the model, as the
// sandbox hides the file itself. The checkout is planex's alone for the
// job, so a job that plans and then runs the plan maps it once (Memo).
func actionMapper(log *slog.Logger) explore.Mapper {
	return explore.Mapper{Log: log, Options: repomap.Options{TrackedOnly: true}, Memo: &explore.Memo{}}
}
