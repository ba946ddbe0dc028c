package action

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/scope"
	"github.com/planexhq/planex/internal/session"
)

// planRequest describes a plan to make in a thread.
type planRequest struct {
	Requirement string
	Issue       int
	Yes         bool
	Concurrency int
	RequestedBy string
	// Follow-ups on a pull request planex opened:
	FollowUp  bool
	Branch    string
	Base      string
	SessionID string
	Repo      *gitrepo.Repo
	// Cites are review findings the follow-up answers; ReplyTo is the
	// review comment that asked for it (0: none).
	Cites   []citation
	ReplyTo int64
	// CIFix is the CI failure a CI-fix plan answers.
	CIFix *CIFailure
}

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
			// The state first: its lease says whether this run still owns
			// the plan.
			if err := r.store.saveRecord(ctx, rec); errors.Is(err, errStateMoved) {
				if r.stopRun != nil {
					r.stopRun(errTakenOver)
				}
				return
			} else if err != nil {
				// Logged, and not lost: the next save (the next task, the
				// heartbeat) writes the same record again, and the run's end
				// saves it or reports that it could not.
				r.Log.Warn("saving state", "err", err)
			}
			if err := r.store.pushBranch(ctx, rec); err != nil {
				r.Log.Warn("pushing run branch", "err", err)
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

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(slugRe.ReplaceAllString(strings.ToLower(abbrev.Truncate(abbrev.FirstLine(s), 80)), "-"), "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	if s == "" {
		s = "plan"
	}
	return s
}

// baseCommit resolves the base branch and its current commit.
func (r *planner) baseCommit(ctx context.Context) (branch, sha string, err error) {
	branch = r.Cfg.BaseBranch
	if branch == "" {
		if branch, err = r.defaultBranch(ctx); err != nil {
			return "", "", err
		}
	}
	sha, err = r.Repo.RemoteRef(ctx, r.Cfg.Remote, "refs/heads/"+branch)
	if err != nil {
		return "", "", err
	}
	if sha == "" {
		return "", "", userf("the base branch %s does not exist", render.Code(branch))
	}
	if err := r.Repo.EnsureCommit(ctx, r.Cfg.Remote, sha); err != nil {
		return "", "", err
	}
	return branch, sha, nil
}

// plan explores and plans, posts the plan comment, and (when approval is
// automatic) goes straight on to execute it.
func (r *planner) plan(ctx context.Context, th thread, pr planRequest) (Outputs, error) {
	old, found, err := r.store.loadRecord(ctx, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	key := r.requestKey(th)
	if found && key != "" && old.RequestKey == key {
		return r.redelivered(ctx, th, old, pr)
	}
	rec, err := r.newPlanRecord(th, pr, key, old, found)
	if err != nil {
		return Outputs{}, err
	}
	if err := r.placePlan(ctx, rec, pr); err != nil {
		return Outputs{}, err
	}
	tasks, err := r.makePlan(ctx, th, rec, pr)
	if err != nil {
		return Outputs{}, err
	}
	hash := plan.Hash(tasks)
	rec.PlanID, rec.PlanHash = plan.ID(hash), hash
	rec.Answers = answersFor(tasks, pr.Cites, pr.ReplyTo)
	// Saved before the plan comment is posted: the same event, redelivered
	// or re-run after this job died, then finds the plan and posts its
	// comment instead of planning again.
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			return r.talk.lostRace(ctx, th, "request")
		}
		return Outputs{}, err
	}
	return r.postPlan(ctx, th, rec, pr)
}

// newPlanRecord is the record of a new plan on the thread; old (when
// found) is the thread's previous one, whose plan the new one supersedes
// and whose comments and CI-fix count carry over. A running plan is not
// replaced.
func (r *planner) newPlanRecord(th thread, pr planRequest, key string, old *Record, found bool) (*Record, error) {
	rec := &Record{Thread: th.Number, Issue: pr.Issue, State: StatePlanned, RequestedBy: pr.RequestedBy, FollowUp: pr.FollowUp,
		RequestKey: key, repo: r.Repo, fresh: !found}
	if found {
		switch old.State {
		case StateRunning:
			return nil, refusef("plan `%s` is running; a new plan can start when it has finished", old.PlanID)
		case StatePlanned:
			rec.Superseded = append(old.Superseded, old.PlanID)
		default:
			rec.Superseded = old.Superseded
		}
		rec.StatusCommentID = old.StatusCommentID
		rec.remote = old.remote
		rec.CIFixRuns, rec.CIStopNoted = old.CIFixRuns, old.CIStopNoted
	}
	rec.CIFix = pr.CIFix
	return rec, nil
}

// placePlan sets where the plan runs: a follow-up on the pull request's
// branch, else a new branch and session from the base branch's head.
func (r *planner) placePlan(ctx context.Context, rec *Record, pr planRequest) error {
	if pr.FollowUp {
		rec.Branch, rec.Base, rec.SessionID, rec.repo = pr.Branch, pr.Base, pr.SessionID, pr.Repo
		rec.BaseBranch = pr.Branch
		return nil
	}
	var err error
	if rec.BaseBranch, rec.Base, err = r.baseCommit(ctx); err != nil {
		return err
	}
	if rec.SessionID, err = r.freeSessionID(ctx, fmt.Sprintf("%d-%s", pr.Issue, slug(pr.Requirement))); err != nil {
		return err
	}
	rec.Branch = "planex/" + rec.SessionID
	return nil
}

