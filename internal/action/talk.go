package action

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
)

// threadAPI is how planex talks on a thread: replies, reactions, and the
// plan and status comments it posts and keeps up to date.
type threadAPI interface {
	CreateComment(ctx context.Context, owner, repo string, number int, body string) (*github.IssueComment, error)
	EditComment(ctx context.Context, owner, repo string, commentID int64, body string) (*github.IssueComment, error)
	DeleteComment(ctx context.Context, owner, repo string, commentID int64) error
	ListComments(ctx context.Context, owner, repo string, number int, since time.Time) ([]*github.IssueComment, error)
	ListCommentsUpTo(ctx context.Context, owner, repo string, number, maxItems int) ([]*github.IssueComment, error)
	AddCommentReaction(ctx context.Context, owner, repo string, commentID int64, content string) (*github.User, error)
	AddReviewCommentReaction(ctx context.Context, owner, repo string, commentID int64, content string) (*github.User, error)
}

// labelAPI is what keeping one of planex's state labels on a thread needs.
type labelAPI interface {
	GetIssue(ctx context.Context, owner, repo string, number int) (*github.Issue, error)
	AddLabel(ctx context.Context, owner, repo string, number int, label string) ([]string, error)
	RemoveLabel(ctx context.Context, owner, repo string, number int, label string) error
}

// reply posts a comment in the thread.
func (r *talker) reply(ctx context.Context, th thread, body string) error {
	if th.Number == 0 {
		fmt.Fprintln(r.Out, body)
		return nil
	}
	c, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number, body)
	if err != nil {
		return fmt.Errorf("replying on #%d: %w", th.Number, err)
	}
	r.self.note(c.GetUser())
	return nil
}

// react acknowledges the comment that spoke; failures only log.
func (r *talker) react(ctx context.Context, th thread, content string) {
	if th.Comment == nil || th.Comment.ID == 0 {
		return
	}
	var (
		u   *github.User
		err error
	)
	if th.Comment.Kind == "review_comment" {
		u, err = r.GH.Thread.AddReviewCommentReaction(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Comment.ID, content)
	} else if th.Comment.Kind != "review" {
		u, err = r.GH.Thread.AddCommentReaction(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Comment.ID, content)
	}
	if err != nil {
		r.Log.Warn("reacting to comment", "comment", th.Comment.ID, "err", err)
		return
	}
	// GitHub names the account that reacted: planex's own, learned
	// before the thread's record (which whoever can push writes) is read.
	r.self.note(u)
}

// setLabel leaves exactly one of planex's state labels on a number (none
// when label is ""). The label is added first: GitHub's answer lists the
// labels the number has, so the others are removed without reading the
// issue, and only labels it has (removing a missing one is a 404, which
// the client would first retry as a possible replication delay).
func (r *talker) setLabel(ctx context.Context, number int, label string) {
	if number == 0 {
		return
	}
	var have []string
	if label != "" {
		var err error
		if have, err = r.GH.Labels.AddLabel(ctx, r.Cfg.Owner, r.Cfg.Repo, number, label); err != nil {
			r.Log.Warn("adding label", "label", label, "err", err)
			return
		}
	} else {
		is, err := r.GH.Labels.GetIssue(ctx, r.Cfg.Owner, r.Cfg.Repo, number)
		if err != nil {
			r.Log.Warn("reading labels", "number", number, "err", err)
			return
		}
		for _, l := range is.Labels {
			have = append(have, l.GetName())
		}
	}
	for _, name := range staleStateLabels(have, label) {
		if err := r.GH.Labels.RemoveLabel(ctx, r.Cfg.Owner, r.Cfg.Repo, number, name); err != nil {
			r.Log.Warn("removing label", "label", name, "err", err)
		}
	}
}

// staleStateLabels are the state labels among have other than keep.
func staleStateLabels(have []string, keep string) []string {
	var out []string
	for _, name := range have {
		switch name {
		case keep:
		case LabelPlanned, LabelRunning, LabelDone, LabelFailed:
			out = append(out, name)
		}
	}
	return out
}

