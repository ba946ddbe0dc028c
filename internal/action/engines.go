package action

import (
	"context"
	"errors"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/session"
)

// The engines part: the engine a flow runs, with the Action's settings,
// the run's reviewer and, for a run in this job, a progress callback that
// publishes each task as it lands.

// newEngine makes an engine for one flow.
func (r *engines) newEngine(repo *gitrepo.Repo, yes bool, concurrency int, rec *Record) (*engine.Engine, error) {
	if r.AgentErr != nil {
		return nil, userf("planex has no working agent configured: %v", r.AgentErr)
	}
	o := r.Engine
	o.AutoAngles = true
	o.Yes = yes
	o.Concurrency = r.Cfg.Concurrency
	if concurrency > 0 {
		o.Concurrency = concurrency
	}
	if r.Cfg.MaxCostUSD > 0 {
		o.Budget.MaxCostUSD = r.Cfg.MaxCostUSD
	}
	o.Out = r.Out
	o.Log = r.Log
	r.addReviewer(&o, repo)
	// A CI fix nobody reviewed runs the workflow file's command (or
	// nothing), never one the repository map picked (withCIDirectives).
	o.ApprovedDirectivesOnly = rec != nil && rec.CIFix != nil && rec.ApprovedVia != viaComment
	if rec != nil {
		// After every task: publish the commit, the state, the progress.
		o.Progress = func(ctx context.Context, s *session.Session, tasks []plan.Task) {
			r.runMu.Lock()
			defer r.runMu.Unlock()
			// The state with the branch: its lease says whether this run
			// still owns the plan, and the branch moves only if it does.
			stateErr, branchErr := r.store.saveWithBranch(ctx, rec)
			if errors.Is(stateErr, errStateMoved) {
				if r.stopRun != nil {
					r.stopRun(errTakenOver)
				}
				return
			} else if stateErr != nil {
				// Logged, and not lost: the next save (the next task, the
				// heartbeat) writes the same record again, and the run's end
				// saves it or reports that it could not.
				r.Log.Warn("saving state", "err", stateErr)
			}
			if branchErr != nil {
				r.Log.Warn("pushing run branch", "err", branchErr)
			}
			if progressNeedsStatus(tasks) {
				r.talk.updateStatus(ctx, rec, tasks, "")
			}
		}
	}
	return engine.New(repo, o)
}

// addReviewer lets the engine review a run's changes when reviews are on.
func (r *engines) addReviewer(o *engine.Options, repo *gitrepo.Repo) {
	if r.reviewing() {
		o.Reviewer = &review.Reviewer{Agent: o.Agent, Repo: repo, Timeout: o.Timeouts[agent.PhaseReview], Out: r.Out, Log: r.Log}
	}
}

// bareEngine is an engine for steps that run no agent (prepare, collect).
func (r *engines) bareEngine(repo *gitrepo.Repo) (*engine.Engine, error) {
	o := r.Engine
	o.Out, o.Log, o.Progress = r.Out, r.Log, nil
	o.AutoAngles = true
	o.Concurrency = r.Cfg.Concurrency
	if r.Cfg.MaxCostUSD > 0 {
		o.Budget.MaxCostUSD = r.Cfg.MaxCostUSD
	}
	r.addReviewer(&o, repo)
	return engine.New(repo, o)
}