// makePlan explores and plans in rec's session and returns the tasks in
// waves, with a CI fix's failing command added to them.
func (r *planner) makePlan(ctx context.Context, th thread, rec *Record, pr planRequest) ([]plan.Task, error) {
	eng, err := r.engines.newEngine(rec.repo, false, pr.Concurrency, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(r.Out, "planning #%d as session %s\n", th.Number, rec.SessionID)
	out, err := eng.Start(ctx, engine.Request{Requirement: pr.Requirement, SessionID: rec.SessionID, Branch: rec.Branch, Base: rec.Base})
	if err != nil {
		if plan.IsProblems(err) || errors.Is(err, engine.ErrInvalidPlan) {
			return nil, userf("planex could not make a valid plan:\n\n%s", render.CodeBlock("", err.Error()))
		}
		return nil, fmt.Errorf("planning: %w", err)
	}
	s := out.Session
	if out.Stage == engine.StageStopped {
		return nil, userf("planning stopped: %s", render.Text(out.Reason))
	}
	tasks, err := s.ReadTasks()
	if err != nil {
		return nil, err
	}
	if tasks, err = plan.AssignWaves(tasks); err != nil {
		return nil, err
	}
	if t, changed := withCIDirectives(tasks, pr.CIFix, pr.Yes); changed {
		// Before the hash: the approved plan is the one that runs them.
		if err := s.WriteTasks(t); err != nil {
			return nil, fmt.Errorf("adding the failing command to the fix tasks: %w", err)
		}
		tasks = t
	}
	return tasks, nil
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

// redelivered handles an event that already asked for old's plan: it
// never plans again. It finishes what the job that handled it first may
// have left undone: the plan comment, an automatic approval, a run whose
// owner died.
func (r *planner) redelivered(ctx context.Context, th thread, old *Record, pr planRequest) (Outputs, error) {
	fmt.Fprintf(r.Out, "this event already asked for plan %s (%s); not planning again\n", old.PlanID, old.State)
	o := planOutputs(old, recordStatus(old.State))
	switch {
	case old.State == StatePlanned && old.PlanCommentID == 0:
		return r.postPlan(ctx, th, old, pr)
	case old.State == StatePlanned && (pr.Yes || r.Cfg.AutoApprove):
		next, err := r.autoApprove(ctx, th, old, pr)
		return o.with(next), err
	case old.State == StateRunning:
		if gone, _ := r.engines.checkOwner(ctx, old); gone {
			next, err := r.runs.retry(ctx, th, pr.RequestedBy)
			return o.with(next), err
		}
	}
	return o, nil
}

// postPlan posts rec's plan comment, or adopts the one an earlier attempt
// posted, labels the thread, and runs the plan when approval is
// automatic.
func (r *planner) postPlan(ctx context.Context, th thread, rec *Record, pr planRequest) (Outputs, error) {
	s, tasks, err := r.postedPlan(rec)
	if err != nil {
		return Outputs{}, err
	}
	body, truncated := r.planCommentBody(rec, s, tasks)
	var id int64
	if !rec.fresh {
		if id, err = r.findPlanComment(ctx, rec); err != nil {
			return Outputs{}, err
		}
	}
	posted := id == 0
	if posted {
		c, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number, body)
		if err != nil {
			return Outputs{}, fmt.Errorf("posting the plan: %w", err)
		}
		id = c.GetID()
	}
	rec.PlanCommentID, rec.PlanBodyHash = id, bodyHash(body)
	// The state first: a run that lost it takes its comment back and
	// leaves the thread to the winner.
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			if posted {
				r.talk.unpost(ctx, id)
			}
			return r.talk.lostRace(ctx, th, "request")
		}
		return Outputs{}, err
	}
	note := fmt.Sprintf("Waiting for approval: `%s approve %s`", r.Cfg.Trigger, rec.PlanID)
	r.talk.updateStatus(ctx, rec, tasks, note)
	r.talk.setLabel(ctx, th.Number, LabelPlanned)
	// Saves the status comment's id. A state moved since is another run
	// acting on the posted plan (an approval, a cancel): the plan is out,
	// and that run owns what follows; an automatic approval below then
	// loses the state and says so.
	if err := r.store.saveRecord(ctx, rec); err != nil && !errors.Is(err, errStateMoved) {
		return Outputs{}, err
	}
	o := planOutputs(rec, StatusPlanned)
	o.Summary = r.planSummary(s, body, truncated)
	fmt.Fprintf(r.Out, "posted plan %s on #%d\n", rec.PlanID, th.Number)
	if pr.Yes || r.Cfg.AutoApprove {
		next, err := r.autoApprove(ctx, th, rec, pr)
		return o.with(next), err
	}
	return o, nil
}

// postedPlan reads rec's session and its tasks in waves, and checks that
// they are still the plan rec names.
func (r *planner) postedPlan(rec *Record) (*session.Session, []plan.Task, error) {
	s, err := r.store.session(rec)
	if err != nil {
		return nil, nil, err
	}
	tasks, err := s.ReadTasks()
	if err != nil {
		return nil, nil, err
	}
	if tasks, err = plan.AssignWaves(tasks); err != nil {
		return nil, nil, err
	}
	if plan.Hash(tasks) != rec.PlanHash {
		return nil, nil, fmt.Errorf("session %s no longer holds plan %s", rec.SessionID, rec.PlanID)
	}
	return s, tasks, nil
}

// findPlanComment returns the id of planex's comment for exactly rec's
// plan on the thread, or 0.
func (r *planner) findPlanComment(ctx context.Context, rec *Record) (int64, error) {
	cs, err := r.GH.Thread.ListComments(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, time.Time{})
	if err != nil {
		return 0, fmt.Errorf("looking for the plan comment: %w", err)
	}
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		m, ok := render.ParsePlanMarker(c.GetBody())
		if ok && m.ID == rec.PlanID && m.SHA256 == rec.PlanHash && m.Session == rec.SessionID && event.IsBot(c.GetUser().GetLogin(), c.GetUser().GetType()) {
			return c.GetID(), nil
		}
	}
	return 0, nil
}

