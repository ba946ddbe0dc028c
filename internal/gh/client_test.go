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

const (
	owner = "octo"
	name  = "widgets"
	full  = owner + "/" + name
)

var fastRetry = RetryPolicy{MaxAttempts: 4, MaxElapsed: 5 * time.Second, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, SettleDelay: time.Millisecond}

func setup(t *testing.T, opts ...ghfake.Option) (*ghfake.Fake, *Client) {
	t.Helper()
	f := ghfake.New(t, opts...)
	f.AddRepo(full, ghfake.Repo{DefaultBranch: "trunk"})
	f.SetPermission(full, "maint", "maintain")
	f.SetPermission(full, "tri", "triage")
	return f, newClient(t, f, f.URL())
}

func newClient(t *testing.T, f *ghfake.Fake, apiURL string) *Client {
	t.Helper()
	c, err := NewClient(context.Background(), Options{Token: "secret", APIURL: apiURL, ServerURL: f.ServerURL(),
		HTTPClient: f.HTTPClient(), Retry: fastRetry, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewClientURLs(t *testing.T) {
	tests := []struct {
		api, server       string
		wantBase, wantWeb string
		wantErr           bool
	}{
		{"", "", "https://api.github.com/", "https://github.com", false},
		{"https://api.github.com", "https://github.com", "https://api.github.com/", "https://github.com", false},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com", "https://ghe.example.com/api/v3/", "https://ghe.example.com", false},
		{"https://ghe.example.com/api/v3/", "", "https://ghe.example.com/api/v3/", "https://ghe.example.com", false},
		{"not a url", "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.api, func(t *testing.T) {
			c, err := NewClient(context.Background(), Options{APIURL: tt.api, ServerURL: tt.server})
			if tt.wantErr {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.GitHub().BaseURL.String(); got != tt.wantBase {
				t.Errorf("base = %s, want %s", got, tt.wantBase)
			}
			if c.ServerURL() != tt.wantWeb {
				t.Errorf("server = %s, want %s", c.ServerURL(), tt.wantWeb)
			}
		})
	}
}

func TestEnterpriseServerByURLAlone(t *testing.T) {
	ctx := context.Background()
	f, _ := setup(t)
	c := newClient(t, f, strings.TrimSuffix(f.EnterpriseURL(), "/"))
	n := f.AddIssue(full, "maint", "t", "b")
	if _, err := c.CreateComment(ctx, owner, name, n, "hello"); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 || reqs[0].Route != "POST /repos/{owner}/{repo}/issues/{issue_number}/comments" {
		t.Fatalf("requests: %+v", reqs)
	}
	if got := f.Comments(full, n); len(got) != 1 || !strings.HasPrefix(got[0].Body, "hello\n\n<!-- planex:req ") {
		t.Fatalf("comments: %+v", got)
	}
}

func TestTokenIdentifiesActor(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	f.SetToken("secret", "maint")
	n := f.AddIssue(full, "maint", "t", "b")
	cm, err := c.CreateComment(ctx, owner, name, n, "x")
	if err != nil || cm.GetUser().GetLogin() != "maint" {
		t.Fatalf("%v %v", err, cm.GetUser().GetLogin())
	}
}

func TestRetries(t *testing.T) {
	route := "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	tests := []struct {
		name      string
		fault     ghfake.Fault
		times     int
		wantErr   string
		wantTries int
	}{
		{"502 twice then ok", ghfake.ServerError(502), 2, "", 3},
		{"503 with Retry-After", ghfake.Fault{Status: 503, Header: map[string]string{"Retry-After": "0"}}, 1, "", 2},
		{"5xx beyond the attempt budget", ghfake.ServerError(500), 10, "500", 4},
		{"secondary rate limit", ghfake.SecondaryRateLimit(time.Second), 1, "", 2},
		{"plain 403 is not retried", ghfake.Forbidden("Must have admin rights to Repository."), 5, "403", 1},
		{"422 is not retried", ghfake.Fault{Status: 422, Body: `{"message":"Validation Failed"}`}, 5, "422", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			f, c := setup(t)
			n := f.AddIssue(full, "maint", "t", "b")
			f.InjectFault(route, tt.times, tt.fault)
			_, err := c.CreateComment(ctx, owner, name, n, "x")
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want it to mention %s", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "commenting on octo/widgets#1") {
				t.Errorf("error does not say what was being done: %v", err)
			}
			if got := countRoute(f, route); got != tt.wantTries {
				t.Fatalf("%d requests, want %d", got, tt.wantTries)
			}
			wantComments := 0
			if tt.wantErr == "" {
				wantComments = 1
			}
			if got := len(f.Comments(full, n)); got != wantComments {
				t.Fatalf("%d comments, want %d", got, wantComments)
			}
		})
	}
}

