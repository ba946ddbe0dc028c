package gh

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/ghfake"
)

// lostAnswers are the ways the answer to an applied write goes missing.
var lostAnswers = []struct {
	name  string
	fault ghfake.Fault
}{
	{"502 after the write", ghfake.LostResponse(502)},
	{"504 after the write", ghfake.LostResponse(504)},
	{"connection reset after the write", ghfake.LostConnection()},
	{"timeout after the write", ghfake.Timeout()},
}

// faultClient is a client whose attempts time out quickly (for the
// stalled answers) and whose waits are recorded instead of slept.
func faultClient(t *testing.T, f *ghfake.Fake) (*Client, *[]time.Duration) {
	t.Helper()
	p := fastRetry
	p.AttemptTimeout = 300 * time.Millisecond
	c, err := NewClient(context.Background(), Options{Token: "secret", APIURL: f.URL(), ServerURL: f.ServerURL(),
		HTTPClient: f.HTTPClient(), Retry: p, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var waits []time.Duration
	c.retry.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, &waits
}

func TestLostAnswerToACreateDoesNotDuplicateIt(t *testing.T) {
	ctx := context.Background()
	for _, la := range lostAnswers {
		t.Run(la.name, func(t *testing.T) {
			f, _ := setup(t)
			c, _ := faultClient(t, f)
			n := f.AddIssue(full, "maint", "t", "b")
			f.AddComment(full, n, "maint", "the plan") // same text, someone else's
			f.InjectFault("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", 1, la.fault)
			cm, err := c.CreateComment(ctx, owner, name, n, "the plan")
			if err != nil {
				t.Fatal(err)
			}
			var mine []ghfake.Comment
			for _, x := range f.Comments(full, n) {
				if x.Author == ghfake.DefaultActor {
					mine = append(mine, x)
				}
			}
			if len(mine) != 1 || mine[0].ID != cm.GetID() {
				t.Fatalf("comments by planex: %+v (returned %d)", mine, cm.GetID())
			}
			if got := countRoute(f, "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"); got != 1 {
				t.Errorf("the comment was sent %d times", got)
			}
		})
	}
}

func TestLostAnswersToOtherCreates(t *testing.T) {
	ctx := context.Background()
	for _, la := range lostAnswers {
		t.Run(la.name, func(t *testing.T) {
			f, _ := setup(t)
			c, _ := faultClient(t, f)

			f.InjectFault("POST /repos/{owner}/{repo}/issues", 1, la.fault)
			is, err := c.CreateIssue(ctx, owner, name, "planex: x", "do x")
			if err != nil || is.GetNumber() == 0 {
				t.Fatalf("issue: %v %v", err, is)
			}

			f.InjectFault("POST /repos/{owner}/{repo}/pulls", 1, la.fault)
			pr, err := c.CreatePR(ctx, owner, name, NewPR{Title: "planex: x", Head: "planex/1-x", Base: "trunk", Body: "report"})
			if err != nil {
				t.Fatal(err)
			}
			prs := f.PullRequests(full)
			if len(prs) != 1 || prs[0].Number != pr.GetNumber() {
				t.Fatalf("pull requests: %+v, returned #%d", prs, pr.GetNumber())
			}
			f.SetPRFiles(full, pr.GetNumber(), []ghfake.PRFile{{Filename: "x.go", Status: "modified", Additions: 1, Patch: patch}}, "")

			f.InjectFault("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", 1, la.fault)
			rv, err := c.CreateReview(ctx, owner, name, pr.GetNumber(), NewReview{Event: "COMMENT", Body: "summary",
				Comments: []ReviewComment{{Path: "x.go", Line: 2, Body: "doc comment"}}})
			if err != nil || len(f.Reviews(full, pr.GetNumber())) != 1 || rv.GetID() != f.Reviews(full, pr.GetNumber())[0].ID {
				t.Fatalf("reviews: %v %+v", err, f.Reviews(full, pr.GetNumber()))
			}

			human := f.AddReviewComment(full, pr.GetNumber(), "maint", "x.go", 2, "rename B")
			f.InjectFault("POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies", 1, la.fault)
			if _, err := c.ReplyToReviewComment(ctx, owner, name, pr.GetNumber(), human, "done"); err != nil {
				t.Fatal(err)
			}
			replies := 0
			for _, rc := range f.ReviewComments(full, pr.GetNumber()) {
				if rc.InReplyTo == human {
					replies++
				}
			}
			if replies != 1 {
				t.Errorf("%d replies", replies)
			}

			// Deduplicated by GitHub: sent again.
			f.InjectFault("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", 1, la.fault)
			if err := c.AddLabels(ctx, owner, name, is.GetNumber(), "planex:planned"); err != nil {
				t.Fatal(err)
			}
			if got := countRoute(f, "POST /repos/{owner}/{repo}/issues/{issue_number}/labels"); got != 2 {
				t.Errorf("labels sent %d times, want 2 (the repeat is harmless)", got)
			}
			if got, _ := f.Issue(full, is.GetNumber()); len(got.Labels) != 1 {
				t.Errorf("labels: %v", got.Labels)
			}
			if issues := countRoute(f, "POST /repos/{owner}/{repo}/issues"); issues != 1 {
				t.Errorf("the issue was sent %d times", issues)
			}
		})
	}
}

func TestPullRequestThatExistsIsAdopted(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	existing := f.AddPullRequest(full, ghfake.PullRequest{Title: "planex: x", Head: "planex/1-x", Base: "trunk", Body: "old"})
	pr, err := c.CreatePR(ctx, owner, name, NewPR{Title: "planex: x", Head: "planex/1-x", Base: "trunk", Body: "new"})
	if err != nil || pr.GetNumber() != existing {
		t.Fatalf("got #%d, %v; want the existing #%d", pr.GetNumber(), err, existing)
	}
	if len(f.PullRequests(full)) != 1 {
		t.Fatal("a second pull request was opened")
	}
}

func TestPrimaryRateLimitIsWaitedFor(t *testing.T) {
	ctx := context.Background()
	for _, status := range []int{403, 429} {
		f, _ := setup(t)
		c, waits := faultClient(t, f)
		n := f.AddIssue(full, "maint", "t", "b")
		reset := time.Now().Add(30 * time.Second)
		f.InjectFault("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", 2, ghfake.PrimaryRateLimit(status, reset))
		if _, err := c.CreateComment(ctx, owner, name, n, "after the reset"); err != nil {
			t.Fatalf("%d: %v", status, err)
		}
		if len(f.Comments(full, n)) != 1 {
			t.Fatalf("%d: comments %+v", status, f.Comments(full, n))
		}
		if len(*waits) != 2 || (*waits)[0] < 25*time.Second || (*waits)[0] > 35*time.Second {
			t.Errorf("%d: waits %v, want two waits until the reset", status, *waits)
		}
	}
}

func TestPrimaryRateLimitBeyondTheBoundFailsSayingWhen(t *testing.T) {
	ctx := context.Background()
	f, _ := setup(t)
	c, waits := faultClient(t, f)
	n := f.AddIssue(full, "maint", "t", "b")
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	f.InjectFault("PATCH /repos/{owner}/{repo}/issues/{issue_number}", 1, ghfake.PrimaryRateLimit(403, reset))
	f.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}", 1, ghfake.PrimaryRateLimit(403, reset))
	_, err := c.GetIssue(ctx, owner, name, n)
	var rl *RateLimitError
	if !errors.As(err, &rl) || !rl.Primary || !rl.Reset.Equal(reset) {
		t.Fatalf("want a primary RateLimitError with the reset, got %v", err)
	}
	if !strings.Contains(err.Error(), reset.UTC().Format("15:04:05 UTC")) || !strings.Contains(err.Error(), "getting issue") {
		t.Errorf("the error does not say what and until when: %v", err)
	}
	if len(*waits) != 0 {
		t.Errorf("waited %v for a reset two hours away", *waits)
	}
	// The next request is not refused on the client's side.
	if _, err := c.GetIssue(ctx, owner, name, n); err != nil {
		t.Errorf("after the refusal: %v", err)
	}
}

func TestSpentBudgetIsWaitedForBeforeTheNextRequest(t *testing.T) {
	ctx := context.Background()
	f, _ := setup(t)
	c, waits := faultClient(t, f)
	n := f.AddIssue(full, "maint", "t", "b")
	f.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}", 1, ghfake.LastRequestBeforeLimit(time.Now().Add(20*time.Second)))
	if _, err := c.GetIssue(ctx, owner, name, n); err != nil {
		t.Fatal(err)
	}
	if len(*waits) != 0 {
		t.Fatalf("waited before the budget was spent: %v", *waits)
	}
	// go-github alone would refuse this without sending it.
	if _, err := c.CreateComment(ctx, owner, name, n, "x"); err != nil {
		t.Fatal(err)
	}
	if len(*waits) != 1 || (*waits)[0] < 15*time.Second {
		t.Errorf("waits %v, want one until the reset", *waits)
	}
	if got := countRoute(f, "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"); got != 1 {
		t.Errorf("%d comment requests", got)
	}
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	f, c := setup(t)
	n := f.AddIssue(full, "maint", "t", "b")
	f.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}", 1, ghfake.PrimaryRateLimit(403, time.Now().Add(10*time.Minute)))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(f.Requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := c.GetIssue(ctx, owner, name, n)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the cancellation, got %v", err)
	}
}

func TestLostAnswerToAReadIsRetried(t *testing.T) {
	ctx := context.Background()
	f, _ := setup(t)
	c, _ := faultClient(t, f)
	n := f.AddIssue(full, "maint", "t", "b")
	f.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}", 1, ghfake.LostConnection())
	f.InjectFault("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", 1, ghfake.Timeout())
	if _, err := c.GetIssue(ctx, owner, name, n); err != nil {
		t.Fatal(err)
	}
	cm, err := c.CreateComment(ctx, owner, name, n, "status")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EditComment(ctx, owner, name, cm.GetID(), "status v2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Comment(full, cm.GetID()); got.Body != "status v2" {
		t.Errorf("body %q", got.Body)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