// planCommentBody is the plan comment of rec's plan, as planex posts it
// (and whether the plan was too large for it).
func (r *planner) planCommentBody(rec *Record, s *session.Session, tasks []plan.Task) (string, bool) {
	// An unreadable exploration is logged (shownExplore) and the comment
	// shows the tasks without it. Its note stays out of the comment: the
	// comment's text is what an approval is checked against (bodyHash),
	// and must come out the same when it is made again (repostPlan).
	explore, _ := r.store.shownExplore(s)
	body, truncated := render.PlanComment(render.PlanView{
		Summary: s.Meta.Summary, Approach: s.Meta.Approach, Type: s.Meta.Type, Complexity: s.Meta.Complexity,
		Explore: explore, Tasks: tasks, Session: s.Meta.ID, Base: rec.Base, Estimate: estimate(s, tasks),
		Trigger: r.Cfg.Trigger, StateRef: stateRef(rec.Thread),
	})
	return body + ciSection(rec.CIFix, render.MaxCommentBytes-len(body)), truncated
}

// autoApprove runs a plan approved with its request (-y) or by the
// auto-approve setting.
func (r *planner) autoApprove(ctx context.Context, th thread, rec *Record, pr planRequest) (Outputs, error) {
	a := approval{By: pr.RequestedBy, Via: viaAutoApprove}
	if pr.Yes {
		a.Via, a.Comment = viaYes, th.Comment
		if th.Comment == nil {
			a.Via = viaDispatch
		}
	}
	if pr.Yes && th.Comment == nil && rec.CIFix != nil {
		a.Via = viaCIFix
	}
	if a.By == "" {
		a.By = "auto-approve"
	}
	return r.runs.execute(ctx, th, rec, a, pr.Concurrency)
}

// freeSessionID picks a session id whose run branch and state are unused.
func (r *planner) freeSessionID(ctx context.Context, id string) (string, error) {
	refs, err := r.Repo.ListRemoteRefs(ctx, r.Cfg.Remote, "refs/heads/planex/*")
	if err != nil {
		return "", err
	}
	cand := id
	for n := 2; refs["refs/heads/planex/"+cand] != ""; n++ {
		cand = fmt.Sprintf("%s-%d", id, n)
	}
	return cand, nil
}

// planSummary is the job summary of a posted plan: its comment, or its
// whole report when the comment had to leave part of it out.
func (r *planner) planSummary(s *session.Session, body string, truncated bool) string {
	if !truncated {
		return body
	}
	return "The plan was too large for one comment; here it is in full.\n\n" + r.store.reportText(s)
}

// estimate prices the rest of the run from what exploration cost so far.
func estimate(s *session.Session, tasks []plan.Task) string {
	spent := engine.Spent(s, tasks)
	if spent.CostUSD == 0 {
		return ""
	}
	var steps int
	for range s.Meta.Usage {
		steps++
	}
	per := spent.CostUSD / float64(max(steps, 1))
	return fmt.Sprintf("about %s for the %s (from %s spent on %s so far)", render.Dollars(per*float64(len(tasks))), plural.Count(len(tasks), "task", "tasks"),
		render.Dollars(spent.CostUSD), plural.Count(steps, "planning step", "planning steps"))
}

