package action

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/session"
	"github.com/planexhq/planex/internal/slash"
)

// reviewAPI is what reviewing a pull request needs: its diff, and
// planex's reviews and inline comments on it.
type reviewAPI interface {
	PRDiff(ctx context.Context, owner, repo string, number int) (string, error)
	PRFiles(ctx context.Context, owner, repo string, number int) ([]*github.CommitFile, error)
	CreateReview(ctx context.Context, owner, repo string, number int, r gh.NewReview) (*github.PullRequestReview, error)
	ListReviews(ctx context.Context, owner, repo string, number int) ([]*github.PullRequestReview, error)
	UpdateReview(ctx context.Context, owner, repo string, number int, reviewID int64, body string) error
	ListReviewComments(ctx context.Context, owner, repo string, number int) ([]*github.PullRequestComment, error)
	ReplyToReviewComment(ctx context.Context, owner, repo string, number int, commentID int64, body string) (*github.PullRequestComment, error)
}

// Answer links a follow-up task to what it answers: a review comment
// (planex's inline finding or a person's comment) and/or a finding of
// planex's review.
type Answer struct {
	Task       string `json:"task"`
	CommentID  int64  `json:"comment_id,omitempty"`
	FindingKey string `json:"finding_key,omitempty"`
	Replied    bool   `json:"replied,omitempty"`
}

// citation is a finding a fix plan must answer.
type citation struct {
	Key       string
	CommentID int64
}

// reviewing reports whether runs are reviewed.
func (r *env) reviewing() bool { return r.Cfg.Review != review.ModeSkip && r.AgentErr == nil }

// publishReview posts res as one pull request review (event COMMENT, never
// APPROVE): the summary body and inline comments on lines the diff adds.
//
// Re-running replaces rather than piles up: planex's earlier summary (found
// by its marker) is edited in place to the new one. Inline comments are
// never deleted, since people may have answered them; a finding that
// already has planex's inline comment is not commented again, and new
// inline findings go in one small extra review that points at the summary.
// fresh: the pull request was opened in this run and has no review yet.
func (r *reviewer) publishReview(ctx context.Context, number int, res *review.Result, diff review.Diff, fixable, fresh bool) error {
	o, rp := r.Cfg.Owner, r.Cfg.Repo
	var prev *github.PullRequestReview
	have := map[string]bool{}
	if !fresh {
		var err error
		if prev, have, err = r.priorReview(ctx, number); err != nil {
			return err
		}
	}
	findings := res.Findings()
	inline, _ := review.Place(findings, diff, have)
	inlineKeys := map[string]bool{}
	for _, f := range findings {
		if have[f.Key] && diff.Added(f.File, f.Line) {
			inlineKeys[f.Key] = true
		}
	}
	var drafts []gh.ReviewComment
	for _, in := range inline {
		inlineKeys[in.Finding.Key] = true
		drafts = append(drafts, gh.ReviewComment{Path: in.Path, Line: in.Line, Side: "RIGHT", Body: in.Body})
	}
	summary := review.Summary(res, review.SummaryOptions{Inline: inlineKeys, Trigger: r.Cfg.Trigger, Fixable: fixable})
	if prev != nil {
		if err := r.GH.Reviews.UpdateReview(ctx, o, rp, number, prev.GetID(), summary); err != nil {
			return err
		}
		if len(drafts) > 0 {
			if _, err := r.GH.Reviews.CreateReview(ctx, o, rp, number, gh.NewReview{CommitID: res.Head, Event: "COMMENT", Body: review.BatchBody(len(drafts)), Comments: drafts}); err != nil {
				return err
			}
		}
		fmt.Fprintf(r.Out, "review: updated planex's summary on #%d, %s\n", number, plural.Count(len(drafts), "new inline comment", "new inline comments"))
		return nil
	}
	rv, err := r.GH.Reviews.CreateReview(ctx, o, rp, number, gh.NewReview{CommitID: res.Head, Event: "COMMENT", Body: summary, Comments: drafts})
	if err != nil {
		return err
	}
	r.self.note(rv.GetUser())
	fmt.Fprintf(r.Out, "review: posted on #%d with %s\n", number, plural.Count(len(drafts), "inline comment", "inline comments"))
	return nil
}

// priorReview finds planex's earlier summary review on a pull request and
// the findings it already has inline comments for.
func (r *reviewer) priorReview(ctx context.Context, number int) (*github.PullRequestReview, map[string]bool, error) {
	reviews, err := r.GH.Reviews.ListReviews(ctx, r.Cfg.Owner, r.Cfg.Repo, number)
	if err != nil {
		return nil, nil, err
	}
	var prev *github.PullRequestReview
	for _, rv := range reviews {
		if r.self.is(rv.GetUser()) && review.IsSummary(rv.GetBody()) {
			prev = rv
		}
	}
	comments, err := r.GH.Reviews.ListReviewComments(ctx, r.Cfg.Owner, r.Cfg.Repo, number)
	if err != nil {
		return nil, nil, err
	}
	have := map[string]bool{}
	for _, c := range comments {
		if k, ok := review.FindingKeyOf(c.GetBody()); ok && r.self.is(c.GetUser()) {
			have[k] = true
		}
	}
	return prev, have, nil
}