// countRoute counts the requests the fake received for route.
func countRoute(f *ghfake.Fake, route string) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

func TestNotFoundAfterCreateIsRetried(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	n := f.AddIssue(full, "maint", "t", "b")
	cm, err := c.CreateComment(ctx, owner, name, n, "status")
	if err != nil {
		t.Fatal(err)
	}
	f.InjectFault("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", 2, ghfake.NotFound())
	if _, err := c.EditComment(ctx, owner, name, cm.GetID(), "status: wave 1"); err != nil {
		t.Fatalf("edit right after create: %v", err)
	}
	got, _ := f.Comment(full, cm.GetID())
	if got.Body != "status: wave 1" {
		t.Fatalf("body = %q", got.Body)
	}
}

func TestNotFoundWithoutCreateIsNotRetried(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	_, err := c.GetFileContent(ctx, owner, name, "", ".github/planex.yml")
	if !IsNotFound(err) {
		t.Fatalf("want not found, got %v", err)
	}
	if got := len(f.Requests()); got != 1 {
		t.Fatalf("%d requests, want 1", got)
	}
}

func TestPermissionErrorsNameTheFix(t *testing.T) {
	ctx := context.Background()
	t.Run("actions may not create pull requests", func(t *testing.T) {
		f := ghfake.New(t)
		f.AddRepo(full, ghfake.Repo{ActionsCannotCreatePRs: true})
		c := newClient(t, f, f.URL())
		_, err := c.CreatePR(ctx, owner, name, NewPR{Title: "t", Head: "planex/1-x", Base: "main"})
		var pe *PermissionError
		if !errors.As(err, &pe) {
			t.Fatalf("want PermissionError, got %v", err)
		}
		if !strings.Contains(err.Error(), "Allow GitHub Actions to create and approve pull requests") {
			t.Fatalf("message does not name the setting: %v", err)
		}
	})
	t.Run("resource not accessible by integration", func(t *testing.T) {
		f, c := setup(t)
		n := f.AddIssue(full, "maint", "t", "b")
		f.InjectFault("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", 1, ghfake.Forbidden("Resource not accessible by integration"))
		err := c.AddLabels(ctx, owner, name, n, "planex:planned")
		var pe *PermissionError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "issues: write") || !strings.Contains(err.Error(), "permissions:") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestWritesAreSerialised(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	n := f.AddIssue(full, "maint", "t", "b")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.CreateComment(ctx, owner, name, n, "x"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := f.MaxConcurrentWrites(); got != 1 {
		t.Fatalf("max concurrent writes = %d", got)
	}
	if got := len(f.Comments(full, n)); got != 8 {
		t.Fatalf("%d comments", got)
	}
}

func TestPermission(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	f.AddUser("outsider", "User")
	tests := []struct{ login, perm, role string }{
		{"octo", "admin", "admin"},
		{"maint", "write", "maintain"},
		{"tri", "read", "triage"},
		{"outsider", "read", "read"},
		{"nobody-at-all", "none", "none"},
	}
	for _, tt := range tests {
		got, err := c.Permission(ctx, owner, name, tt.login)
		if err != nil {
			t.Fatalf("%s: %v", tt.login, err)
		}
		if got.Permission != tt.perm || got.RoleName != tt.role {
			t.Errorf("%s: got %+v, want %s/%s", tt.login, got, tt.perm, tt.role)
		}
	}
}

func TestIssueHelpers(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	a := f.AddIssue(full, "maint", "a", "", "planex:auto")
	f.AddPullRequest(full, ghfake.PullRequest{Title: "pr", Head: "x", Labels: []string{"planex:auto"}})
	b := f.AddIssue(full, "maint", "b", "", "planex:auto")
	list, err := c.ListIssuesByLabel(ctx, owner, name, "planex:auto", "")
	if err != nil || len(list) != 2 || list[0].GetNumber() != a || list[1].GetNumber() != b {
		t.Fatalf("by label: %v %d", err, len(list))
	}
	if err := c.AddLabels(ctx, owner, name, a, "planex:planned", "planex:running"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, owner, name, a, "planex:running"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, owner, name, a, "never-there"); err != nil {
		t.Fatalf("removing an absent label: %v", err)
	}
	is, err := c.GetIssue(ctx, owner, name, a)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, l := range is.Labels {
		labels = append(labels, l.GetName())
	}
	if strings.Join(labels, ",") != "planex:auto,planex:planned" {
		t.Fatalf("labels = %v", labels)
	}
	for i := 0; i < 120; i++ {
		f.AddComment(full, a, "maint", "c")
	}
	all, err := c.ListComments(ctx, owner, name, a, time.Time{})
	if err != nil || len(all) != 120 {
		t.Fatalf("comments: %v %d", err, len(all))
	}
	if _, err := c.AddCommentReaction(ctx, owner, name, all[0].GetID(), ReactionEyes); err != nil {
		t.Fatal(err)
	}
	if err := c.AddIssueReaction(ctx, owner, name, a, ReactionRocket); err != nil {
		t.Fatal(err)
	}
	cm, _ := f.Comment(full, all[0].GetID())
	if len(cm.Reactions) != 1 || cm.Reactions[0].Content != "eyes" {
		t.Fatalf("reactions: %+v", cm.Reactions)
	}
}

func TestRepoHelpers(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	f.SetFile(full, "trunk", ".github/planex.yml", []byte("concurrency: 3\n"))
	branch, err := c.DefaultBranch(ctx, owner, name)
	if err != nil || branch != "trunk" {
		t.Fatalf("%v %q", err, branch)
	}
	data, err := c.GetFileContent(ctx, owner, name, branch, ".github/planex.yml")
	if err != nil || string(data) != "concurrency: 3\n" {
		t.Fatalf("%v %q", err, data)
	}
}

const patch = "@@ -1,2 +1,3 @@\n package x\n+func B() {}\n func A() {}\n"

func TestPullRequestHelpers(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	pr, err := c.FindPRByHead(ctx, owner, name, "planex/7-x")
	if err != nil || pr != nil {
		t.Fatalf("before create: %v %v", err, pr)
	}
	created, err := c.CreatePR(ctx, owner, name, NewPR{Title: "planex: x", Head: "planex/7-x", Base: "trunk", Body: "report", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	pr, err = c.FindPRByHead(ctx, owner, name, "planex/7-x")
	if err != nil || pr == nil || pr.GetNumber() != created.GetNumber() {
		t.Fatalf("after create: %v %v", err, pr)
	}
	body := "report v2"
	if _, err := c.UpdatePR(ctx, owner, name, pr.GetNumber(), PRUpdate{Body: &body}); err != nil {
		t.Fatal(err)
	}
	if err := c.RequestReviewers(ctx, owner, name, pr.GetNumber(), "maint"); err != nil {
		t.Fatal(err)
	}
	got := f.PullRequests(full)[0]
	if got.Body != "report v2" || !got.Draft || got.RequestedReviewers[0] != "maint" {
		t.Fatalf("pr state: %+v", got)
	}

	f.SetPRFiles(full, pr.GetNumber(), []ghfake.PRFile{{Filename: "x.go", Status: "modified", Additions: 1, Patch: patch}}, "diff --git a/x.go b/x.go\n"+patch)
	files, err := c.PRFiles(ctx, owner, name, pr.GetNumber())
	if err != nil || len(files) != 1 || files[0].GetFilename() != "x.go" {
		t.Fatalf("files: %v %v", err, files)
	}
	diff, err := c.PRDiff(ctx, owner, name, pr.GetNumber())
	if err != nil || !strings.Contains(diff, "+func B() {}") {
		t.Fatalf("diff: %v %q", err, diff)
	}
	rv, err := c.CreateReview(ctx, owner, name, pr.GetNumber(), NewReview{Event: "COMMENT", Body: "summary",
		Comments: []ReviewComment{{Path: "x.go", Line: 2, Body: "B needs a doc comment"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateReview(ctx, owner, name, pr.GetNumber(), NewReview{Event: "COMMENT", Body: "summary",
		Comments: []ReviewComment{{Path: "x.go", Line: 9, Body: "outside the diff"}}}); err == nil {
		t.Fatal("a comment outside the diff was accepted")
	}
	if err := c.UpdateReview(ctx, owner, name, pr.GetNumber(), rv.GetID(), "summary v2"); err != nil {
		t.Fatal(err)
	}
	reviews, err := c.ListReviews(ctx, owner, name, pr.GetNumber())
	if err != nil || len(reviews) != 1 || reviews[0].GetBody() != "summary v2" {
		t.Fatalf("reviews: %v %v", err, reviews)
	}
	human := f.AddReviewComment(full, pr.GetNumber(), "maint", "x.go", 2, "/planex rename B")
	reply, err := c.ReplyToReviewComment(ctx, owner, name, pr.GetNumber(), human, "done")
	if err != nil || reply.GetInReplyTo() != human {
		t.Fatalf("reply: %v %v", err, reply)
	}
	if _, err := c.AddReviewCommentReaction(ctx, owner, name, human, ReactionEyes); err != nil {
		t.Fatal(err)
	}
	comments, err := c.ListReviewComments(ctx, owner, name, pr.GetNumber())
	if err != nil || len(comments) != 3 {
		t.Fatalf("review comments: %v %d", err, len(comments))
	}
}

// TestPublishFiltersEveryText: with Options.Publish, every title and body
// planex sends (issues, comments, their edits, pull requests and their
// updates, reviews and review comments) passes through it first.
func TestPublishFiltersEveryText(t *testing.T) {
	ctx := context.Background()
	f := ghfake.New(t)
	f.AddRepo(full, ghfake.Repo{DefaultBranch: "trunk"})
	c, err := NewClient(ctx, Options{Token: "secret", APIURL: f.URL(), ServerURL: f.ServerURL(), HTTPClient: f.HTTPClient(), Retry: fastRetry,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Publish: func(s string) string { return strings.ReplaceAll(s, "hunter2", "[redacted]") }})
	if err != nil {
		t.Fatal(err)
	}
	issue, err := c.CreateIssue(ctx, owner, name, "title hunter2", "body hunter2")
	if err != nil {
		t.Fatal(err)
	}
	cm, err := c.CreateComment(ctx, owner, name, issue.GetNumber(), "comment hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EditComment(ctx, owner, name, cm.GetID(), "edited hunter2"); err != nil {
		t.Fatal(err)
	}
	pr, err := c.CreatePR(ctx, owner, name, NewPR{Title: "pr hunter2", Head: "planex/1-x", Base: "trunk", Body: "report hunter2"})
	if err != nil {
		t.Fatal(err)
	}
	body := "report v2 hunter2"
	if _, err := c.UpdatePR(ctx, owner, name, pr.GetNumber(), PRUpdate{Body: &body}); err != nil {
		t.Fatal(err)
	}
	f.SetPRFiles(full, pr.GetNumber(), []ghfake.PRFile{{Filename: "x.go", Status: "modified", Additions: 1, Patch: patch}}, "diff --git a/x.go b/x.go\n"+patch)
	if _, err := c.CreateReview(ctx, owner, name, pr.GetNumber(), NewReview{Event: "COMMENT", Body: "review hunter2",
		Comments: []ReviewComment{{Path: "x.go", Line: 2, Body: "line hunter2"}}}); err != nil {
		t.Fatal(err)
	}
	var sent []string
	if i, ok := f.Issue(full, issue.GetNumber()); ok {
		sent = append(sent, i.Title, i.Body)
	}
	for _, r := range f.Reviews(full, pr.GetNumber()) {
		sent = append(sent, r.Body)
	}
	for _, rc := range f.ReviewComments(full, pr.GetNumber()) {
		sent = append(sent, rc.Body)
	}
	for _, cm := range f.Comments(full, issue.GetNumber()) {
		sent = append(sent, cm.Body)
	}
	for _, p := range f.PullRequests(full) {
		sent = append(sent, p.Title, p.Body)
	}
	all := strings.Join(sent, "\n")
	if strings.Contains(all, "hunter2") || strings.Count(all, "[redacted]") != 7 {
		t.Errorf("published:\n%s", all)
	}
}