// approve runs the plan with planID, but only that exact plan.
func (r *executor) approve(ctx context.Context, th thread, planID, approver string, concurrency int) (Outputs, error) {
	rec, found, err := r.store.loadRecord(ctx, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	var o Outputs
	refuse := func(format string, args ...any) (Outputs, error) {
		r.talk.react(ctx, th, gh.ReactionRefused)
		o.Status = StatusRefused
		return o, r.talk.reply(ctx, th, fmt.Sprintf(format, args...))
	}
	if !found {
		return refuse("There is no plan to approve here. Start one with `%s <requirement>`.", r.Cfg.Trigger)
	}
	o = planOutputs(rec, "")
	if planID != rec.PlanID {
		if slices.Contains(rec.Superseded, planID) {
			return refuse("Plan `%s` was replaced by plan `%s` after a revision, so it cannot run. To run the current plan: `%s approve %s`", planID, rec.PlanID, r.Cfg.Trigger, rec.PlanID)
		}
		return refuse("There is no plan `%s` here; the current plan is `%s`.", planID, rec.PlanID)
	}
	switch rec.State {
	case StateRunning, StateDone, StateFailed:
		if next, handled, err := r.approveAgain(ctx, th, rec, approver); handled || err != nil {
			return o.with(next), err
		}
	case StateCancelled:
		return refuse("Plan `%s` was cancelled. Start a new one with `%s <requirement>`.", rec.PlanID, r.Cfg.Trigger)
	}
	reason, seen, err := r.gate.approvable(ctx, th, rec)
	if err != nil {
		return o, err
	} else if reason != "" {
		return refuse("%s", reason)
	}
	// The approval is acknowledged (🚀) by execute, once it has won the
	// plan's state.
	next, err := r.execute(ctx, th, rec, approval{By: approver, Via: viaComment, Comment: th.Comment, seen: seen}, concurrency)
	return o.with(next), err
}

// approveAgain handles an approval of a plan that already ran (or runs):
// a run whose owner died is taken over, a failed plan whose approval does
// not hold takes this one as its first (handled false: go on approving),
// and anything else is told the plan runs only once.
func (r *executor) approveAgain(ctx context.Context, th thread, rec *Record, approver string) (Outputs, bool, error) {
	if rec.State == StateRunning {
		if gone, _ := r.engines.checkOwner(ctx, rec); gone {
			// The run that had it died: this approval takes it over, as a
			// retry would.
			o, err := r.retry(ctx, th, approver)
			return o, true, err
		}
	}
	if rec.State == StateFailed {
		if verr := r.gate.approvedBefore(ctx, rec); verr != nil {
			if !isRefusal(verr) {
				return Outputs{}, true, verr
			}
			return Outputs{}, false, nil
		}
	}
	// A repeated or redelivered approval: the plan already ran once.
	return Outputs{Status: recordStatus(rec.State)}, true, r.talk.reply(ctx, th, fmt.Sprintf("Plan `%s` was already approved by @%s and is %s; it runs only once. Use `%s retry` to re-run failed tasks.", rec.PlanID, rec.ApprovedBy, rec.State, r.Cfg.Trigger))
}

// approvable says why rec's plan cannot run now ("" when it can): its
// comment must still be planex's for exactly this plan, the base must not
// have moved under its scopes, and the session must still be the plan.
func (r *gate) approvable(ctx context.Context, th thread, rec *Record) (string, []*github.IssueComment, error) {
	cs, err := r.GH.Approvals.ListComments(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, time.Time{})
	if err != nil {
		return "", nil, fmt.Errorf("reading the comments of #%d: %w", rec.Thread, err)
	}
	i := slices.IndexFunc(cs, func(c *github.IssueComment) bool { return c.GetID() == rec.PlanCommentID })
	if i < 0 {
		return fmt.Sprintf("The comment of plan `%s` was deleted, so nobody can read what would run. Re-plan with `%s revise <feedback>`, or start a new plan with `%s <requirement>`.",
			rec.PlanID, r.Cfg.Trigger, r.Cfg.Trigger), nil, nil
	}
	c := cs[i]
	m, ok := render.ParsePlanMarker(c.GetBody())
	if !ok || m.ID != rec.PlanID || m.SHA256 != rec.PlanHash || !event.IsBot(c.GetUser().GetLogin(), c.GetUser().GetType()) {
		return fmt.Sprintf("The plan comment no longer matches plan `%s`; re-plan with `%s revise <feedback>`.", rec.PlanID, r.Cfg.Trigger), nil, nil
	}
	// planex never edits its plan comment: one edited and changed back
	// (its hash matches again) may still have been read as edited, and
	// so may one whose hash a record of an older planex does not hold.
	edited := c.GetUpdatedAt().After(c.GetCreatedAt().Time)
	if edited || (rec.PlanBodyHash != "" && bodyHash(c.GetBody()) != rec.PlanBodyHash) {
		reason, err := r.repostPlan(ctx, th, rec, c.GetBody())
		return reason, nil, err
	}
	reason, err := r.baseMoved(ctx, rec)
	if err == nil && reason == "" {
		reason, err = r.planUnchanged(ctx, rec)
	}
	if err != nil || reason == "" {
		return "", cs, err
	}
	return fmt.Sprintf("Plan `%s` cannot run: %s. Re-plan with `%s revise <feedback>`.", rec.PlanID, reason, r.Cfg.Trigger), nil, nil
}

// approvedBefore checks that rec's plan was approved, that the approval
// holds on GitHub, and that the session is still that plan.
func (r *gate) approvedBefore(ctx context.Context, rec *Record) error {
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return err
	}
	return r.verifyRun(ctx, rec, eng)
}

// baseMoved says why a plan no longer fits its base, or "" when it does:
// it does not fit when commits since the plan was made touched files in
// the scope of one of its tasks.
func (r *gate) baseMoved(ctx context.Context, rec *Record) (string, error) {
	head, err := r.Repo.RemoteRef(ctx, r.Cfg.Remote, "refs/heads/"+rec.BaseBranch)
	if err != nil {
		return "", err
	}
	if rec.FollowUp {
		// The pull request branch itself: our own commits are expected.
		return "", nil
	}
	if head == "" {
		return fmt.Sprintf("the base branch `%s` no longer exists", rec.BaseBranch), nil
	}
	if head == rec.Base {
		return "", nil
	}
	if err := r.Repo.EnsureCommit(ctx, r.Cfg.Remote, head); err != nil {
		return "", err
	}
	changed, err := r.Repo.ChangedPaths(ctx, rec.Base, head)
	if err != nil {
		return "", err
	}
	tasks, err := r.store.sessionTasks(rec)
	if err != nil {
		return "", err
	}
	var hits []string
	for _, p := range changed {
		for _, t := range tasks {
			if scope.Match(t.Scope, p) {
				hits = append(hits, fmt.Sprintf("`%s` (%s)", p, t.ID))
				break
			}
		}
	}
	if len(hits) == 0 {
		return "", nil
	}
	if len(hits) > 10 {
		hits = append(hits[:10], fmt.Sprintf("and %d more", len(hits)-10))
	}
	return fmt.Sprintf("`%s` moved since the plan was made and changed files in its tasks' scopes: %s", rec.BaseBranch, strings.Join(hits, ", ")), nil
}

func (r *stateStore) session(rec *Record) (*session.Session, error) {
	return session.Open(session.StoreFor(rec.repo.Root, rec.repo.CommonDir), rec.SessionID)
}

func (r *stateStore) sessionTasks(rec *Record) ([]plan.Task, error) {
	s, err := r.session(rec)
	if err != nil {
		return nil, err
	}
	return s.ReadTasks()
}