// postRunReview publishes the review a run left in its session on the run's
// pull request. Problems are logged and noted, never fatal: the pull
// request stands without its review.
func (r *reviewer) postRunReview(ctx context.Context, rec *Record, s *session.Session) {
	if rec.PRNumber == 0 {
		return
	}
	res, err := review.Load(s.File(session.ReviewFile))
	if err != nil {
		// The pull request stands without its review; the job's log says
		// why, as it does when posting the review fails.
		r.Log.Warn("reading the run's review", "err", err)
		fmt.Fprintf(r.Out, "review: could not read the run's review: %v\n", err)
		return
	}
	if res == nil {
		return
	}
	head, err := rec.repo.ResolveBranch(ctx, rec.Branch)
	if err != nil || head == "" {
		r.Log.Warn("resolving the run branch for the review", "err", err)
		return
	}
	if res.Head == "" {
		res.Head = head
	}
	// Inline comments must sit on lines of the pull request's diff as
	// GitHub has it; its list of files is the authority. Without one (an
	// API that gives none), the branch's own diff against its base stands
	// in.
	var d review.Diff
	if files, ferr := r.GH.Reviews.PRFiles(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.PRNumber); ferr == nil && len(files) > 0 {
		d = diffFromFiles(files)
	} else {
		base := s.Meta.Base
		text, err := rec.repo.DiffText(ctx, base, head)
		if err != nil {
			r.Log.Warn("computing the pull request's diff", "err", err)
			return
		}
		d = review.ParseUnified(text)
	}
	if err := r.publishReview(ctx, rec.PRNumber, res, d, true, rec.prOpened); err != nil {
		r.Log.Warn("posting the review", "err", err)
		fmt.Fprintf(r.Out, "review: could not post it: %v\n", err)
	}
}

func diffFromFiles(files []*github.CommitFile) review.Diff {
	d := review.Diff{}
	for _, f := range files {
		if f.GetStatus() == "removed" || f.GetPatch() == "" {
			continue
		}
		d[f.GetFilename()] = review.ParsePatch(f.GetFilename(), f.GetPatch())
	}
	return d
}

// reviewPR is `/planex review`: review any pull request from its diff,
// read-only. The pull request's code is never checked out or run; the
// agent sees the diff and the description as text, in an empty folder.
func (r *reviewer) reviewPR(ctx context.Context, ev *event.Event, th thread) (Outputs, error) {
	if !th.IsPR {
		return Outputs{}, refusef("`%s review` works on pull requests.", r.Cfg.Trigger)
	}
	if r.AgentErr != nil {
		return Outputs{}, userf("planex has no working agent configured: %v", r.AgentErr)
	}
	pr, err := r.GH.Pulls.GetPR(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number)
	if err != nil {
		return Outputs{}, fmt.Errorf("reading pull request #%d: %w", th.Number, err)
	}
	// planex's earlier summary is found by its account (priorReview).
	r.plans.store.learnSelf(ctx, pr.GetHead().GetRef())
	text, err := r.GH.Reviews.PRDiff(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	files, err := r.GH.Reviews.PRFiles(ctx, r.Cfg.Owner, r.Cfg.Repo, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	diff := diffFromFiles(files)
	if len(diff) == 0 {
		diff = review.ParseUnified(text)
	}
	if strings.TrimSpace(text) == "" {
		return Outputs{}, userf("Pull request #%d has no diff to review.", th.Number)
	}
	fmt.Fprintf(r.Out, "review: pull request #%d (%s), from its diff only\n", th.Number, plural.Count(len(files), "file", "files"))
	title, body := pullRequestText(pr.GetTitle(), pr.GetBody())
	head := pr.GetHead().GetSHA()
	text = reviewText(ctx, files, text, func(ctx context.Context, path string) ([]byte, error) {
		return r.GH.Repo.GetFileContent(ctx, r.Cfg.Owner, r.Cfg.Repo, head, path)
	})
	res, err := review.ReviewPullRequest(ctx, r.Engine.Agent, review.PullRequest{Number: th.Number, Title: title, Body: body,
		Head: head, Diff: text}, r.Engine.Timeouts[agent.PhaseReview], 0, r.Now())
	if err != nil {
		return Outputs{}, userf("planex could not review this pull request: %s", render.Text(err.Error()))
	}
	fork := pr.GetHead().GetRepo().GetFullName() == "" || !strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), pr.GetBase().GetRepo().GetFullName())
	fixable := !fork && runBranchRe.MatchString(pr.GetHead().GetRef())
	if err := r.publishReview(ctx, th.Number, res, diff, fixable, false); err != nil {
		return Outputs{}, err
	}
	r.talk.react(ctx, th, gh.ReactionRocket)
	return Outputs{Status: StatusReviewed, Summary: review.Summary(res, review.SummaryOptions{Trigger: r.Cfg.Trigger})}, nil
}

