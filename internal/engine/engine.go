// Package engine runs the lite-plan pipeline over a session: analyze →
// explore → plan → (gate) → execute waves → aggregate. Every phase reads
// its inputs from the session's files and writes its outputs back before
// the next begins, so a run can stop anywhere and continue later.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/execute"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/prompt"
	"github.com/planexhq/planex/internal/session"
)

// Decision is the answer at a gate.
type Decision int

const (
	// Defer stops the run at the gate; `planex --continue` approves later.
	Defer Decision = iota
	Approve
	// Modify stops so the user can edit the CSV, then continue.
	Modify
	Cancel
)

// Gate asks for approval of the angles or the tasks.
type Gate interface {
	Confirm(ctx context.Context, g session.Gate, s *session.Session, preview string) (Decision, error)
}

// RepoContext is what planex knows about the repository before any agent
// runs (see the repository map).
type RepoContext struct {
	Summary     string
	KeyFiles    []string
	TestCommand string
	Discoveries []session.Discovery
}

// Mapper builds a RepoContext for a query.
type Mapper interface {
	Map(ctx context.Context, root, query string) (*RepoContext, error)
}

// Options configure an engine.
type Options struct {
	Agent            agent.Agent
	Gate             Gate // nil: stop at every gate unless Yes
	Yes              bool
	Concurrency      int
	Timeouts         map[agent.Phase]time.Duration
	DirectiveTimeout time.Duration
	// Contain holds agents' and directives' processes (secrets, sandbox).
	Contain agent.Containment
	Budget  Budget
	Mapper  Mapper
	// ApprovedDirectivesOnly runs each task's execution directives as
	// approved and nothing else: a task without any runs none, instead of
	// the repository's test command (an unattended CI fix runs only the
	// workflow file's command).
	ApprovedDirectivesOnly bool
	Out                    io.Writer // progress for humans; nil discards
	Log                    *slog.Logger
	Now                    func() time.Time
	// AutoAngles passes the angles gate without asking (the Action's plan
	// comment is its only gate).
	AutoAngles bool
	// Progress is told after every task and wave (status comments, state
	// pushes). Its errors are logged, not fatal.
	Progress func(ctx context.Context, s *session.Session, tasks []plan.Task)
	// Reviewer, when set, reviews the run's changes after the last wave and
	// before the report. Its failure is recorded in the report and never
	// fails the run.
	Reviewer Reviewer
	// Approver names who approves at this process's gates, for the
	// approval record (default: the local user's name).
	Approver string
	// Phase, when set, is told as each phase begins ("analyze", "explore",
	// "plan", "wave 2: T3, T4", "review"), between the phase's
	// progress lines: the Action folds its log into groups with it.
	Phase func(name string)
	// LockSessions holds a session's lock (session.Lock) while Start or
	// Continue runs it, so a second planex on the same session is refused
	// at once instead of corrupting it.
	LockSessions bool
	// Publisher, when set, makes each task's commit on GitHub through its
	// API (commit-signing: api) instead of only locally; the run branch
	// is first brought up to GitHub's (Sync) so a resumed run finds the
	// tasks GitHub took before planex was killed.
	Publisher Publisher
	// CommitSigning names how task commits are made (the CLI's
	// --commit-signing); Start records it in the session and Continue
	// refuses a session recorded with another one, since a run branch
	// made locally cannot be finished through GitHub's API or the reverse.
	CommitSigning string
}

// Publisher makes task commits on the remote (see execute.Publisher) and
// brings the local branch up to the remote's.
type Publisher interface {
	execute.Publisher
	Sync(ctx context.Context, branch string) error
}

// Reviewer reviews a session's completed tasks and leaves its result in
// the session folder (review.json; see package review).
type Reviewer interface {
	// Review runs the review; limit says what the session's budget leaves
	// a review step starting now (see agent.Step.Limit).
	Review(ctx context.Context, s *session.Session, tasks []plan.Task, limit func() agent.Limit) error
}

// Engine runs sessions in one repository.
type Engine struct {
	repo    *gitrepo.Repo
	o       Options
	prompts *prompt.Set
	runner  *execute.Runner

	guideMu sync.Mutex
	guide   map[string]string // the guidance text by base commit

	reach *reach // stops the run after a step could not reach its model

	plans *approvedPlans // the approval gate of the repository's sessions
}