// execute runs an approved plan and publishes the result.
func (r *executor) execute(ctx context.Context, th thread, rec *Record, a approval, concurrency int) (Outputs, error) {
	if a.Via != viaDispatch {
		// One rule for every path to a run: the approval must hold as
		// /planex retry would judge it (dispatches are checked by
		// dispatchRefused, and cannot be checked again later).
		cand := *rec
		a.record(&cand)
		if err := r.gate.checkApprovalIn(ctx, &cand, a.seen); err != nil {
			if isRefusal(err) {
				r.talk.react(ctx, th, gh.ReactionRefused)
				return Outputs{Status: StatusRefused}, r.talk.reply(ctx, th, r.gate.refuseUnapproved(rec, err).Error())
			}
			return Outputs{}, err
		}
	}
	rec.State, rec.Note = StateRunning, ""
	r.claim(rec)
	a.record(rec)
	noteCIFixRun(rec)
	// The state first (compare-and-swap on the state ref): only the run
	// that moved the plan to running reacts, labels and edits the status.
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			return r.talk.lostRace(ctx, th, "approval")
		}
		return Outputs{}, err
	}
	if a.Via == viaComment {
		r.talk.react(ctx, th, gh.ReactionRocket)
	}
	r.talk.setLabel(ctx, th.Number, LabelRunning)
	tasks, unread := r.store.statusTasks(rec)
	r.talk.updateStatus(ctx, rec, tasks, withNote(fmt.Sprintf("Approved by @%s; running.", a.By), unread))
	if r.Cfg.Mode == ModeMatrix {
		return r.matrix.startMatrix(ctx, th, rec, a)
	}
	return r.runEngine(ctx, th, rec, concurrency, func(ctx context.Context, eng *engine.Engine) (*engine.Outcome, error) {
		if err := eng.ApprovePlan(ctx, rec.SessionID, rec.PlanHash, a.engine(r.Cfg.Trigger)); err != nil {
			return nil, err
		}
		// The approval is in the session now: saved before the first task,
		// a run that dies during it can be taken over and resumed.
		r.runMu.Lock()
		err := r.store.saveRecord(ctx, rec)
		r.runMu.Unlock()
		if errors.Is(err, errStateMoved) {
			r.stopRun(errTakenOver)
			return nil, err
		} else if err != nil {
			// Logged; the first task's progress saves it again, and the
			// run's end saves it or reports that it could not.
			r.Log.Warn("saving state", "err", err)
		}
		return eng.Resume(ctx, rec.SessionID, rec.PlanHash)
	})
}

// runEngine runs rec's approved plan in this job (run is the engine call:
// approve, retry or resume), refreshing the owner's heartbeat while it
// works, and publishes the result. A run whose plan another run took over
// stops and leaves the plan's state, labels and comments to that run.
func (r *executor) runEngine(ctx context.Context, th thread, rec *Record, concurrency int, run func(context.Context, *engine.Engine) (*engine.Outcome, error)) (Outputs, error) {
	eng, err := r.engines.newEngine(rec.repo, false, concurrency, rec)
	if err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.runMu.Lock()
	r.stopRun = cancel
	r.runMu.Unlock()
	stop := r.engines.heartbeat(runCtx, cancel, rec)
	out, err := run(runCtx, eng)
	stop()
	r.runMu.Lock()
	r.stopRun = nil
	r.runMu.Unlock()
	if errors.Is(context.Cause(runCtx), errTakenOver) && ctx.Err() == nil {
		fmt.Fprintf(r.Out, "plan %s was taken over by another run; stopping and leaving it to that run\n", rec.PlanID)
		return planOutputs(rec, StatusSuperseded), nil
	}
	if isRefusal(err) {
		return r.talk.fail(ctx, th, rec, r.gate.refuseUnapproved(rec, err))
	}
	if err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	return r.finish(ctx, th, rec, out)
}

// finish publishes a run: the branch, the pull request, labels, state.
// The plan stays "running" until all of it is out, so a failure on the
// way (a refused push, a rate limit) is reported as the run's failure.
func (r *executor) finish(ctx context.Context, th thread, rec *Record, out *engine.Outcome) (Outputs, error) {
	r.phase("publish")
	s := out.Session
	tasks, err := s.ReadTasks()
	if err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	c := plan.Count(tasks)
	final := StateDone
	if c.Failed+c.Skipped+c.Pending > 0 || out.Stage == engine.StageStopped {
		final = StateFailed
	}
	if err := r.store.pushBranch(ctx, rec); err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	report, unread := r.runReport(s, tasks, out.Reason)
	if c.Completed > 0 {
		if err := r.publishPR(ctx, rec, report); err != nil {
			return r.talk.fail(ctx, th, rec, err)
		}
		r.reviews.postRunReview(ctx, rec, s)
	}
	r.reviews.answerThreads(ctx, rec, tasks)
	rec.State = final
	label := LabelDone
	if rec.State == StateFailed {
		label = LabelFailed
	}
	r.talk.setLabel(ctx, th.Number, label)
	if rec.PRNumber != 0 && rec.PRNumber != th.Number {
		r.talk.setLabel(ctx, rec.PRNumber, label)
	}
	note := fmt.Sprintf("%d of %s completed.", c.Completed, plural.Count(c.Total, "task", "tasks"))
	if c.Completed == 0 {
		note += " No task completed, so no pull request was opened."
	}
	if rec.State == StateFailed {
		note += fmt.Sprintf(" `%s retry` re-runs the failed and skipped tasks.", r.Cfg.Trigger)
	}
	r.talk.updateStatus(ctx, rec, tasks, withNote(note, unread...))
	if err := r.store.saveRecord(ctx, rec); err != nil {
		return Outputs{}, err
	}
	o := planOutputs(rec, recordStatus(rec.State))
	o.PullRequestURL, o.Summary = rec.PRURL, r.store.reportText(s)
	if rec.State == StateFailed {
		o.Failure = runFailure(rec.PlanID, out.Reason, tasks)
	}
	fmt.Fprintf(r.Out, "plan %s %s: %d completed, %d failed, %d skipped\n", rec.PlanID, rec.State, c.Completed, c.Failed, c.Skipped)
	return o, nil
}

