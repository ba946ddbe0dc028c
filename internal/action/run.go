package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/session"
)

// The runs part: approving a plan, running it in this job (or handing it
// to matrix mode), publishing the result (branch, pull request, labels,
// status), retrying a failed plan or taking over one whose owner is gone,
// and finalizing a job that ended early. Each flow returns its outputs.

// approve runs the plan with planID, but only that exact plan.
func (r *executor) approve(ctx context.Context, th thread, planID, approver string, concurrency int) (Outputs, error) {
	listing, err := r.listForApproval(ctx, th)
	if err != nil {
		return Outputs{}, err
	}
	rec, found, err := r.store.loadListedRecord(ctx, th.Number, listing)
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
	reason, seen, err := r.gate.approvable(ctx, th, rec, listing)
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
// a run whose owner died is taken over, a failed plan, or a dead run,
// whose approval does not hold takes this one as its first (handled
// false: go on approving), and anything else is told the plan runs only
// once.
func (r *executor) approveAgain(ctx context.Context, th thread, rec *Record, approver string) (Outputs, bool, error) {
	if rec.State == StateRunning {
		if gone, _ := r.engines.checkOwner(ctx, rec); gone {
			// The run that had it died: this approval takes it over, as a
			// retry would; when the approval it ran on has lapsed (its
			// approver lost write access), a retry is refused, and this
			// approval is the plan's new one.
			verr := r.gate.approvedBefore(ctx, rec)
			if verr == nil {
				o, err := r.retry(ctx, th, approver)
				return o, true, err
			}
			if !isRefusal(verr) {
				return Outputs{}, true, verr
			}
			return Outputs{}, false, nil
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
	var approveErr error
	if r.Cfg.Mode != ModeMatrix {
		// The approval goes into the session before the claim, so the
		// claim's save carries it: a run that dies during the first task
		// can be taken over and resumed. A run that loses the claim
		// leaves its session's approval in its own clone; one that
		// cannot approve claims all the same and reports why below.
		approveErr = r.approveSession(ctx, rec, a)
	}
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
		if approveErr != nil {
			return nil, approveErr
		}
		return eng.Resume(ctx, rec.SessionID, rec.PlanHash)
	})
}

// approveSession records a's approval of rec's plan in its session, if
// the session's plan is still the one rec names.
func (r *executor) approveSession(ctx context.Context, rec *Record, a approval) error {
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return err
	}
	return eng.ApprovePlan(ctx, rec.SessionID, rec.PlanHash, a.engine(r.Cfg.Trigger))
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
	r.engines.startApproverWatch()
	stop := r.engines.heartbeat(runCtx, cancel, rec)
	out, err := run(runCtx, eng)
	stop()
	r.runMu.Lock()
	r.stopRun = nil
	r.runMu.Unlock()
	if err == nil && context.Cause(runCtx) == nil {
		// Nothing is published in the name of an approver GitHub has not
		// said, within Config.AccessRecheck, may still approve plans.
		if cerr := r.engines.confirmApprover(ctx, rec); errors.Is(cerr, errApprovalLapsed) {
			cancel(cerr)
		} else if cerr != nil {
			return r.talk.fail(ctx, th, rec, userf("Plan `%s` stopped before its pull request: GitHub could not say whether @%s, who approved it, can still approve plans (%s). "+
				"The tasks committed stay on branch `%s`; `%s retry` opens the pull request once GitHub answers.", rec.PlanID, rec.ApprovedBy, render.Text(abbrev.OneLine(cerr.Error())), rec.Branch, r.Cfg.Trigger))
		}
	}
	if errors.Is(context.Cause(runCtx), errTakenOver) && ctx.Err() == nil {
		fmt.Fprintf(r.Out, "plan %s was taken over by another run; stopping and leaving it to that run\n", rec.PlanID)
		return planOutputs(rec, StatusSuperseded), nil
	}
	if errors.Is(context.Cause(runCtx), errApprovalLapsed) && ctx.Err() == nil {
		// Checked whatever the engine answered: a lapse found after the
		// last task stops the pull request too.
		return r.talk.fail(ctx, th, rec, userf("Plan `%s` stopped: @%s, who approved it, can no longer approve plans. "+
			"The tasks committed before that stay on branch `%s`; nothing more runs and no pull request is opened "+
			"until someone with write access approves it again: `%s approve %s`", rec.PlanID, rec.ApprovedBy, rec.Branch, r.Cfg.Trigger, rec.PlanID))
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
	} else if !rec.FollowUp && rec.PRNumber != 0 {
		// The number is the state's, which whoever can push writes: the
		// run's pull request is the one its branch heads.
		rec.PRNumber = r.prOfBranch(ctx, rec)
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
	tip, err := rec.repo.ResolveBranch(ctx, rec.Branch)
	others, n := r.otherCommits(ctx, rec, tip, err)
	hidden, nh := r.hiddenFiles(ctx, rec, tip, err)
	body := render.PRBody(render.PRView{Report: report, Issue: rec.Issue, ApprovedBy: approver, NoCI: r.Cfg.DefaultToken, Others: others, OthersCount: n,
		Hidden: hidden, HiddenCount: nh})
	// Opening it finds the pull request the branch has already, if any
	// (another job opened it, or the answer to an earlier create was
	// lost); its report is then brought up to date.
	// The requirement's first line is whoever opened the issue's; the
	// merge commit carries the title, so it references no issue.
	title := "planex: " + gitrepo.DefuseRefs(abbrev.Truncate(abbrev.FirstLine(report.Meta.Requirement), 80))
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

// prOfBranch is the number of the pull request rec's branch heads, or 0
// when it has none or GitHub cannot say (logged).
func (r *env) prOfBranch(ctx context.Context, rec *Record) int {
	pr, err := r.GH.Pulls.FindPRByHead(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Branch)
	if err != nil {
		r.Log.Warn("looking for the run's pull request", "branch", rec.Branch, "err", err)
		return 0
	}
	return pr.GetNumber()
}

// otherCommits lists the commits on the run branch since its base that
// no task of the run made (someone pushed them), for the report to name:
// a pull request carries them under planex's report all the same. When
// the history cannot be read the log says why and the report names none.
// tip is the branch's tip as the report's caller read it (tipErr: why
// it could not), the one commit both of the report's lists describe.
func (r *executor) otherCommits(ctx context.Context, rec *Record, tip string, tipErr error) ([]render.Commit, int) {
	list, n, err := []gitrepo.TaskCommit(nil), 0, tipErr
	if err == nil {
		list, n, err = gitrepo.OtherCommitsAt(ctx, rec.repo, rec.Branch, tip, rec.Base, rec.SessionID)
	}
	if err != nil {
		r.Log.Warn("listing the run branch's other commits", "branch", rec.Branch, "err", err)
		return nil, 0
	}
	out := make([]render.Commit, len(list))
	for i, c := range list {
		out[i] = render.Commit{SHA: c.SHA, Subject: c.Subject}
	}
	return out, n
}

// hiddenFiles lists the files of the run branch's changes since its base
// whose diff GitHub hides by the repository's attributes (a
// `docs/.gitattributes` with `* -diff` hides any file a task adds there),
// for the report to name. When they cannot be read the log says why and
// the count is -1: the report says it could not tell. tip and tipErr are
// as otherCommits takes them.
func (r *executor) hiddenFiles(ctx context.Context, rec *Record, tip string, tipErr error) ([]render.HiddenFile, int) {
	list, n, err := []gitrepo.HiddenFile(nil), 0, tipErr
	switch {
	case err == nil && tip == "":
		err = fmt.Errorf("no branch %s", rec.Branch)
	case err == nil:
		list, n, err = gitrepo.HiddenChangesAt(ctx, rec.repo, rec.Branch, tip, rec.Base)
	}
	if err != nil {
		r.Log.Warn("reading which of the run's files GitHub's diff hides", "branch", rec.Branch, "err", err)
		return nil, -1
	}
	out := make([]render.HiddenFile, len(list))
	for i, f := range list {
		out[i] = render.HiddenFile{Path: f.Path, Why: f.Why.String()}
	}
	return out, n
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
	tip, err := rec.repo.ResolveBranch(ctx, rec.Branch)
	others, n := r.otherCommits(ctx, rec, tip, err)
	heading := "### Follow-up report"
	if rec.CIFix != nil {
		heading = fmt.Sprintf("### CI-fix round %d report", rec.CIFix.Round)
	}
	hidden, nh := r.hiddenFiles(ctx, rec, tip, err)
	body := render.PRBody(render.PRView{Report: report, ApprovedBy: approver, NoCI: r.Cfg.DefaultToken, Others: others, OthersCount: n, Heading: heading,
		Hidden: hidden, HiddenCount: nh})
	if _, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, body); err != nil {
		return fmt.Errorf("posting the follow-up report: %w", err)
	}
	return r.ci.extendPRReport(ctx, rec, report.Tasks)
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

// Finalize reports a job that ended before its run did (cancelled or
// timed out): a running plan is marked failed, and the status comment and
// labels say so. It is meant for an `if: cancelled() || failure()` step.
func (r *Runner) Finalize(ctx context.Context, ev *event.Event) error {
	if err := r.sameRepository(ev); err != nil {
		return r.step(Outputs{}, err)
	}
	return r.step(r.flows().runs.finalize(ctx, ev))
}
