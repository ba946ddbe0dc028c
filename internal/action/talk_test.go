package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
)

// memThread is an in-memory thread: the one part of GitHub that status
// comments need (threadAPI), with every call counted.
type memThread struct {
	comments map[int64]string
	nextID   int64
	calls    []string
}

func (m *memThread) CreateComment(_ context.Context, _, _ string, _ int, body string) (*github.IssueComment, error) {
	m.calls = append(m.calls, "create")
	m.nextID++
	if m.comments == nil {
		m.comments = map[int64]string{}
	}
	m.comments[m.nextID] = body
	return &github.IssueComment{ID: github.Int64(m.nextID), Body: github.String(body)}, nil
}

func (m *memThread) EditComment(_ context.Context, _, _ string, id int64, body string) (*github.IssueComment, error) {
	m.calls = append(m.calls, "edit")
	if _, ok := m.comments[id]; !ok {
		return nil, fmt.Errorf("editing comment %d: %w", id, gh.ErrNotFound)
	}
	m.comments[id] = body
	return &github.IssueComment{ID: github.Int64(id), Body: github.String(body)}, nil
}

func (m *memThread) DeleteComment(_ context.Context, _, _ string, id int64) error {
	m.calls = append(m.calls, "delete")
	delete(m.comments, id)
	return nil
}

func (m *memThread) ListComments(context.Context, string, string, int, time.Time) ([]*github.IssueComment, error) {
	m.calls = append(m.calls, "list")
	var out []*github.IssueComment
	for id, body := range m.comments {
		out = append(out, &github.IssueComment{ID: github.Int64(id), Body: github.String(body),
			User: &github.User{Login: github.String("planex[bot]"), Type: github.String("Bot")}})
	}
	return out, nil
}

func (m *memThread) ListCommentsUpTo(ctx context.Context, owner, repo string, number, _ int) ([]*github.IssueComment, error) {
	return m.ListComments(ctx, owner, repo, number, time.Time{})
}

func (m *memThread) AddCommentReaction(context.Context, string, string, int64, string) (*github.User, error) {
	m.calls = append(m.calls, "react")
	return nil, nil
}

func (m *memThread) AddReviewCommentReaction(context.Context, string, string, int64, string) (*github.User, error) {
	m.calls = append(m.calls, "react-review")
	return nil, nil
}

// TestStatusEditsAreCoalesced: the status comment is posted once, then
// edited only when what it shows changes; progress after the last task
// leaves the edit to the run's end.
func TestStatusEditsAreCoalesced(t *testing.T) {
	t.Parallel()
	mem := &memThread{}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := &Runner{GH: GitHub{Thread: mem}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { now = now.Add(time.Second); return now }}
	talk := r.flows().talk
	rec := &Record{Thread: 1, SessionID: "s1", PlanID: "p1", State: StateRunning, fresh: true}
	tasks := []plan.Task{{ID: "T1", Title: "one", Status: plan.StatusPending}, {ID: "T2", Title: "two", Status: plan.StatusPending}}
	ctx := context.Background()

	talk.updateStatus(ctx, rec, tasks, "Approved; running.")
	talk.updateStatus(ctx, rec, tasks, "Approved; running.") // nothing new: no edit
	tasks[0].Status = plan.StatusCompleted
	if !progressNeedsStatus(tasks) {
		t.Fatal("progress with a task pending needs no status?")
	}
	talk.updateStatus(ctx, rec, tasks, "")
	talk.updateStatus(ctx, rec, tasks, "") // the wave's end: nothing new
	tasks[1].Status = plan.StatusFailed
	if progressNeedsStatus(tasks) {
		t.Error("progress after the last task edits the status; the run's end does that")
	}
	rec.State = StateFailed
	talk.updateStatus(ctx, rec, tasks, "1 of 2 tasks completed.")
	if got := strings.Join(mem.calls, " "); got != "create edit edit" {
		t.Errorf("calls = %s, want create edit edit", got)
	}
	if body := mem.comments[rec.StatusCommentID]; !strings.Contains(body, "**failed**") {
		t.Errorf("status comment:\n%s", body)
	}

	// A status comment deleted behind planex's back: the newest other one
	// is adopted, else a new one is posted.
	delete(mem.comments, rec.StatusCommentID)
	mem.calls, rec.fresh = nil, false
	talk.updateStatus(ctx, rec, tasks, "again")
	if got := strings.Join(mem.calls, " "); got != "edit list create" {
		t.Errorf("calls after the comment was deleted = %s", got)
	}
}

