package action

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/authz"
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
			if err := r.recheckApprover(ctx, rec); err != nil {
				if r.stopRun != nil {
					r.stopRun(err)
				}
				return
			}
			if progressNeedsStatus(tasks) {
				r.talk.updateStatus(ctx, rec, tasks, "")
			}
		}
	}
	return engine.New(repo, o)
}

// DefaultAccessRecheck is Config.AccessRecheck's default: a minute,
// so a plan of many quick tasks asks GitHub little, and an approver who
// loses access sees at most a minute's more run (or a heartbeat's, while
// one long task works).
const DefaultAccessRecheck = time.Minute

// errApprovalLapsed is the cause of a run's cancellation when its
// approver lost, while it ran, the access that let them approve.
var errApprovalLapsed = errors.New("the plan's approver can no longer approve plans")

// errApproverUnknown is why a run's result is not published when GitHub
// could not say whether its approver may still approve plans.
var errApproverUnknown = errors.New("the plan's approver's access could not be read again")

// startApproverWatch notes that rec's approval (its approver's access
// among it) was checked as the run in this job began.
func (r *engines) startApproverWatch() {
	r.runMu.Lock()
	defer r.runMu.Unlock()
	r.approverAsked, r.approverConfirmed = r.Now(), r.Now()
}

// recheckApprover reads rec's approver's access again once
// Config.AccessRecheck has passed since it was last asked, while the run
// works (after a task lands, at a heartbeat): errApprovalLapsed when it
// no longer holds. A failure to ask is logged and the run goes on: its
// tasks were approved, the next check asks again, and nothing is
// published before confirmApprover has heard the access holds. Called
// with runMu held.
func (r *engines) recheckApprover(ctx context.Context, rec *Record) error {
	now := r.Now()
	if now.Sub(r.approverAsked) < r.Cfg.AccessRecheck {
		return nil
	}
	r.approverAsked = now
	lapsed, err := r.approvalLapsed(ctx, rec)
	if err != nil {
		r.Log.Warn("reading the approver's access again", "approver", rec.ApprovedBy, "err", err)
		return nil
	}
	if lapsed {
		return errApprovalLapsed
	}
	r.approverConfirmed = now
	return nil
}

// confirmApprover is the check before a run's result is published:
// unless GitHub said within Config.AccessRecheck that rec's approver may
// still approve plans, it is asked once more, and a failure to find out
// is errApproverUnknown (the pull request waits, the work stays on the
// branch), a lapse errApprovalLapsed.
func (r *engines) confirmApprover(ctx context.Context, rec *Record) error {
	r.runMu.Lock()
	defer r.runMu.Unlock()
	now := r.Now()
	if now.Sub(r.approverConfirmed) < r.Cfg.AccessRecheck {
		return nil
	}
	r.approverAsked = now
	lapsed, err := r.approvalLapsed(ctx, rec)
	if err != nil {
		return fmt.Errorf("%w: %w", errApproverUnknown, err)
	}
	if lapsed {
		return errApprovalLapsed
	}
	r.approverConfirmed = now
	return nil
}

// approvalLapsed says whether rec's approver has lost the access to
// approve since the run began, read afresh from GitHub (not this job's
// remembered answers), as a retry or a matrix job would read it before
// its own tasks; err when GitHub could not say. An approval in planex's
// own name (a CI fix by the setting) names no person to ask about.
func (r *engines) approvalLapsed(ctx context.Context, rec *Record) (bool, error) {
	if (rec.ApprovedVia == viaAutoApprove || rec.ApprovedVia == viaCIFix) && r.self.vouched(rec.ApprovedBy) {
		return false, nil
	}
	if r.GH.Access == nil {
		return false, nil
	}
	dec, err := r.policy().Check(ctx, r.GH.Access, r.Cfg.Owner, r.Cfg.Repo, rec.ApprovedBy, "User", authz.Approve)
	if err != nil {
		return false, err
	}
	return !dec.Allowed, nil
}

// watchApprover reads rec's approver's access again at every
// Config.HeartbeatInterval once Config.AccessRecheck has passed, for a
// matrix task job, which has no heartbeat of its own and whose one task
// may work for an hour, and cancels the task with errApprovalLapsed when
// it lapsed. stop ends the watch.
func (r *engines) watchApprover(ctx context.Context, cancel context.CancelCauseFunc, rec *Record) (stop func()) {
	r.startApproverWatch()
	return r.everyBeat(ctx, func() bool {
		r.runMu.Lock()
		err := r.recheckApprover(ctx, rec)
		r.runMu.Unlock()
		if err != nil {
			cancel(err)
			return false
		}
		return true
	})
}

// everyBeat calls beat every Config.HeartbeatInterval until it returns
// false, ctx ends or stop is called; stop waits for a beat under way.
func (r *engines) everyBeat(ctx context.Context, beat func() bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(r.Cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !beat() {
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
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