// runReport is the report of a finished run, and a sentence for each
// part of the session that could not be read (logged, and shown in the
// status comment; the report goes out without that part).
func (r *executor) runReport(s *session.Session, tasks []plan.Task, stop string) (render.Report, []string) {
	explore, unreadExplore := r.store.shownExplore(s)
	ds, err := session.ReadDiscoveries(s.File(session.DiscoveriesFile), r.Log)
	unreadBoard := ""
	if err != nil {
		unreadBoard = r.unreadable("the discovery board", s.Meta.ID, err)
	}
	report := render.Report{Meta: s.Meta, Explore: explore, Tasks: tasks, Discoveries: ds, Spent: engine.Spent(s, tasks), StopReason: stop}
	return report, []string{unreadExplore, unreadBoard}
}

// runFailure says why a run ended failed: the stop, then each task that
// failed or was skipped.
func runFailure(planID, stop string, tasks []plan.Task) string {
	c := plan.Count(tasks)
	lines := []string{fmt.Sprintf("plan %s failed: %d of %s completed", planID, c.Completed, plural.Count(c.Total, "task", "tasks"))}
	if stop != "" {
		lines[0] += "; " + stop
	}
	sorted := append([]plan.Task(nil), tasks...)
	plan.SortByID(sorted)
	for _, t := range sorted {
		if t.Status == plan.StatusFailed || t.Status == plan.StatusSkipped {
			lines = append(lines, fmt.Sprintf("%s %s: %s", t.ID, t.Status, abbrev.OneLine(t.Error)))
		}
	}
	return strings.Join(lines, "\n")
}

// phase tells the engine's phase hook (log groups in the Action) that
// planex's own work on GitHub begins.
func (r *env) phase(name string) {
	if r.Engine.Phase != nil {
		r.Engine.Phase(name)
	}
}

// pullAPI is what publishing a run needs: its pull request, found by
// branch, opened or brought up to date, and its reviewer asked.
type pullAPI interface {
	GetPR(ctx context.Context, owner, repo string, number int) (*github.PullRequest, error)
	FindPRByHead(ctx context.Context, owner, repo, branch string) (*github.PullRequest, error)
	CreatePR(ctx context.Context, owner, repo string, pr gh.NewPR) (*github.PullRequest, error)
	UpdatePR(ctx context.Context, owner, repo string, number int, u gh.PRUpdate) (*github.PullRequest, error)
	RequestReviewers(ctx context.Context, owner, repo string, number int, logins ...string) error
}

// publishPR opens the run's pull request, or updates the one the branch
// already has. A follow-up reports in a comment and leaves the body.
func (r *executor) publishPR(ctx context.Context, rec *Record, report render.Report) error {
	approver := rec.ApprovedBy
	if approver == "auto-approve" {
		approver = ""
	}
	if rec.FollowUp {
		return r.reportFollowUp(ctx, rec, report, approver)
	}
	body := render.PRBody(render.PRView{Report: report, Issue: rec.Issue, ApprovedBy: approver, NoCI: r.Cfg.DefaultToken})
	// Opening it finds the pull request the branch has already, if any
	// (another job opened it, or the answer to an earlier create was
	// lost); its report is then brought up to date.
	title := "planex: " + abbrev.Truncate(abbrev.FirstLine(report.Meta.Requirement), 80)
	pr, err := r.GH.Pulls.CreatePR(ctx, r.Cfg.Owner, r.Cfg.Repo, gh.NewPR{Title: title, Head: rec.Branch, Base: rec.BaseBranch, Body: body, Draft: r.Cfg.Draft})
	if err != nil {
		return fmt.Errorf("opening the pull request: %w", err)
	}
	opened := pr.GetBody() == body
	if !opened {
		if pr, err = r.GH.Pulls.UpdatePR(ctx, r.Cfg.Owner, r.Cfg.Repo, pr.GetNumber(), gh.PRUpdate{Body: &body}); err != nil {
			return fmt.Errorf("updating pull request #%d: %w", pr.GetNumber(), err)
		}
	}
	rec.PRNumber, rec.PRURL, rec.prOpened = pr.GetNumber(), pr.GetHTMLURL(), opened
	if approver != "" && opened {
		if err := r.GH.Pulls.RequestReviewers(ctx, r.Cfg.Owner, r.Cfg.Repo, pr.GetNumber(), approver); err != nil {
			r.Log.Warn("requesting review", "reviewer", approver, "err", err)
		}
	}
	return nil
}

// reportFollowUp reports a follow-up run in a comment on its pull
// request, whose body stays as it is.
func (r *executor) reportFollowUp(ctx context.Context, rec *Record, report render.Report, approver string) error {
	existing, err := r.GH.Pulls.FindPRByHead(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Branch)
	if err != nil {
		return fmt.Errorf("looking for the pull request of %s: %w", rec.Branch, err)
	}
	if existing != nil {
		rec.PRNumber, rec.PRURL = existing.GetNumber(), existing.GetHTMLURL()
	}
	body := render.PRBody(render.PRView{Report: report, ApprovedBy: approver, NoCI: r.Cfg.DefaultToken})
	heading := "### Follow-up report"
	if rec.CIFix != nil {
		heading = fmt.Sprintf("### CI-fix round %d report", rec.CIFix.Round)
	}
	if _, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, heading+"\n\n"+body); err != nil {
		return fmt.Errorf("posting the follow-up report: %w", err)
	}
	return r.ci.extendPRReport(ctx, rec, report.Tasks)
}