func TestStaleStateLabels(t *testing.T) {
	t.Parallel()
	cases := []struct {
		have []string
		keep string
		want []string
	}{
		{[]string{"bug", LabelPlanned, LabelRunning}, LabelRunning, []string{LabelPlanned}},
		{[]string{LabelDone}, LabelDone, nil},
		{[]string{"bug", LabelFailed, LabelDone}, "", []string{LabelFailed, LabelDone}},
		{nil, LabelPlanned, nil},
	}
	for _, c := range cases {
		if got := staleStateLabels(c.have, c.keep); !slices.Equal(got, c.want) {
			t.Errorf("staleStateLabels(%v, %q) = %v, want %v", c.have, c.keep, got, c.want)
		}
	}
}

func TestFailureText(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := &Runner{Cfg: Config{Trigger: "/planex", RunURL: "https://example.com/run/1"}, Now: func() time.Time { return now }}
	cases := []struct {
		name      string
		err       error
		cancelled bool
		user      bool
		want      string
	}{
		{"user error", userf("give a requirement"), false, true, "give a requirement"},
		{"wrapped user error", fmt.Errorf("planning: %w", refusef("not here")), false, true, "not here"},
		{"workflow push", &gitrepo.WorkflowPushError{Ref: "refs/heads/planex/1-x", Workflow: ".github/workflows/ci.yml"}, false, true, "`workflows` permission"},
		{"primary rate limit", &gh.RateLimitError{Primary: true, Reset: now.Add(time.Hour)}, false, true, "rate limit for planex's token is used up until 13:00 UTC"},
		{"secondary rate limit, a day away", &gh.RateLimitError{Reset: now.Add(26 * time.Hour)}, false, true, "secondary rate limit stopped planex until 2026-11-24 14:00 UTC"},
		{"cancelled job", context.Canceled, true, true, "cancelled or timed out"},
		{"cancellation outside a cancelled job", context.Canceled, false, false, "internal error"},
		{"missing permission", &gh.PermissionError{Op: "opening a pull request", Status: 403, Need: "pull-requests: write"}, false, false, "planex could not act"},
		{"anything else", errors.New("boom"), false, false, "internal error; details are in the [workflow run](https://example.com/run/1)"},
	}
	for _, c := range cases {
		msg, user := r.flows().talk.failureText(c.err, c.cancelled)
		if user != c.user || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q (user %v), want %q (user %v)", c.name, msg, user, c.want, c.user)
		}
	}
}

func TestSmallTextHelpers(t *testing.T) {
	t.Parallel()
	if got := slug("Add rate limiting to the public API!\nmore"); got != "add-rate-limiting-to-the-public-api" {
		t.Errorf("slug = %q", got)
	}
	if got := slug("!!!"); got != "plan" {
		t.Errorf("slug of nothing = %q", got)
	}
	for _, c := range []struct {
		listed map[string]string
		want   string
	}{
		{nil, "7-x"},
		{map[string]string{"refs/heads/main": "a", "refs/heads/planex/7-x-2": "b"}, "7-x"},
		{map[string]string{"refs/heads/planex/7-x": "a", "refs/heads/planex/7-x-2": "b"}, "7-x-3"},
	} {
		if got := freeSessionID(c.listed, "7-x"); got != c.want {
			t.Errorf("freeSessionID(%v) = %q, want %q", c.listed, got, c.want)
		}
	}
	if got := issueRequirement("Title\u200b", "Body <!-- hidden -->text"); strings.Contains(got, "hidden") || strings.Contains(got, "\u200b") || !strings.HasPrefix(got, "Title") {
		t.Errorf("issueRequirement = %q", got)
	}
	tasks := []plan.Task{{ID: "T2", Status: plan.StatusSkipped, Error: "a dependency failed"}, {ID: "T1", Status: plan.StatusFailed, Error: "tests\nfailed"}, {ID: "T3", Status: plan.StatusCompleted}}
	if got := runFailure("p1", "budget", tasks); got != "plan p1 failed: 1 of 3 tasks completed; budget\nT1 failed: tests failed\nT2 skipped: a dependency failed" {
		t.Errorf("runFailure = %q", got)
	}
}
