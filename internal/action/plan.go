package action

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/session"
)

// The plans part: making a plan for a thread (a new branch and session,
// or a follow-up on planex's pull request), posting it, revising and
// cancelling it, and answering /planex status. A redelivered request
// never plans twice. Each flow returns its outputs.

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
	// Manual says why the plan waits for an approval although the
	// auto-approve setting is on ("" when it does not).
	Manual string
}

// approvesItself says whether the request runs its plan without waiting
// for an approval: -y, or the auto-approve setting unless the request
// must wait (Manual).
func (r *planner) approvesItself(pr planRequest) bool {
	return pr.Yes || (r.Cfg.AutoApprove && pr.Manual == "")
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

// runBranches are the remote branches placePlan reads: the base branch
// and every planex/ branch, listed by one connection.
const runBranches = "refs/heads/planex/*"

// planListing is what a plan job reads of the remote, by one connection
// at one moment: the thread's state ref (its record, if any), the base
// branch, and runBranches (the base's head and the free session ids).
// Before, the state ref was listed by a connection of its own. A
// follow-up plans on its pull request's branch and lists only the state
// ref (the zero refListing: loadRecord lists it).
type planListing struct {
	baseBranch string
	refListing
}

// listForPlan lists the remote for a plan on th (see planListing).
func (r *planner) listForPlan(ctx context.Context, th thread, pr planRequest) (planListing, error) {
	if pr.FollowUp {
		return planListing{}, nil
	}
	branch := r.Cfg.BaseBranch
	if branch == "" {
		var err error
		if branch, err = r.defaultBranch(ctx); err != nil {
			return planListing{}, err
		}
	}
	patterns := []string{stateRef(th.Number), "refs/heads/" + branch, runBranches}
	refs, err := r.Repo.ListRemoteRefs(ctx, r.Cfg.Remote, patterns...)
	if err != nil {
		return planListing{}, err
	}
	return planListing{baseBranch: branch, refListing: refListing{patterns: patterns, refs: refs}}, nil
}

// baseCommit resolves the base branch and its current commit from the
// plan job's listing, from which freeSessionID picks an unused id.
func (r *planner) baseCommit(ctx context.Context, l planListing) (branch, sha string, listed map[string]string, err error) {
	branch, listed = l.baseBranch, l.refs
	sha = listed["refs/heads/"+branch]
	if sha == "" {
		return "", "", nil, userf("the base branch %s does not exist", render.Code(branch))
	}
	if err := r.Repo.EnsureCommit(ctx, r.Cfg.Remote, sha); err != nil {
		return "", "", nil, err
	}
	return branch, sha, listed, nil
}

// plan explores and plans, posts the plan comment, and (when approval is
// automatic) goes straight on to execute it.
func (r *planner) plan(ctx context.Context, th thread, pr planRequest) (Outputs, error) {
	listing, err := r.listForPlan(ctx, th, pr)
	if err != nil {
		return Outputs{}, err
	}
	old, found, err := r.store.loadListedRecord(ctx, th.Number, listing.refListing)
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
	if err := r.placePlan(ctx, rec, pr, listing); err != nil {
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
func (r *planner) placePlan(ctx context.Context, rec *Record, pr planRequest, l planListing) error {
	if pr.FollowUp {
		rec.Branch, rec.Base, rec.SessionID, rec.repo = pr.Branch, pr.Base, pr.SessionID, pr.Repo
		rec.BaseBranch = pr.Branch
		return nil
	}
	var err error
	var listed map[string]string
	if rec.BaseBranch, rec.Base, listed, err = r.baseCommit(ctx, l); err != nil {
		return err
	}
	rec.SessionID = freeSessionID(listed, fmt.Sprintf("%d-%s", pr.Issue, slug(pr.Requirement)))
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
	// A plan that runs at once (-y, ci-fix auto, the auto-approve
	// setting) is unattended: nobody reads its directives first.
	if t, changed := withCIDirectives(tasks, pr.CIFix, r.approvesItself(pr)); changed {
		// Before the hash: the approved plan is the one that runs them.
		if err := s.WriteTasks(t); err != nil {
			return nil, fmt.Errorf("adding the failing command to the fix tasks: %w", err)
		}
		tasks = t
	}
	return tasks, nil
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
	case old.State == StatePlanned && r.approvesItself(pr):
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
	body, truncated := r.planCommentBody(rec, s, tasks, r.runsFor(pr))
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
		r.self.note(c.GetUser())
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
	if r.approvesItself(pr) {
		next, err := r.autoApprove(ctx, th, rec, pr)
		return o.with(next), err
	}
	if pr.Manual != "" {
		o.Notice = pr.Manual
		return o, r.talk.reply(ctx, th, pr.Manual)
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
		if ok && m.ID == rec.PlanID && m.SHA256 == rec.PlanHash && m.Session == rec.SessionID && r.self.is(c.GetUser()) {
			return c.GetID(), nil
		}
	}
	return 0, nil
}

// planCommentBody is the plan comment of rec's plan, as planex posts it
// (and whether the plan was too large for it); runsFor, when not "":
// the plan runs as soon as it is posted, in runsFor's name, which its
// marker says (judgeApproval).
func (r *planner) planCommentBody(rec *Record, s *session.Session, tasks []plan.Task, runsFor string) (string, bool) {
	// An unreadable exploration is logged (shownExplore) and the comment
	// shows the tasks without it. Its note stays out of the comment: the
	// comment's text is what an approval is checked against (bodyHash),
	// and must come out the same when it is made again (repostPlan).
	explore, _ := r.store.shownExplore(s)
	body, truncated := render.PlanComment(render.PlanView{
		Summary: s.Meta.Summary, Approach: s.Meta.Approach, Type: s.Meta.Type, Complexity: s.Meta.Complexity,
		Explore: explore, Tasks: tasks, Session: s.Meta.ID, Base: rec.Base, Estimate: estimate(s, tasks),
		Trigger: r.Cfg.Trigger, StateRef: stateRef(rec.Thread), Inputs: plan.InputsHash(s.Meta.Requirement, explore), Auto: runsFor != "", For: runsFor,
	})
	return body + ciSection(rec.CIFix, render.MaxCommentBytes-len(body)), truncated
}

// autoApprove runs a plan approved with its request (-y) or by the
// auto-approve setting.
func (r *planner) autoApprove(ctx context.Context, th thread, rec *Record, pr planRequest) (Outputs, error) {
	a := approval{By: autoApprover(pr), Via: viaAutoApprove}
	if pr.Yes {
		a.Via, a.Comment = viaYes, th.Comment
		if th.Comment == nil {
			a.Via = viaDispatch
		}
	}
	if pr.Yes && th.Comment == nil && rec.CIFix != nil {
		a.Via = viaCIFix
	}
	return r.runs.execute(ctx, th, rec, a, pr.Concurrency)
}

// autoApprover is whom a plan pr approves itself runs for: whoever asked.
func autoApprover(pr planRequest) string {
	if pr.RequestedBy == "" {
		return "auto-approve"
	}
	return pr.RequestedBy
}

// runsFor is whom the plan pr asked for runs for when it runs as soon as
// it is posted, "" when it waits for an approval.
func (r *planner) runsFor(pr planRequest) string {
	if !r.approvesItself(pr) {
		return ""
	}
	return autoApprover(pr)
}

// freeSessionID picks a session id whose run branch is not among the
// listed remote branches (runBranches).
func freeSessionID(listed map[string]string, id string) string {
	cand := id
	for n := 2; listed["refs/heads/planex/"+cand] != ""; n++ {
		cand = fmt.Sprintf("%s-%d", id, n)
	}
	return cand
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
	body, truncated := r.planCommentBody(rec, s, tasks, "")
	c, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number, body)
	if err != nil {
		return Outputs{}, fmt.Errorf("posting the revised plan: %w", err)
	}
	r.self.note(c.GetUser())
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