// updateStatus creates or edits the thread's status comment. When the
// record knows none (or it is gone), planex's newest status comment on
// the thread is edited before a new one is posted: a run that died before
// saving the comment's id must not leave a second one behind.
func (r *talker) updateStatus(ctx context.Context, rec *Record, tasks []plan.Task, note string) {
	view := render.StatusView{Session: rec.SessionID, PlanID: rec.PlanID, State: string(rec.State),
		Tasks: tasks, Note: note, PRURL: rec.PRURL, RunURL: r.Cfg.RunURL}
	// What the comment says, but for the time it says it: an edit that
	// would change only that is not sent.
	shown := render.StatusComment(view)
	if rec.StatusCommentID != 0 && r.shownStatus[rec.StatusCommentID] == shown {
		return
	}
	view.Updated = r.Now()
	body := render.StatusComment(view)
	for _, id := range []int64{rec.StatusCommentID, -1} {
		if id == -1 && !rec.fresh {
			id = r.findStatusComment(ctx, rec)
		}
		if id <= 0 || !r.isStatusComment(ctx, rec, id) {
			continue
		}
		_, err := r.GH.Thread.EditComment(ctx, r.Cfg.Owner, r.Cfg.Repo, id, body)
		if err == nil {
			rec.StatusCommentID = id
			r.noteStatus(id, shown)
			return
		}
		if !gh.IsNotFound(err) {
			r.Log.Warn("editing status comment", "err", err)
			return
		}
	}
	c, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, body)
	if err != nil {
		r.Log.Warn("posting status comment", "err", err)
		return
	}
	r.self.note(c.GetUser())
	rec.StatusCommentID = c.GetID()
	r.noteStatus(c.GetID(), shown)
}

// isStatusComment says whether comment id is planex's status comment on
// rec's thread, as GitHub has it: one planex edited or posted in this
// job, or one a bot wrote on the thread that starts with the status
// marker. The id on record comes from the state ref, which whoever can
// push writes: planex edited whatever comment it named, anyone's on any
// issue of the repository. A comment GitHub cannot find is taken as
// such (the edit then finds nothing, and a new one is posted).
func (r *talker) isStatusComment(ctx context.Context, rec *Record, id int64) bool {
	if _, ok := r.shownStatus[id]; ok {
		return true
	}
	c, err := r.GH.Approvals.GetComment(ctx, r.Cfg.Owner, r.Cfg.Repo, id)
	switch {
	case gh.IsNotFound(err):
		return true
	case err != nil:
		r.Log.Warn("reading the status comment on record", "comment", id, "err", err)
		return false
	}
	onThread := strings.HasSuffix(c.GetIssueURL(), "/issues/"+strconv.Itoa(rec.Thread))
	if !onThread || !render.IsStatusComment(c.GetBody()) || !r.self.is(c.GetUser()) {
		r.Log.Warn("the status comment on record is not planex's on this thread; posting a new one", "comment", id, "thread", rec.Thread)
		return false
	}
	return true
}

// noteStatus remembers what a status comment shows now.
func (r *talker) noteStatus(id int64, shown string) {
	if r.shownStatus == nil {
		r.shownStatus = map[int64]string{}
	}
	r.shownStatus[id] = shown
}

// progressNeedsStatus says whether a run's progress is worth an edit of
// the status comment: not once every task has ended, since the run's end
// edits it right after with the outcome.
func progressNeedsStatus(tasks []plan.Task) bool {
	for _, t := range tasks {
		if !t.Status.Done() {
			return true
		}
	}
	return false
}

// findStatusComment returns the id of planex's newest status comment on
// rec's thread other than the one on record, or 0.
func (r *talker) findStatusComment(ctx context.Context, rec *Record) int64 {
	cs, err := r.GH.Thread.ListComments(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, time.Time{})
	if err != nil {
		r.Log.Warn("looking for the status comment", "err", err)
		return 0
	}
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.GetID() != rec.StatusCommentID && render.IsStatusComment(c.GetBody()) && r.self.is(c.GetUser()) {
			return c.GetID()
		}
	}
	return 0
}

