package action

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/session"
	"github.com/planexhq/planex/internal/slash"
)

var runBranchRe = regexp.MustCompile(`^planex/(\d+)-`)

// followUp plans more work on a pull request planex opened: on its
// branch, from its current tip. Fork branches are never touched.
func (r *planner) followUp(ctx context.Context, ev *event.Event, th thread, cmd *slash.Command) (Outputs, error) {
	return r.followUpPlan(ctx, ev, th, cmd, cmd.Requirement, nil, nil)
}

// prHead is the thread's pull request's head branch, who opened it, and
// whether the head is in another repository.
func (r *planner) prHead(ctx context.Context, ev *event.Event, th thread) (head, author string, fork bool, err error) {
	if ev.PR != nil {
		return ev.PR.HeadRef, ev.PR.Author.Login, ev.PR.FromFork(), nil
	}
	pr, err := r.GH.Pulls.GetPR(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number)
	if err != nil {
		return "", "", false, fmt.Errorf("reading pull request #%d: %w", th.Number, err)
	}
	fork = pr.GetHead().GetRepo().GetFullName() == "" ||
		!strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), pr.GetBase().GetRepo().GetFullName())
	return pr.GetHead().GetRef(), pr.GetUser().GetLogin(), fork, nil
}

// planexIssue is the issue of a pull request planex opened, from its
// head branch; a refusal for any other. A branch named like planex's is
// not enough: anyone who can push a branch (or another bot) can name one
// so. Only a pull request planex's own account opened is planex's.
func (r *planner) planexIssue(head, author string) (int, error) {
	m := runBranchRe.FindStringSubmatch(head)
	if m != nil && r.self.login() == "" {
		return 0, refusef("planex cannot tell whether it opened this pull request: its token is not the job's and the workflow sets no `bot-login` (`<app-slug>[bot]` for a GitHub App; docs/action.md).")
	}
	if m == nil || !r.self.isLogin(author) {
		return 0, refusef("planex plans follow-ups only on pull requests it opened (branch `planex/<issue>-…`, opened by planex). To plan work, comment `%s <requirement>` on an issue.", r.Cfg.Trigger)
	}
	issue, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, refusef("The branch `%s` of this pull request names no issue planex can read (%v).", head, err)
	}
	return issue, nil
}

// followUpPlan plans req on a planex pull request's branch. cites are the
// review findings the plan must answer; a request made in a review
// comment is answered in that comment's thread. ci is the CI failure a
// CI-fix plan answers (nil otherwise).
func (r *planner) followUpPlan(ctx context.Context, ev *event.Event, th thread, cmd *slash.Command, req string, cites []citation, ci *CIFailure) (Outputs, error) {
	head, author, fork, err := r.prHead(ctx, ev, th)
	if err != nil {
		return Outputs{}, err
	}
	if fork {
		return Outputs{}, refusef("planex does not work on pull requests from forks: their code is never checked out or run here.")
	}
	r.store.learnSelf(ctx, head)
	issue, err := r.planexIssue(head, author)
	if err != nil {
		return Outputs{}, err
	}
	req = strings.TrimSpace(req)
	if req == "" {
		return Outputs{}, refusef("Say what to change: `%s <change>`.", r.Cfg.Trigger)
	}
	if c := th.Comment; c != nil && c.Path != "" {
		req += fmt.Sprintf("\n\n(This was asked in a review comment on `%s`", c.Path)
		if c.Line > 0 {
			req += fmt.Sprintf(", line %d", c.Line)
		}
		req += ".)"
	}
	tip, err := gitrepo.FetchRefTip(ctx, r.Repo, r.Cfg.Remote, "refs/heads/"+head)
	if err != nil {
		return Outputs{}, err
	}
	if tip == "" {
		return Outputs{}, userf("The branch `%s` of this pull request no longer exists.", head)
	}
	previous := ""
	if old, found, err := r.store.loadRecord(ctx, th.Number); err != nil {
		return Outputs{}, err
	} else if found {
		previous = old.SessionID
	}
	id := nextFollowUpID(strings.TrimPrefix(head, "planex/"), previous)
	repo, err := r.store.followUpRepo(ctx, id, tip)
	if err != nil {
		return Outputs{}, err
	}
	var replyTo int64
	if c := th.Comment; c != nil && c.Kind == event.KindReviewComment {
		// Replies go to the thread's first comment.
		replyTo = c.ID
		if c.InReplyTo != 0 {
			replyTo = c.InReplyTo
		}
	}
	return r.plan(ctx, th, planRequest{Requirement: req, Issue: issue, Yes: cmd.Yes, Concurrency: cmd.Concurrency,
		RequestedBy: th.Actor.Login, FollowUp: true, Branch: head, Base: tip, SessionID: id, Repo: repo,
		Cites: cites, ReplyTo: replyTo, CIFix: ci})
}

// reportText is the text of s's report (context.md) for the job summary.
// When it cannot be read, the log has why and the summary says so.
func (r *stateStore) reportText(s *session.Session) string {
	b, err := safefile.ReadRegularNoFollow(s.File(session.ContextFile), session.MaxStateFile)
	if err != nil {
		return r.unreadable("the report", s.Meta.ID, err)
	}
	return string(b)
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