var findingKeyRe = regexp.MustCompile(`[0-9a-f]{10}`)

// fix is `/planex fix`: plan follow-up tasks on a planex pull request for
// the open high-severity findings of planex's latest review. A finding is
// open until planex has replied that a task fixed it.
func (r *reviewer) fix(ctx context.Context, ev *event.Event, th thread, cmd *slash.Command) (Outputs, error) {
	if !th.IsPR {
		return Outputs{}, refusef("`%s fix` works on pull requests planex opened.", r.Cfg.Trigger)
	}
	o, rp := r.Cfg.Owner, r.Cfg.Repo
	if r.self.login() == "" {
		head, _, _, err := r.plans.prHead(ctx, ev, th)
		if err != nil {
			return Outputs{}, err
		}
		r.plans.store.learnSelf(ctx, head)
	}
	reviews, err := r.GH.Reviews.ListReviews(ctx, o, rp, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	data, found := latestReviewData(r.self, reviews)
	if !found {
		return Outputs{}, refusef("There is no planex review on this pull request yet; `%s review` makes one.", r.Cfg.Trigger)
	}
	comments, err := r.GH.Reviews.ListReviewComments(ctx, o, rp, th.Number)
	if err != nil {
		return Outputs{}, err
	}
	conv, err := r.GH.Thread.ListComments(ctx, o, rp, th.Number, time.Time{})
	if err != nil {
		return Outputs{}, err
	}
	open, threads := openFindings(r.self, data, comments, conv)
	if len(open) == 0 {
		return Outputs{Status: StatusReplied}, r.talk.reply(ctx, th, "planex's review of this pull request has no open high-severity finding to fix.")
	}
	req, cites := fixRequest(open, threads, cmd.Text)
	return r.plans.followUpPlan(ctx, ev, th, cmd, req, cites, nil)
}

// latestReviewData is the data of planex's newest summary review: one
// self's account posted, never another bot's.
func latestReviewData(self *identity, reviews []*github.PullRequestReview) (review.Data, bool) {
	var data review.Data
	found := false
	for _, rv := range reviews {
		if !self.is(rv.GetUser()) {
			continue
		}
		if d, ok := review.ParseSummary(rv.GetBody()); ok {
			data, found = d, true
		}
	}
	return data, found
}

// openFindings are the high-severity findings of a review that planex has
// not yet replied were fixed (in a review thread or on the conversation),
// and the review comment that opened each finding's thread.
func openFindings(self *identity, data review.Data, comments []*github.PullRequestComment, conv []*github.IssueComment) ([]review.DataFinding, map[string]int64) {
	fixed := map[string]bool{}
	threads := map[string]int64{}
	for _, c := range comments {
		if !self.is(c.GetUser()) {
			continue
		}
		for _, k := range review.FixedKeys(c.GetBody()) {
			fixed[k] = true
		}
		if k, ok := review.FindingKeyOf(c.GetBody()); ok && c.GetInReplyTo() == 0 {
			threads[k] = c.GetID()
		}
	}
	for _, c := range conv {
		if self.is(c.GetUser()) {
			for _, k := range review.FixedKeys(c.GetBody()) {
				fixed[k] = true
			}
		}
	}
	var open []review.DataFinding
	for _, f := range data.Findings {
		if f.Severity == review.High && !fixed[f.Key] {
			open = append(open, f)
		}
	}
	return open, threads
}

// fixRequest is the requirement of a fix plan for open findings, and the
// citations its tasks answer; extra is what the maintainer added.
func fixRequest(open []review.DataFinding, threads map[string]int64, extra string) (string, []citation) {
	var b strings.Builder
	b.WriteString("Fix these findings of planex's review of this pull request. Each task must name, in its hints, the finding keys it addresses (\"answers: <key> …\").\n\n")
	var cites []citation
	for _, f := range open {
		fmt.Fprintf(&b, "- finding `%s` (%s, %s) at `%s`", f.Key, f.Severity, f.ID, f.File)
		if f.Line > 0 {
			fmt.Fprintf(&b, " line %d", f.Line)
		}
		fmt.Fprintf(&b, ": %s", f.Explanation)
		if f.Suggestion != "" {
			fmt.Fprintf(&b, " Suggested: %s", f.Suggestion)
		}
		b.WriteString("\n")
		cites = append(cites, citation{Key: f.Key, CommentID: threads[f.Key]})
	}
	if extra = strings.TrimSpace(extra); extra != "" {
		fmt.Fprintf(&b, "\nThe maintainer adds: %s\n", extra)
	}
	return b.String(), cites
}

// answersFor links planned tasks to the findings they cite (by key, in
// any of their texts) and to the review comment that asked for them. A
// finding no task cites is given to every task, so its thread still hears
// back.
func answersFor(tasks []plan.Task, cites []citation, replyTo int64) []Answer {
	var out []Answer
	cited := map[string]bool{}
	for _, t := range tasks {
		text := strings.Join([]string{t.Title, t.Description, t.Hints.String(), t.AcceptanceCriteria, t.Test}, "\n")
		keys := map[string]bool{}
		for _, k := range findingKeyRe.FindAllString(text, -1) {
			keys[k] = true
		}
		for _, c := range cites {
			if keys[c.Key] {
				out = append(out, Answer{Task: t.ID, CommentID: c.CommentID, FindingKey: c.Key})
				cited[c.Key] = true
			}
		}
		if replyTo != 0 {
			out = append(out, Answer{Task: t.ID, CommentID: replyTo})
		}
	}
	for _, c := range cites {
		if cited[c.Key] {
			continue
		}
		for _, t := range tasks {
			out = append(out, Answer{Task: t.ID, CommentID: c.CommentID, FindingKey: c.Key})
		}
	}
	return out
}

// answerThreads replies where follow-up tasks were asked for: in each
// review comment's thread, and for findings that only the review's body
// named, in one comment on the pull request. A finding is marked fixed
// only when every task that answers it completed.
func (r *reviewer) answerThreads(ctx context.Context, rec *Record, tasks []plan.Task) {
	if len(rec.Answers) == 0 || rec.PRNumber == 0 {
		return
	}
	for _, g := range groupAnswers(rec.Answers, tasks) {
		body := fmt.Sprintf("planex follow-up `%s` is %s:\n\n%s\n", rec.PlanID, rec.State, strings.Join(g.lines, "\n"))
		for _, k := range g.fixed() {
			body = review.FixedBody(body, k)
		}
		var err error
		if g.comment != 0 {
			_, err = r.GH.Reviews.ReplyToReviewComment(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.PRNumber, g.comment, body)
		} else {
			_, err = r.GH.Thread.CreateComment(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.PRNumber, "Review findings answered by this follow-up.\n\n"+body)
		}
		if err != nil {
			r.Log.Warn("replying to a review thread", "comment", g.comment, "err", err)
			continue
		}
		for _, i := range g.idx {
			rec.Answers[i].Replied = true
		}
	}
}

// answerGroup is one reply: the ended tasks that answer one review
// comment (0: the review's body), and the findings they fixed or not.
type answerGroup struct {
	comment int64
	lines   []string
	keys    map[string]bool // findings a completed task answers
	bad     map[string]bool // findings a task that did not complete answers
	idx     []int           // the answers the reply covers
}

// fixed are the findings every answering task completed, sorted.
func (g *answerGroup) fixed() []string {
	var keys []string
	for k := range g.keys {
		if !g.bad[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// groupAnswers groups the answers not yet replied to whose task has
// ended, by the comment they answer, in order of first appearance.
func groupAnswers(answers []Answer, tasks []plan.Task) []*answerGroup {
	byID := map[string]plan.Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	groups := map[int64]*answerGroup{}
	var order []*answerGroup
	for i, a := range answers {
		t, ok := byID[a.Task]
		if a.Replied || !ok || !t.Status.Done() {
			continue
		}
		g := groups[a.CommentID]
		if g == nil {
			g = &answerGroup{comment: a.CommentID, keys: map[string]bool{}, bad: map[string]bool{}}
			groups[a.CommentID] = g
			order = append(order, g)
		}
		g.idx = append(g.idx, i)
		if line := answerLine(t); !slices.Contains(g.lines, line) {
			g.lines = append(g.lines, line)
		}
		if a.FindingKey == "" {
			continue
		}
		if t.Status == plan.StatusCompleted {
			g.keys[a.FindingKey] = true
		} else {
			g.bad[a.FindingKey] = true
		}
	}
	return order
}

// answerLine says how one task ended, for a reply.
func answerLine(t plan.Task) string {
	line := fmt.Sprintf("- %s (%s): %s", render.Text(t.ID), render.Text(t.Title), t.Status)
	if t.Status == plan.StatusCompleted && t.Commit != "" {
		line += fmt.Sprintf(" in `%s`", abbrev.SHA(t.Commit))
	} else if t.Error != "" {
		line += ": " + render.Text(abbrev.Truncate(t.Error, 200))
	}
	return line
}