// reported is an error fail has told the thread about already; a second
// fail on it says nothing more.
type reported struct{ err error }

func (e *reported) Error() string { return e.err.Error() }
func (e *reported) Unwrap() error { return e.err }

// fail reports a failure in the thread, once: user errors as they are,
// known conditions (a rate limit, a refused workflow push, a cancelled
// job) with what to do, anything else as an internal error with a pointer
// to the log. It marks a running record failed, so nothing is left
// "running" by an error. It returns the run's outputs for the failure
// (none for an error told already), and an error that is nil for user
// errors (the user was told; the job itself did its duty) and the cause
// otherwise.
func (r *talker) fail(ctx context.Context, th thread, rec *Record, err error) (Outputs, error) {
	var rep *reported
	if err == nil || errors.As(err, &rep) {
		return Outputs{}, err
	}
	cancelled := ctx.Err() != nil
	if cancelled {
		// The job is being cancelled: report with the little time left.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
	}
	msg, user := r.failureText(err, cancelled)
	var ue *userError
	switch {
	case !user:
		r.Log.Error("planex failed", "err", err)
	case !errors.As(err, &ue):
		r.Log.Warn("planex stopped", "err", err)
	}
	r.react(ctx, th, gh.ReactionConfused)
	var o Outputs
	if rec != nil && rec.State == StateRunning {
		rec.State = StateFailed
		rec.Note = msg
		tasks, unread := r.store.statusTasks(rec)
		r.updateStatus(ctx, rec, tasks, withNote(msg, unread))
		r.setLabel(ctx, rec.Thread, LabelFailed)
		if !rec.FollowUp && rec.PRNumber != 0 {
			// The number is the state's, which whoever can push writes:
			// the run's pull request is the one its branch heads.
			rec.PRNumber = r.prOfBranch(ctx, rec)
		}
		if rec.PRNumber != 0 && rec.PRNumber != rec.Thread {
			r.setLabel(ctx, rec.PRNumber, LabelFailed)
		}
		if serr := r.store.saveRecord(ctx, rec); serr != nil {
			// The thread hears it too: its state may still say running.
			r.Log.Error("saving state after a failure", "err", serr)
			msg += " planex could not record the failure in the plan's state either (" + render.Text(abbrev.OneLine(serr.Error())) + "); " +
				"if the plan still shows as running, `" + r.Cfg.Trigger + " retry` takes it over once this run has ended."
		}
		o.SessionID, o.PlanID = rec.SessionID, rec.PlanID
	}
	if ue != nil && ue.refused {
		o.Status = StatusRefused
	} else {
		o.Status, o.Failure = StatusFailed, msg
	}
	if rerr := r.reply(ctx, th, msg); rerr != nil {
		r.Log.Error("reporting the failure", "err", rerr)
	}
	if user {
		return o, nil
	}
	return o, &reported{err}
}

// failAfter is fail for a flow that had found o before err: the failure's
// outputs are laid over o. A nil err leaves o as it is.
func (r *talker) failAfter(ctx context.Context, th thread, rec *Record, o Outputs, err error) (Outputs, error) {
	if err == nil {
		return o, nil
	}
	fo, ferr := r.fail(ctx, th, rec, err)
	return o.with(fo), ferr
}