// New returns an engine for repo.
func New(repo *gitrepo.Repo, o Options) (*Engine, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	// Workers report progress concurrently; keep their lines whole.
	o.Out = &lockedWriter{w: o.Out}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Approver == "" {
		o.Approver = "local user"
		if u, err := user.Current(); err == nil && u.Username != "" {
			o.Approver = u.Username
		}
	}
	ps, err := prompt.Load()
	if err != nil {
		return nil, err
	}
	e := &Engine{repo: repo, prompts: ps, reach: &reach{}}
	o.Agent = e.reach.guard(o.Agent)
	e.o = o
	e.plans = &approvedPlans{store: session.StoreFor(repo.Root, repo.CommonDir), now: o.Now, out: o.Out}
	e.runner = &execute.Runner{Repo: repo, Agent: o.Agent, Contain: o.Contain, DirectiveTimeout: o.DirectiveTimeout, Log: o.Log}
	if o.Publisher != nil {
		e.runner.Publisher = o.Publisher
	}
	return e, nil
}

// sessions is where the repository's sessions live: in its git common
// directory, never in the work tree.
func (e *Engine) sessions() session.Store {
	return session.StoreFor(e.repo.Root, e.repo.CommonDir)
}

// Request starts a session.
type Request struct {
	Requirement string
	Source      string // file the requirement came from, if any
	// Imported tasks skip analyze, explore and plan.
	Imported []plan.Task
	Summary  string
	Approach string
	// SessionID and Branch override the derived names (the Action uses
	// "<issue>-<slug>" and "planex/<issue>-<slug>").
	SessionID string
	Branch    string
	// Base overrides the commit the run starts from (default HEAD).
	Base string
}

// Stage says where a run stopped.
type Stage string

const (
	StageWaiting   Stage = "waiting"
	StageDone      Stage = "done"
	StageCancelled Stage = "cancelled"
	StageStopped   Stage = "stopped" // budget exhausted
)

// Outcome reports a run.
type Outcome struct {
	Session *session.Session
	Stage   Stage
	Gate    session.Gate // when waiting
	Counts  plan.Counts
	Reason  string // why it stopped, when not done
	// AlreadyFinished: the session had finished before; nothing ran.
	AlreadyFinished bool
}

// Start creates a session and runs it as far as it can go.
func (e *Engine) Start(ctx context.Context, req Request) (*Outcome, error) {
	if strings.TrimSpace(req.Requirement) == "" && len(req.Imported) == 0 {
		return nil, errors.New("the requirement is empty")
	}
	if len(req.Imported) > 0 {
		// An imported plan has no explorations to draw context from.
		for i := range req.Imported {
			var keep []string
			for _, id := range req.Imported[i].ContextFrom {
				if !strings.HasPrefix(id, "E") {
					keep = append(keep, id)
				}
			}
			req.Imported[i].ContextFrom = keep
		}
		name := req.Source
		if name == "" {
			name = "imported plan"
		}
		// Refuse a bad plan before anything is created.
		valid, err := plan.Validate(name, req.Imported, nil)
		if err != nil {
			return nil, &InvalidPlanError{What: "the plan is not valid", Err: err}
		}
		req.Imported = valid
	}
	s, err := e.newSession(ctx, req)
	if err != nil {
		return nil, err
	}
	return e.runLocked(ctx, s, modeStart)
}

// runLocked runs s holding its lock, when the options ask for locks.
func (e *Engine) runLocked(ctx context.Context, s *session.Session, mode runMode) (*Outcome, error) {
	release, err := e.lock(s)
	if err != nil {
		return nil, err
	}
	defer release()
	if e.o.LockSessions {
		// Read it again under the lock: a holder may have changed it.
		if s, err = session.Open(e.sessions(), s.Meta.ID); err != nil {
			return nil, err
		}
	}
	return e.run(ctx, s, mode)
}

// lock takes s's lock when the options ask for it.
func (e *Engine) lock(s *session.Session) (release func(), err error) {
	if !e.o.LockSessions {
		return func() {}, nil
	}
	release, stale, err := session.Lock(s.Path)
	if err != nil {
		return nil, err
	}
	if stale != nil {
		fmt.Fprintf(e.o.Out, "note: session %s was left locked by planex pid %d on %s, which is no longer running; taking it over\n", s.Meta.ID, stale.PID, stale.Host)
	}
	return release, nil
}