// revise re-plans with feedback; the old plan id stops being approvable.
func (r *planner) revise(ctx context.Context, th thread, feedback string) (Outputs, error) {
	rec, found, err := r.store.loadRecord(ctx, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	if !found || rec.State != StatePlanned {
		return Outputs{}, refusef("There is no plan waiting for approval here to revise; start one with `%s <requirement>`.", r.Cfg.Trigger)
	}
	if strings.TrimSpace(feedback) == "" {
		return Outputs{}, refusef("Say what to change: `%s revise <feedback>`.", r.Cfg.Trigger)
	}
	s, tasks, err := r.replan(ctx, rec, feedback)
	if err != nil {
		return Outputs{}, err
	}
	hash := plan.Hash(tasks)
	if hash != rec.PlanHash {
		rec.Superseded = append(rec.Superseded, rec.PlanID)
	}
	rec.PlanID, rec.PlanHash = plan.ID(hash), hash
	// The revised plan is the thread's state before anyone is asked to
	// approve it: a run that approved or cancelled the old plan first
	// wins, and this one posts nothing.
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			return r.talk.lostRace(ctx, th, "revision")
		}
		return Outputs{}, err
	}
	body, truncated := r.planCommentBody(rec, s, tasks)
	c, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number, body)
	if err != nil {
		return Outputs{}, fmt.Errorf("posting the revised plan: %w", err)
	}
	rec.PlanCommentID, rec.PlanBodyHash = c.GetID(), bodyHash(body)
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			r.talk.unpost(ctx, c.GetID())
			return r.talk.lostRace(ctx, th, "revision")
		}
		return Outputs{}, err
	}
	r.talk.updateStatus(ctx, rec, tasks, fmt.Sprintf("Revised; waiting for approval: `%s approve %s`", r.Cfg.Trigger, rec.PlanID))
	// Saves the status comment's id; a state moved since is another run
	// acting on the revised plan, which is posted and recorded already.
	if err := r.store.saveRecord(ctx, rec); err != nil && !errors.Is(err, errStateMoved) {
		return Outputs{}, err
	}
	o := planOutputs(rec, StatusPlanned)
	o.Summary = r.planSummary(s, body, truncated)
	return o, nil
}

// replan re-plans rec's session with feedback and returns it with the
// revised tasks in waves (a CI fix's failing command added to them).
func (r *planner) replan(ctx context.Context, rec *Record, feedback string) (*session.Session, []plan.Task, error) {
	eng, err := r.engines.newEngine(rec.repo, false, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	out, err := eng.Replan(ctx, rec.SessionID, feedback)
	if err != nil {
		if errors.Is(err, engine.ErrInvalidPlan) {
			return nil, nil, userf("planex could not make a valid revised plan:\n\n%s", render.CodeBlock("", err.Error()))
		}
		return nil, nil, fmt.Errorf("re-planning: %w", err)
	}
	tasks, err := out.Session.ReadTasks()
	if err != nil {
		return nil, nil, err
	}
	if tasks, err = plan.AssignWaves(tasks); err != nil {
		return nil, nil, err
	}
	if t, changed := withCIDirectives(tasks, rec.CIFix, false); changed {
		if err := out.Session.WriteTasks(t); err != nil {
			return nil, nil, fmt.Errorf("adding the failing command to the fix tasks: %w", err)
		}
		tasks = t
	}
	return out.Session, tasks, nil
}

// cancel drops a plan that waits for approval.
func (r *planner) cancel(ctx context.Context, th thread) (Outputs, error) {
	rec, found, err := r.store.loadRecord(ctx, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	if !found || rec.State != StatePlanned {
		state := "no plan"
		if found {
			state = "plan `" + rec.PlanID + "` is " + string(rec.State)
		}
		return Outputs{}, refusef("Nothing to cancel: %s. (A running plan is stopped by cancelling its workflow run.)", state)
	}
	rec.State = StateCancelled
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			return r.talk.lostRace(ctx, th, "cancel")
		}
		return Outputs{}, err
	}
	r.talk.updateStatus(ctx, rec, nil, "Cancelled by @"+th.Actor.Login+".")
	r.talk.setLabel(ctx, th.Number, "")
	return planOutputs(rec, StatusCancelled), r.talk.reply(ctx, th, fmt.Sprintf("Plan `%s` is cancelled.", rec.PlanID))
}