// failureText is what the thread is told about err (cancelled: the job
// is being cancelled), and whether it is a condition the people on the
// thread act on (true: the job did its duty by telling them) rather than
// a failure of the job.
func (r *talker) failureText(err error, cancelled bool) (string, bool) {
	var ue *userError
	var rl *gh.RateLimitError
	var wp *gitrepo.WorkflowPushError
	var pe *gh.PermissionError
	switch {
	case errors.As(err, &ue):
		return ue.msg, true
	case errors.As(err, &wp):
		return fmt.Sprintf("GitHub refused to push %s: it creates or changes the workflow file %s, and the token planex runs with lacks the `workflows` permission "+
			"(the workflow's `GITHUB_TOKEN` can never have it). Give planex a GitHub App token with *Workflows: write* or a fine-grained personal access token "+
			"with *Workflows: read and write* through the `github-token` input, then `%s retry`; or re-plan without changing workflows.",
			render.Code(strings.TrimPrefix(wp.Ref, "refs/heads/")), render.Code(wp.Workflow), r.Cfg.Trigger), true
	case errors.As(err, &rl):
		when := rl.Reset.UTC().Format("15:04 UTC")
		if rl.Reset.Sub(r.Now()) > 20*time.Hour {
			when = rl.Reset.UTC().Format("2006-01-02 15:04 UTC")
		}
		what := "GitHub's API rate limit for planex's token is used up"
		if !rl.Primary {
			what = "GitHub's secondary rate limit stopped planex"
		}
		return fmt.Sprintf("%s until %s, longer than planex waits. Nothing is lost: `%s retry` after %s continues from the first unfinished task.",
			what, when, r.Cfg.Trigger, when), true
	case cancelled && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return fmt.Sprintf("The workflow job was cancelled or timed out before planex finished. `%s retry` continues from the first unfinished task.", r.Cfg.Trigger), true
	case errors.As(err, &pe):
		// Told as it is, and the job fails: the workflow needs fixing.
		return "planex could not act: " + abbrev.OneLine(pe.Error()), false
	case errors.Is(err, gh.ErrListTooLong):
		return "planex could not act: " + render.Text(abbrev.OneLine(err.Error())), true
	}
	msg := "planex hit an internal error"
	if r.Cfg.RunURL != "" {
		msg += "; details are in the [workflow run](" + r.Cfg.RunURL + ")"
	}
	return msg + ".", false
}

// refusedMarker marks planex's reply refusing login on a thread.
func refusedMarker(login string) string {
	return "<!-- planex:refused " + strings.ToLower(login) + " -->"
}

// refuseOnce tells login, once per thread, why planex will not act for
// them; later refusals of the same person on the thread are only the
// reaction already given, so nobody can make planex reply to every
// comment they write.
func (r *talker) refuseOnce(ctx context.Context, th thread, login, reason string) (Outputs, error) {
	o := Outputs{Status: StatusRefused}
	if th.Number != 0 {
		told, err := r.refusedBefore(ctx, th.Number, refusedMarker(login))
		if errors.Is(err, gh.ErrListTooLong) {
			// A thread flooded past what planex reads: replying to each
			// comment (with the refusal or with the failure to read) is
			// what the flood would want.
			o.Notice = fmt.Sprintf("@%s is refused on #%d; not replying, as the thread is too long to tell whether planex did before: %s", login, th.Number, reason)
			fmt.Fprintln(r.Out, o.Notice)
			return o, nil
		}
		if err != nil {
			return o, err
		}
		if told {
			o.Notice = fmt.Sprintf("@%s was refused on #%d before; not replying again: %s", login, th.Number, reason)
			fmt.Fprintln(r.Out, o.Notice)
			return o, nil
		}
	}
	return o, r.reply(ctx, th, "@"+login+" "+reason+"\n\n"+refusedMarker(login))
}

// maxRefusalPages is how many pages of a thread (100 comments each)
// planex reads looking for its refusal of someone before refusing them
// again: anyone may start the look, with a comment each.
const maxRefusalPages = 3

// refusedBefore says whether planex's own comments among a thread's
// first maxRefusalPages pages carry marker; a longer thread's error
// matches gh.ErrListTooLong.
func (r *talker) refusedBefore(ctx context.Context, number int, marker string) (bool, error) {
	cs, err := r.GH.Thread.ListCommentsUpTo(ctx, r.Cfg.Owner, r.Cfg.Repo, number, maxRefusalPages*100)
	if err != nil {
		return false, fmt.Errorf("reading the comments of #%d: %w", number, err)
	}
	for _, c := range cs {
		// Without a known account, any bot's marker counts: a refusal
		// told once too few is better than a reply to every comment of a
		// person without access.
		mine := r.self.is(c.GetUser()) || r.self.login() == "" && event.IsBot(c.GetUser().GetLogin(), c.GetUser().GetType())
		if mine && strings.Contains(c.GetBody(), marker) {
			return true, nil
		}
	}
	return false, nil
}