// startState reads the main worktree's HEAD, branch and uncommitted
// changes with one git status. When that fails (HEAD names no commit, or
// status cannot read the worktree) it falls back to the separate reads,
// so a session whose base is given still starts and a missing HEAD is
// reported as Head reports it.
func (e *Engine) startState(ctx context.Context, base string) (gitrepo.WorkTreeState, error) {
	if st, err := gitrepo.State(ctx, e.repo); err == nil {
		return st, nil
	}
	st := gitrepo.WorkTreeState{Head: base, Branch: e.repo.CurrentBranch(ctx)}
	if base == "" {
		head, err := e.repo.Head(ctx)
		if err != nil {
			return st, err
		}
		st.Head = head
	}
	if dirty, err := e.repo.Dirty(ctx); err == nil {
		st.Changes = len(dirty)
	}
	return st, nil
}

// newSession creates the session folder for a request.
func (e *Engine) newSession(ctx context.Context, req Request) (*session.Session, error) {
	st, err := e.startState(ctx, req.Base)
	if err != nil {
		return nil, err
	}
	head := req.Base
	if head == "" {
		head = st.Head
	}
	if st.Changes > 0 {
		fmt.Fprintf(e.o.Out, "note: %s in your working tree %s left alone and not part of the run (it starts from %s)\n",
			plural.Count(st.Changes, "uncommitted change", "uncommitted changes"), plural.Word(st.Changes, "is", "are"), abbrev.SHA(head))
	}
	now := e.o.Now().UTC()
	idSource := req.Requirement
	if idSource == "" {
		idSource = req.Summary
	}
	id := req.SessionID
	if id == "" {
		id = session.NewID(abbrev.FirstLine(idSource), now)
	}
	s, err := session.Create(e.sessions(), session.Meta{
		ID: id, Branch: req.Branch, Requirement: req.Requirement, Source: req.Source,
		Created: now, Base: head, BaseBranch: st.Branch,
		Summary: req.Summary, Approach: req.Approach, Imported: len(req.Imported) > 0,
		AutoApprove: e.o.Yes, CommitSigning: e.o.CommitSigning,
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.o.Out, "session %s\n", s.Meta.ID)
	if len(req.Imported) > 0 {
		if err := s.WriteTasks(req.Imported); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// StartExplored creates a session whose explorations are already done
// (from the repository map), records them and the map's discoveries, and
// writes the report. `planex --continue` then plans with an agent.
func (e *Engine) StartExplored(ctx context.Context, req Request, rows []plan.ExploreRow, rc *RepoContext) (*session.Session, error) {
	if strings.TrimSpace(req.Requirement) == "" {
		return nil, errors.New("the requirement is empty")
	}
	s, err := e.newSession(ctx, req)
	if err != nil {
		return nil, err
	}
	s.Meta.Type, s.Meta.Complexity = guessType(req.Requirement), "Medium"
	s.Meta.Approved = map[session.Gate]bool{session.GateAngles: true}
	if err := s.SaveMeta(); err != nil {
		return nil, err
	}
	if err := s.WriteExplore(rows); err != nil {
		return nil, err
	}
	if rc != nil {
		e.seedDiscoveries(s, rc)
	}
	return s, e.aggregate(s, nil, "explored from the repository map; plan it with an agent: planex --continue "+s.Meta.ID+" --agent …")
}

// PresetAngles picks the design's preset angles for a requirement when no
// model classifies it: the type guessed from its words, n angles.
func PresetAngles(requirement string, n int) (kind string, angles []string) {
	kind = guessType(requirement)
	p := anglePresets(kind)
	if n > len(p) {
		n = len(p)
	}
	return kind, p[:n]
}

// Continue resumes a session (the newest when id is empty). Continuing a
// session that waits at a gate approves that gate.
func (e *Engine) Continue(ctx context.Context, id string) (*Outcome, error) {
	s, err := session.Open(e.sessions(), id)
	if err != nil {
		return nil, err
	}
	if rec := s.Meta.CommitSigning; rec != "" && e.o.CommitSigning != "" && rec != e.o.CommitSigning {
		return nil, fmt.Errorf("session %s makes its task commits with --commit-signing %s; continue it with --commit-signing %s (or without the flag), not %s",
			s.Meta.ID, rec, rec, e.o.CommitSigning)
	}
	if done := e.finished(s); done != nil {
		return done, nil
	}
	return e.runLocked(ctx, s, modeContinue)
}

// finished is the outcome of a session whose approved plan has run to its
// report: continuing it has nothing left to do (no model call, no second
// review), and says so. Failed tasks are retried with Retry.
func (e *Engine) finished(s *session.Session) *Outcome {
	if s.Meta.Finished.IsZero() || !s.Meta.Approved[session.GateTasks] || !s.Exists(session.TasksFile) {
		return nil
	}
	tasks, err := s.ReadTasks()
	if err != nil {
		return nil
	}
	fmt.Fprintf(e.o.Out, "session %s is finished (%s); nothing left to do. Its report: %s\n",
		s.Meta.ID, s.Meta.Finished.Local().Format("2006-01-02 15:04"), s.File(session.ContextFile))
	return &Outcome{Session: s, Stage: StageDone, Counts: plan.Count(tasks), AlreadyFinished: true}
}

// Approver says who approved a plan, and how, for the approval record.
type Approver struct{ By, How string }

// Approve approves the tasks gate of a session only if its plan still has
// the given hash, then runs it. This is how a pinned plan is executed.
func (e *Engine) Approve(ctx context.Context, id, hash string, who Approver) (*Outcome, error) {
	s, err := e.plans.approvePlan(id, hash, who)
	if err != nil {
		return nil, err
	}
	return e.run(ctx, s, modeApprovedOnly)
}

// Resume continues a session whose plan was approved (with the given hash,
// when not empty) and is unchanged since; it never passes a gate itself.
func (e *Engine) Resume(ctx context.Context, id, hash string) (*Outcome, error) {
	s, _, err := e.plans.openApproved(id, hash)
	if err != nil {
		return nil, err
	}
	return e.run(ctx, s, modeApprovedOnly)
}

// ErrPlanChanged means the plan on disk is not the one being approved.
var ErrPlanChanged = errors.New("the plan changed")

// ErrInvalidPlan matches (errors.Is) every *InvalidPlanError.
var ErrInvalidPlan = errors.New("the plan is not valid")

// InvalidPlanError is a plan (the agent's, a revised one or an imported
// one) that failed plan.Validate. What says which plan and what to do;
// Err lists the problems.
type InvalidPlanError struct {
	What string
	Err  error
}

func (e *InvalidPlanError) Error() string { return e.What + ":\n" + e.Err.Error() }

func (e *InvalidPlanError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalidPlan) true.
func (e *InvalidPlanError) Is(target error) bool { return target == ErrInvalidPlan }

// Replan throws the session's tasks away and plans again with feedback;
// the new plan waits at the tasks gate.
func (e *Engine) Replan(ctx context.Context, id, feedback string) (*Outcome, error) {
	s, err := session.Open(e.sessions(), id)
	if err != nil {
		return nil, err
	}
	if tip, _ := e.repo.ResolveBranch(ctx, s.Meta.Branch); tip != "" && tip != s.Meta.Base {
		return nil, fmt.Errorf("session %s already has commits on %s; start a new plan instead of revising this one", s.Meta.ID, s.Meta.Branch)
	}
	var rc *RepoContext
	if e.o.Mapper != nil {
		if rc, err = e.o.Mapper.Map(ctx, e.repo.Root, s.Meta.Requirement+"\n"+feedback); err != nil {
			e.o.Log.Warn("repository map unavailable", "err", err)
			rc = nil
		}
	}
	delete(s.Meta.Approved, session.GateTasks)
	s.Meta.PlanHash, s.Meta.Approval, s.Meta.WaitingAt = "", nil, ""
	if err := e.plan(ctx, s, rc, feedback); err != nil {
		return nil, err
	}
	return e.run(ctx, s, modeStart)
}

// Retry sets the failed and skipped tasks of a session whose plan was
// approved (with the given hash, when not empty) back to pending and
// continues. It never approves anything: a plan that is not approved, or
// changed since, is refused.
func (e *Engine) Retry(ctx context.Context, id, hash string) (*Outcome, error) {
	s, err := session.Open(e.sessions(), id)
	if err != nil {
		return nil, err
	}
	release, err := e.lock(s)
	if err != nil {
		return nil, err
	}
	defer release()
	if _, err := e.ResetFailed(ctx, s.Meta.ID, hash); err != nil {
		return nil, err
	}
	return e.Resume(ctx, s.Meta.ID, hash)
}

// runMode says which gates a run may pass by itself.
type runMode int

const (
	// modeStart passes gates as the options say (-y, the terminal).
	modeStart runMode = iota
	// modeContinue also approves the gate the session waits at.
	modeContinue
	// modeApprovedOnly passes no gate: the plan must be approved already.
	modeApprovedOnly
)

// run takes a session as far as it can go: the phases before the plan
// (unless it was imported), the tasks gate, execution, review and report.
func (e *Engine) run(ctx context.Context, s *session.Session, mode runMode) (*Outcome, error) {
	if s.Meta.Cancelled {
		return nil, fmt.Errorf("session %s was cancelled; start a new one", s.Meta.ID)
	}
	if mode == modeApprovedOnly && !s.Meta.Approved[session.GateTasks] {
		return nil, fmt.Errorf("session %s: %w", s.Meta.ID, ErrNotApproved)
	}
	out := &Outcome{Session: s}
	g := &gates{e: e, s: s, mode: mode, out: out, approveWaiting: mode == modeContinue && s.Meta.WaitingAt != ""}
	rc := e.repoContext(ctx, s)
	if !s.Meta.Imported {
		if stopAt, stop, err := e.prepare(ctx, s, rc, g); stop {
			return stopAt, err
		}
	}
	ap, stopAt, err := e.approvedPlan(ctx, s, g)
	if ap == nil {
		return stopAt, err
	}
	if err := e.execute(ctx, s, rc, ap); err != nil {
		return e.stopped(out, err)
	}
	tasks, err := e.plans.loadApproved(s, ap)
	if err != nil {
		return nil, err
	}
	e.review(ctx, s, tasks)
	if err := e.aggregate(s, tasks, ""); err != nil {
		return nil, err
	}
	out.Stage = StageDone
	out.Counts = plan.Count(tasks)
	return out, nil
}

// prepare runs the phases before the tasks gate that have not run yet:
// analyze, the angles gate, explore and plan. When the run stops here
// (at the angles gate, on a budget or an error) it says so, with what run
// returns.
func (e *Engine) prepare(ctx context.Context, s *session.Session, rc *RepoContext, g *gates) (*Outcome, bool, error) {
	if !s.Exists(session.ExploreFile) {
		if err := e.analyze(ctx, s, rc); err != nil {
			return nil, true, err
		}
	}
	rows, err := s.ReadExplore()
	if err != nil {
		return nil, true, err
	}
	if ok, err := g.pass(ctx, session.GateAngles, previewAngles(rows), nil); err != nil || !ok {
		return g.out, true, err
	}
	if err := e.explore(ctx, s, rc); err != nil {
		out, err := e.stopped(g.out, err)
		return out, true, err
	}
	if s.Exists(session.TasksFile) {
		return nil, false, nil
	}
	if s.Meta.Approved[session.GateTasks] {
		return nil, true, fmt.Errorf("session %s: %s is missing, but its plan %s was approved; nothing runs without it", s.Meta.ID, s.File(session.TasksFile), plan.ID(s.Meta.PlanHash))
	}
	if err := e.plan(ctx, s, rc, ""); err != nil {
		out, err := e.stopped(g.out, err)
		return out, true, err
	}
	return nil, false, nil
}

// approvedPlan returns the approved plan to run: the one on record (an
// approved plan runs only as approved: a remembered -y or a --continue
// approves nothing that changed since), or tasks.csv once it passes the
// tasks gate. Without one it returns what run returns.
func (e *Engine) approvedPlan(ctx context.Context, s *session.Session, g *gates) (*session.Approval, *Outcome, error) {
	if s.Meta.Approved[session.GateTasks] {
		ap, err := e.plans.approval(s)
		if err != nil {
			return nil, nil, err
		}
		if _, err = e.plans.loadApproved(s, ap); err != nil {
			return nil, nil, err
		}
		return ap, nil, nil
	}
	tasks, err := loadTasks(s)
	if err != nil {
		return nil, nil, err
	}
	if note := workflowsNote(s, tasks); note != "" {
		fmt.Fprintln(e.o.Out, note)
	}
	if note := settingsNote(tasks); note != "" {
		fmt.Fprintln(e.o.Out, note)
	}
	if note := configNote(tasks); note != "" {
		fmt.Fprintln(e.o.Out, note)
	}
	if note := guidanceNote(tasks); note != "" {
		fmt.Fprintln(e.o.Out, note)
	}
	if ok, err := g.pass(ctx, session.GateTasks, previewTasks(s, tasks), tasks); err != nil || !ok {
		return nil, g.out, err
	}
	return s.Meta.Approval, nil, nil
}

// gates passes a run's gates as its mode and the options allow.
type gates struct {
	e              *Engine
	s              *session.Session
	mode           runMode
	out            *Outcome
	approveWaiting bool // --continue approves the gate the session waits at
}

// pass asks for gate g; approving the tasks gate records tasks as the
// approved plan. It reports whether the run may go on.
func (g *gates) pass(ctx context.Context, gate session.Gate, preview string, tasks []plan.Task) (bool, error) {
	if g.s.Meta.Approved[gate] {
		return true, nil
	}
	if g.mode == modeApprovedOnly {
		return false, fmt.Errorf("session %s: the %s gate was not passed: %w", g.s.Meta.ID, gate, ErrNotApproved)
	}
	d, how, err := g.decide(ctx, gate, preview)
	if err != nil {
		return false, err
	}
	return g.apply(gate, d, how, tasks)
}

// decide finds the decision at a gate and says how it was made.
func (g *gates) decide(ctx context.Context, gate session.Gate, preview string) (Decision, string, error) {
	o := g.e.o
	switch {
	case g.approveWaiting && g.s.Meta.WaitingAt == gate:
		return Approve, "--continue at the gate", nil
	case o.Yes:
		return Approve, "-y", nil
	case g.s.Meta.AutoApprove:
		return Approve, "-y (remembered)", nil
	case gate == session.GateAngles && o.AutoAngles:
		return Approve, "", nil
	case o.Gate != nil:
		d, err := o.Gate.Confirm(ctx, gate, g.s, preview)
		return d, "terminal prompt", err
	}
	return Defer, "", nil
}

// apply records a decision in session.json.
func (g *gates) apply(gate session.Gate, d Decision, how string, tasks []plan.Task) (bool, error) {
	m := &g.s.Meta
	switch d {
	case Approve:
		if m.Approved == nil {
			m.Approved = map[session.Gate]bool{}
		}
		m.Approved[gate] = true
		m.WaitingAt = ""
		if gate == session.GateTasks {
			m.Approval = session.NewApproval(tasks, g.e.o.Approver, how, g.e.o.Now())
			m.PlanHash = m.Approval.PlanHash
		}
		return true, g.s.SaveMeta()
	case Cancel:
		m.Cancelled = true
		m.WaitingAt = ""
		g.out.Stage, g.out.Reason = StageCancelled, "cancelled at the "+string(gate)+" gate"
		return false, g.s.SaveMeta()
	default:
		m.WaitingAt = gate
		g.out.Stage, g.out.Gate = StageWaiting, gate
		return false, g.s.SaveMeta()
	}
}

// stopped turns a budget stop into an outcome (with the report written),
// and passes any other error on.
func (e *Engine) stopped(out *Outcome, err error) (*Outcome, error) {
	var be *BudgetError
	if !errors.As(err, &be) {
		return nil, err
	}
	s := out.Session
	out.Stage, out.Reason = StageStopped, be.Error()
	fmt.Fprintf(e.o.Out, "stopped: %s\n", be.Error())
	var tasks []plan.Task
	if s.Exists(session.TasksFile) {
		var rerr error
		if tasks, rerr = s.ReadTasks(); rerr != nil {
			return nil, rerr
		}
	}
	out.Counts = plan.Count(tasks)
	if aerr := e.aggregate(s, tasks, be.Error()); aerr != nil {
		return nil, aerr
	}
	return out, nil
}

// loadTasks reads and validates tasks.csv, writing computed waves back
// when they differ from the file's.
func loadTasks(s *session.Session) ([]plan.Task, error) {
	tasks, err := s.ReadTasks()
	if err != nil {
		return nil, err
	}
	return validTasks(s, tasks)
}

// validTasks validates tasks read from tasks.csv, writing computed waves
// back when they differ from the file's.
func validTasks(s *session.Session, tasks []plan.Task) ([]plan.Task, error) {
	var explore []plan.ExploreRow
	var err error
	if s.Exists(session.ExploreFile) {
		if explore, err = s.ReadExplore(); err != nil {
			return nil, err
		}
	}
	valid, err := plan.Validate(s.File(session.TasksFile), tasks, explore)
	if err != nil {
		return nil, fmt.Errorf("tasks.csv is not a valid plan; fix it and run planex --continue %s:\n%w", s.Meta.ID, err)
	}
	changed := false
	for i := range valid {
		if valid[i].Wave != tasks[i].Wave || valid[i].Status != tasks[i].Status {
			changed = true
		}
	}
	if changed {
		if err := s.WriteTasks(valid); err != nil {
			return nil, err
		}
	}
	return valid, nil
}

func (e *Engine) step(phase agent.Phase) time.Duration { return e.o.Timeouts[phase] }

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
