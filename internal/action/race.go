package action

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/plan"
)

// Two jobs can handle the same thread at once (an approve and a cancel
// written together, two approvals, an approve and a revise). The thread's
// state ref is where they meet: saveRecord pushes it with a lease, so of
// two jobs that read the same state only one can move it. Every flow
// therefore commits its state transition first and only then speaks on
// the thread (reactions, labels, the status comment, replies); the job
// that lost says once that another run handled the plan and takes back
// any comment it posted on the way.

// lostRace tells the thread, once, that another run changed the plan's
// state first and that what asked (an approval, a cancel, …) did nothing.
func (r *talker) lostRace(ctx context.Context, th thread, what string) (Outputs, error) {
	now, found, err := r.store.loadRecord(ctx, th.Number)
	if err != nil {
		// Logged; the reply then says what is sure (another run handled
		// the plan) without the state this run could not read.
		r.Log.Warn("reading the state another run saved", "err", err)
	}
	msg := fmt.Sprintf("Another planex run handled this thread's plan at the same time, so this %s did nothing.", what)
	var o Outputs
	if found && err == nil {
		o.SessionID, o.PlanID = now.SessionID, now.PlanID
		msg = fmt.Sprintf("Another planex run handled this thread's plan at the same time (plan `%s` is now %s), so this %s did nothing.", now.PlanID, now.State, what)
	}
	o.Status, o.Notice = StatusSuperseded, msg
	fmt.Fprintln(r.Out, msg)
	return o, r.reply(ctx, th, msg)
}

// unpost deletes a comment this run posted before it lost the state.
func (r *talker) unpost(ctx context.Context, id int64) {
	if err := r.GH.Thread.DeleteComment(ctx, r.Cfg.Owner, r.Cfg.Repo, id); err != nil && !gh.IsNotFound(err) {
		r.Log.Warn("deleting a comment of a run that lost the state", "comment", id, "err", err)
	}
}

// reqMarkerRe is the hidden marker the GitHub client appends to what it
// creates (to find it again after a lost answer): not part of the text.
var reqMarkerRe = regexp.MustCompile(`\s*<!-- planex:req [0-9a-f]+ -->\s*$`)

// postedText is a comment body without the client's create marker.
func postedText(body string) string {
	return strings.TrimRight(reqMarkerRe.ReplaceAllString(body, ""), " \t\r\n")
}

// bodyHash is the sha256 (hex) of a comment's text as planex posted it.
func bodyHash(body string) string {
	sum := sha256.Sum256([]byte(postedText(body)))
	return hex.EncodeToString(sum[:])
}

// repostPlan answers an approval of a plan whose comment's text changed
// since planex posted it: nothing runs; the plan is posted again as
// planex made it, the record points at the new comment, and the approver
// is told which lines of the comment changed and to approve again.
func (r *gate) repostPlan(ctx context.Context, th thread, rec *Record, current string) (string, error) {
	s, err := r.store.session(rec)
	if err != nil {
		return "", err
	}
	tasks, err := r.store.wavedTasks(rec)
	if err != nil {
		return "", err
	}
	// A plan posted again waits for the approval this reply asks for.
	body, _ := r.plans.planCommentBody(rec, s, tasks, "")
	what := "its text"
	if bodyHash(body) == rec.PlanBodyHash {
		what = changedLines(postedText(body), postedText(current))
	}
	if what == "nothing" {
		what = "its text was changed and then put back"
	}
	c, err := r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number, body)
	if err != nil {
		return "", fmt.Errorf("posting the plan again: %w", err)
	}
	r.self.note(c.GetUser())
	old := rec.PlanCommentID
	rec.PlanCommentID, rec.PlanBodyHash = c.GetID(), bodyHash(body)
	if err := r.store.saveRecord(ctx, rec); err != nil {
		r.talk.unpost(ctx, c.GetID())
		if errors.Is(err, errStateMoved) {
			return "Another planex run handled this thread's plan at the same time, so this approval did nothing.", nil
		}
		return "", err
	}
	fmt.Fprintf(r.Out, "plan comment %d of plan %s was edited (%s); posted it again as %d\n", old, rec.PlanID, what, c.GetID())
	return fmt.Sprintf("Plan `%s` was not run: its comment was edited after planex posted it (changed: %s), so what was read may not be the plan that would run. "+
		"The plan is posted again above exactly as planex made it; read it, then approve it again: `%s approve %s`",
		rec.PlanID, what, r.Cfg.Trigger, rec.PlanID), nil
}

// wavedTasks reads rec's tasks with their waves, as the plan comment
// shows them.
func (r *stateStore) wavedTasks(rec *Record) ([]plan.Task, error) {
	tasks, err := r.sessionTasks(rec)
	if err != nil {
		return nil, err
	}
	return plan.AssignWaves(tasks)
}

// changedLines names where current differs from the comment planex
// posted, by line numbers of the posted comment (only positions: the
// changed text is anyone's): the lines between what both still share at
// the start and at the end, e.g. "lines 12–13 of the comment".
func changedLines(posted, current string) string {
	if posted == current {
		return "nothing"
	}
	a, b := strings.Split(posted, "\n"), strings.Split(current, "\n")
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	first, last := head+1, len(a)-tail
	switch {
	case last < first && first > len(a):
		return "text added after the comment's last line"
	case last < first:
		return fmt.Sprintf("text added before line %d of the comment", first)
	case first == last:
		return fmt.Sprintf("line %d of the comment", first)
	}
	return fmt.Sprintf("lines %d–%d of the comment", first, last)
}