// retry re-runs the failed and skipped tasks of a finished plan, or takes
// over a running plan whose owner is gone (see owner.go) and resumes it
// from its last task commit. It only resumes a plan whose approval still
// holds: the plan comment and the approving command on GitHub, and a
// session that is exactly that plan. Anything else is refused with what
// to do instead, and nothing runs.
func (r *executor) retry(ctx context.Context, th thread, actor string) (Outputs, error) {
	rec, found, err := r.store.loadRecord(ctx, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	takeover := ""
	switch {
	case found && rec.State == StateRunning:
		gone, why := r.engines.checkOwner(ctx, rec)
		if !gone {
			return planOutputs(rec, StatusRunning), r.talk.reply(ctx, th, fmt.Sprintf("Plan `%s` is running in %s (last sign of life: %s). `%s retry` takes it over once that run has ended, or once it has been silent for %s.",
				rec.PlanID, r.engines.ownerText(rec), lastBeat(rec), r.Cfg.Trigger, r.Cfg.StaleAfter))
		}
		takeover = fmt.Sprintf("Taking over from %s: %s.", r.engines.ownerText(rec), why)
	case !found || rec.State != StateFailed:
		return Outputs{}, refusef("Nothing to retry: only a plan that failed (or was interrupted) can be retried.")
	}
	o := planOutputs(rec, "")
	if err := r.gate.approvedBefore(ctx, rec); err != nil {
		if !isRefusal(err) {
			return o, err
		}
		r.talk.react(ctx, th, gh.ReactionRefused)
		o.Status = StatusRefused
		return o, r.talk.reply(ctx, th, r.gate.refuseUnapproved(rec, err).Error())
	}
	rec.State, rec.Note = StateRunning, ""
	r.claim(rec)
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			next, err := r.talk.lostRace(ctx, th, "retry")
			return o.with(next), err
		}
		return o, err
	}
	r.talk.setLabel(ctx, th.Number, LabelRunning)
	note := "Retrying, asked by @" + actor + "."
	if takeover != "" {
		note = takeover + " Resuming from the last task commit, asked by @" + actor + "."
		fmt.Fprintln(r.Out, takeover)
	}
	tasks, unread := r.store.statusTasks(rec)
	r.talk.updateStatus(ctx, rec, tasks, withNote(note, unread))
	var next Outputs
	if r.Cfg.Mode == ModeMatrix {
		next, err = r.matrix.retryMatrix(ctx, th, rec)
	} else {
		next, err = r.runEngine(ctx, th, rec, 0, func(ctx context.Context, eng *engine.Engine) (*engine.Outcome, error) {
			out, err := eng.Retry(ctx, rec.SessionID, rec.PlanHash)
			if errors.Is(err, engine.ErrNothingToRetry) {
				// Interrupted before any task failed: just continue.
				out, err = eng.Resume(ctx, rec.SessionID, rec.PlanHash)
			}
			return out, err
		})
	}
	return o.with(next), err
}

// lastBeat says when a running plan's owner last showed it was alive.
func lastBeat(rec *Record) string {
	t := rec.Heartbeat
	if t.IsZero() {
		t = rec.Updated
	}
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// status replies with the plan's progress.
func (r *planner) status(ctx context.Context, th thread) (Outputs, error) {
	rec, found, err := r.store.loadRecord(ctx, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	if !found {
		return Outputs{}, r.talk.reply(ctx, th, fmt.Sprintf("No plan here yet. Start one with `%s <requirement>`.", r.Cfg.Trigger))
	}
	s, err := r.store.session(rec)
	if err != nil {
		return Outputs{}, err
	}
	var unreadTasks string
	tasks, err := s.ReadTasks()
	if err != nil && s.Exists(session.TasksFile) {
		unreadTasks = r.unreadable("the plan's tasks", rec.SessionID, err)
	}
	explore, unreadExplore := r.store.shownExplore(s)
	text := render.Status(s.Meta, explore, tasks, s.Exists(session.TasksFile))
	o := planOutputs(rec, recordStatus(rec.State))
	o.PullRequestURL = rec.PRURL
	reply := fmt.Sprintf("Plan `%s` is **%s**.\n\n%s", rec.PlanID, rec.State, render.CodeBlock("", text))
	if note := withNote("", unreadTasks, unreadExplore); note != "" {
		reply += "\n\n" + note
	}
	return o, r.talk.reply(ctx, th, reply)
}

// Finalize reports a job that ended before its run did (cancelled or
// timed out): a running plan is marked failed, and the status comment and
// labels say so. It is meant for an `if: cancelled() || failure()` step.
func (r *Runner) Finalize(ctx context.Context, ev *event.Event) error {
	return r.step(r.flows().runs.finalize(ctx, ev))
}

func (r *executor) finalize(ctx context.Context, ev *event.Event) (Outputs, error) {
	number := ev.Number
	if number == 0 {
		number = ev.Inputs.Issue
	}
	if number == 0 {
		return Outputs{}, nil
	}
	rec, found, err := r.store.loadRecord(ctx, number)
	if err != nil || !found {
		return Outputs{}, err
	}
	if rec.State != StateRunning {
		return Outputs{}, nil
	}
	if o := holder(rec); o.RunID != "" && r.Cfg.RunID != "" && o.RunID != r.Cfg.RunID {
		fmt.Fprintf(r.Out, "plan %s is held by workflow run %s, not this one (%s); leaving it\n", rec.PlanID, o.RunID, r.Cfg.RunID)
		return Outputs{}, nil
	}
	rec.State = StateFailed
	rec.Note = "the job ended (cancelled or timed out) before the plan finished"
	tasks, unread := r.store.statusTasks(rec)
	r.talk.updateStatus(ctx, rec, tasks, withNote(fmt.Sprintf("The workflow job ended before the plan finished. `%s retry` continues from the first unfinished task.", r.Cfg.Trigger), unread))
	r.talk.setLabel(ctx, number, LabelFailed)
	return planOutputs(rec, StatusFailed), r.store.saveRecord(ctx, rec)
}

var followUpSeqRe = regexp.MustCompile(`-f(\d+)$`)

// nextFollowUpID names the next follow-up session of a run branch.
func nextFollowUpID(branchID string, previous string) string {
	n := 1
	if m := followUpSeqRe.FindStringSubmatch(previous); m != nil {
		k, _ := strconv.Atoi(m[1])
		n = k + 1
	}
	return fmt.Sprintf("%s-f%d", followUpSeqRe.ReplaceAllString(branchID, ""), n)
}
