package action

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/gitrepo"
)

// The Action is split by concern into small parts that share one env:
//
//	intake   action.go               an event to a flow: comments, labels, dispatches, schedules
//	plans    plan.go, followup.go    plan, revise, cancel, status, follow-ups
//	runs     run.go                  approve, retry, running a plan in this job, publishing it, finalize
//	matrix   matrix.go               matrix mode: prepare a wave, run a task, collect a wave
//	ci       cifix.go                fixing failed CI on planex's pull requests
//	reviews  review.go               reviews of pull requests, /planex fix, answers to review threads
//	gate     approval.go, race.go    whether an approval holds, on GitHub and in the session
//	engines  engines.go, owner.go    engines for a flow, the run's owner and heartbeat
//	store    state.go, stateread.go  the thread's record (state ref) and session reads
//	talk     talk.go, race.go        replies, reactions, labels, the status comment, failures
//
// Each part names the parts it uses as fields, so a reader sees what a
// flow depends on. Flows return the outputs they determined (outputs.go);
// Runner.step writes them.

// env is what every part of one run shares: the configuration, GitHub,
// the checkout, the engine options, where output and logs go, the clock,
// and what this run has asked GitHub once already.
type env struct {
	Cfg    *Config
	GH     GitHub
	Repo   *gitrepo.Repo
	Engine engine.Options
	Out    io.Writer
	Log    *slog.Logger
	Now    func() time.Time
	// AgentErr is why no agent could be configured; flows that need one
	// report it to the user.
	AgentErr error
	// self is the account planex acts as (self.go): only what it wrote
	// is planex's own.
	self *identity

	// runMu serialises saving the record between a running engine's
	// progress callback and the heartbeat; stopRun (under runMu) cancels
	// that run when another run has taken its plan over.
	runMu   sync.Mutex
	stopRun context.CancelCauseFunc
	// approverAsked and approverConfirmed (under runMu) are when the run
	// in this job last asked GitHub for its approver's access, and last
	// heard that it holds (recheckApprover, confirmApprover).
	approverAsked, approverConfirmed time.Time

	// What this run knows from GitHub already, so it asks only once: the
	// default branch, and what each status comment shows (see
	// updateStatus).
	defaultBranchName string
	shownStatus       map[int64]string
	// permissions are the permissions read in this run, by login: one
	// event is judged on one answer per person, heard within
	// Config.AccessRecheck.
	permissions map[string]heardPermission
}

// The parts of the Action (see above).
type (
	talker struct {
		*env
		store *stateStore
	}
	stateStore struct{ *env }
	engines    struct {
		*env
		store *stateStore
		talk  *talker
	}
	gate struct {
		*env
		engines *engines
		plans   *planner
		store   *stateStore
		talk    *talker
	}
	intake struct {
		*env
		ci      *ciFixer
		plans   *planner
		reviews *reviewer
		runs    *executor
		store   *stateStore
		talk    *talker
	}
	planner struct {
		*env
		engines *engines
		runs    *executor
		store   *stateStore
		talk    *talker
	}
	executor struct {
		*env
		ci      *ciFixer
		engines *engines
		gate    *gate
		matrix  *matrixFlow
		reviews *reviewer
		store   *stateStore
		talk    *talker
	}
	matrixFlow struct {
		*env
		engines *engines
		gate    *gate
		runs    *executor
		store   *stateStore
		talk    *talker
	}
	ciFixer struct {
		*env
		plans *planner
		store *stateStore
		talk  *talker
	}
	reviewer struct {
		*env
		plans *planner
		talk  *talker
	}
)

// flowSet is every part of one run, wired to one env.
type flowSet struct {
	intake  *intake
	plans   *planner
	runs    *executor
	matrix  *matrixFlow
	ci      *ciFixer
	reviews *reviewer
	gate    *gate
	engines *engines
	store   *stateStore
	talk    *talker
}

// newFlowSet wires the parts of a run around e.
func newFlowSet(e *env) *flowSet {
	f := &flowSet{store: &stateStore{env: e}}
	f.talk = &talker{env: e, store: f.store}
	f.engines = &engines{env: e, store: f.store, talk: f.talk}
	f.plans = &planner{env: e, engines: f.engines, store: f.store, talk: f.talk}
	f.gate = &gate{env: e, engines: f.engines, plans: f.plans, store: f.store, talk: f.talk}
	f.reviews = &reviewer{env: e, plans: f.plans, talk: f.talk}
	f.ci = &ciFixer{env: e, plans: f.plans, store: f.store, talk: f.talk}
	f.runs = &executor{env: e, ci: f.ci, engines: f.engines, gate: f.gate, reviews: f.reviews, store: f.store, talk: f.talk}
	f.matrix = &matrixFlow{env: e, engines: f.engines, gate: f.gate, runs: f.runs, store: f.store, talk: f.talk}
	f.runs.matrix, f.plans.runs = f.matrix, f.runs
	f.intake = &intake{env: e, ci: f.ci, plans: f.plans, reviews: f.reviews, runs: f.runs, store: f.store, talk: f.talk}
	return f
}

// requestKey names the event a thread's request came from: its comment,
// or the workflow run (a label, a dispatch, a schedule; a re-run keeps
// the run's id).
func (r *env) requestKey(th thread) string {
	if c := th.Comment; c != nil && c.ID != 0 {
		return fmt.Sprintf("%s:%d", c.Kind, c.ID)
	}
	if r.Cfg.RunID != "" {
		return "run:" + r.Cfg.RunID
	}
	return ""
}

// phase tells the engine's phase hook (log groups in the Action) that
// planex's own work on GitHub begins.
func (r *env) phase(name string) {
	if r.Engine.Phase != nil {
		r.Engine.Phase(name)
	}
}
