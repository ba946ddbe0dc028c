package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
)

// reply posts a comment in the thread.
func (r *Runner) reply(ctx context.Context, th thread, body string) error {
	if th.Number == 0 {
		fmt.Fprintln(r.Out, body)
		return nil
	}
	if _, err := r.GH.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number, body); err != nil {
		return fmt.Errorf("replying on #%d: %w", th.Number, err)
	}
	return nil
}

// react acknowledges the comment that spoke; failures only log.
func (r *Runner) react(ctx context.Context, th thread, content string) {
	if th.Comment == nil || th.Comment.ID == 0 {
		return
	}
	var err error
	if th.Comment.Kind == "review_comment" {
		err = r.GH.AddReviewCommentReaction(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Comment.ID, content)
	} else if th.Comment.Kind != "review" {
		err = r.GH.AddCommentReaction(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Comment.ID, content)
	}
	if err != nil {
		r.Log.Warn("reacting to comment", "comment", th.Comment.ID, "err", err)
	}
}

// setLabel leaves exactly one of planex's state labels on a number. It
// removes only labels the issue has: removing a missing one is a 404,
// which the client would first retry as a possible replication delay.
func (r *Runner) setLabel(ctx context.Context, number int, label string) {
	if number == 0 {
		return
	}
	is, err := r.GH.GetIssue(ctx, r.Cfg.Owner, r.Cfg.Repo, number)
	if err != nil {
		r.Log.Warn("reading labels", "number", number, "err", err)
		return
	}
	has := false
	for _, l := range is.Labels {
		name := l.GetName()
		switch {
		case name == label:
			has = true
		case name == LabelPlanned || name == LabelRunning || name == LabelDone || name == LabelFailed:
			if err := r.GH.RemoveLabel(ctx, r.Cfg.Owner, r.Cfg.Repo, number, name); err != nil {
				r.Log.Warn("removing label", "label", name, "err", err)
			}
		}
	}
	if label != "" && !has {
		if err := r.GH.AddLabels(ctx, r.Cfg.Owner, r.Cfg.Repo, number, label); err != nil {
			r.Log.Warn("adding label", "label", label, "err", err)
		}
	}
}

// updateStatus creates or edits the thread's status comment.
func (r *Runner) updateStatus(ctx context.Context, rec *Record, tasks []plan.Task, note string) {
	body := render.StatusComment(render.StatusView{Session: rec.SessionID, PlanID: rec.PlanID, State: rec.State,
		Tasks: tasks, Note: note, PRURL: rec.PRURL, RunURL: r.Cfg.RunURL, Updated: r.Now()})
	if rec.StatusCommentID != 0 {
		if _, err := r.GH.EditComment(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.StatusCommentID, body); err == nil {
			return
		} else if !gh.IsNotFound(err) {
			r.Log.Warn("editing status comment", "err", err)
			return
		}
	}
	c, err := r.GH.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, body)
	if err != nil {
		r.Log.Warn("posting status comment", "err", err)
		return
	}
	rec.StatusCommentID = c.GetID()
}

// fail reports a failure in the thread, always: user errors as they are,
// anything else as an internal error with a pointer to the log. It marks a
// running record failed. The returned error is nil for user errors (the
// user was told; the job itself did its duty) and the cause otherwise.
func (r *Runner) fail(ctx context.Context, th thread, rec *Record, err error) error {
	var ue *userError
	r.react(ctx, th, gh.ReactionConfused)
	msg := ""
	if errors.As(err, &ue) {
		msg = ue.msg
	} else {
		r.Log.Error("planex failed", "err", err)
		msg = "planex hit an internal error"
		if r.Cfg.RunURL != "" {
			msg += "; details are in the [workflow run](" + r.Cfg.RunURL + ")"
		}
		msg += "."
		var pe *gh.PermissionError
		if errors.As(err, &pe) {
			msg = "planex could not act: " + oneLine(pe.Error())
		}
	}
	if rec != nil && rec.State == StateRunning {
		rec.State = StateFailed
		rec.Note = msg
		r.updateStatus(ctx, rec, nil, msg)
		r.setLabel(ctx, rec.Thread, LabelFailed)
		if serr := r.saveRecord(ctx, rec); serr != nil {
			r.Log.Error("saving state after a failure", "err", serr)
		}
	}
	if ue != nil && ue.refused {
		r.Outputs.Status = "refused"
	} else {
		r.Outputs.Status, r.Outputs.Failure = "failed", msg
	}
	if rerr := r.reply(ctx, th, msg); rerr != nil {
		r.Log.Error("reporting the failure", "err", rerr)
	}
	if ue != nil {
		return nil
	}
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
