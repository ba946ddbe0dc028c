package ghfake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

const repoName = "octo/widgets"

func newFake(t *testing.T, opts ...Option) (*Fake, *github.Client) {
	t.Helper()
	f := New(t, opts...)
	f.AddRepo(repoName, Repo{DefaultBranch: "trunk"})
	f.SetPermission(repoName, "maint", "maintain")
	f.SetPermission(repoName, "reader", "read")
	f.AddUser("stranger", "User")
	return f, f.Client("bot-token")
}

func TestIssueCommentLifecycle(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	n := f.AddIssue(repoName, "maint", "Add rate limiting", "Please.", "planex")

	issue, _, err := c.Issues.Get(ctx, "octo", "widgets", n)
	if err != nil {
		t.Fatal(err)
	}
	if issue.GetTitle() != "Add rate limiting" || issue.GetUser().GetLogin() != "maint" || len(issue.Labels) != 1 || issue.IsPullRequest() {
		t.Fatalf("issue = %+v", issue)
	}
	if !strings.HasPrefix(issue.GetHTMLURL(), f.ServerURL()+"/octo/widgets/issues/") {
		t.Errorf("html_url = %s", issue.GetHTMLURL())
	}

	var ids []int64
	for i := 0; i < 5; i++ {
		cm, resp, err := c.Issues.CreateComment(ctx, "octo", "widgets", n, &github.IssueComment{Body: github.String("comment " + string(rune('a'+i)))})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusCreated || cm.GetUser().GetLogin() != DefaultActor || cm.GetUser().GetType() != "Bot" {
			t.Fatalf("create: status %d, %+v", resp.StatusCode, cm)
		}
		ids = append(ids, cm.GetID())
	}

	// Pagination: 2 per page gives 3 pages, in creation order.
	var got []string
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 2}}
	pages := 0
	for {
		list, resp, err := c.Issues.ListComments(ctx, "octo", "widgets", n, opt)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, cm := range list {
			got = append(got, cm.GetBody())
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if pages != 3 || strings.Join(got, ",") != "comment a,comment b,comment c,comment d,comment e" {
		t.Fatalf("pages=%d got=%v", pages, got)
	}

	edited, _, err := c.Issues.EditComment(ctx, "octo", "widgets", ids[0], &github.IssueComment{Body: github.String("status: done")})
	if err != nil || edited.GetBody() != "status: done" {
		t.Fatalf("edit: %v %+v", err, edited)
	}
	if _, err := c.Issues.DeleteComment(ctx, "octo", "widgets", ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Issues.GetComment(ctx, "octo", "widgets", ids[1]); !isStatus(err, 404) {
		t.Fatalf("deleted comment: %v", err)
	}
	if n := len(f.Comments(repoName, n)); n != 4 {
		t.Fatalf("%d comments left", n)
	}

	// Reactions: 201 then 200 for the same content.
	_, resp, err := c.Reactions.CreateIssueCommentReaction(ctx, "octo", "widgets", ids[2], "eyes")
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("reaction: %v %v", err, resp)
	}
	_, resp, err = c.Reactions.CreateIssueCommentReaction(ctx, "octo", "widgets", ids[2], "eyes")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("repeated reaction: %v %v", err, resp)
	}
	if _, _, err := c.Reactions.CreateIssueReaction(ctx, "octo", "widgets", n, "rocket"); err != nil {
		t.Fatal(err)
	}
	cm, _ := f.Comment(repoName, ids[2])
	is, _ := f.Issue(repoName, n)
	if len(cm.Reactions) != 1 || cm.Reactions[0].Content != "eyes" || len(is.Reactions) != 1 || is.Reactions[0].Content != "rocket" {
		t.Fatalf("reactions: comment %+v issue %+v", cm.Reactions, is.Reactions)
	}
}

func TestCommentsSince(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f, c := newFake(t, WithClock(clock))
	n := f.AddIssue(repoName, "maint", "t", "b")
	f.AddComment(repoName, n, "maint", "old")
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	f.AddComment(repoName, n, "maint", "new")
	since := time.Date(2024, 5, 1, 10, 30, 0, 0, time.UTC)
	list, _, err := c.Issues.ListComments(ctx, "octo", "widgets", n, &github.IssueListCommentsOptions{Since: &since})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].GetBody() != "new" {
		t.Fatalf("since filter: %d comments", len(list))
	}
}

func TestLabelsAndListByLabel(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	a := f.AddIssue(repoName, "maint", "a", "", "planex:auto")
	b := f.AddIssue(repoName, "maint", "b", "", "planex:auto", "bug")
	f.AddIssue(repoName, "maint", "c", "", "bug")
	closed := f.AddIssue(repoName, "maint", "d", "", "planex:auto")
	if _, _, err := c.Issues.Edit(ctx, "octo", "widgets", closed, &github.IssueRequest{State: github.String("closed")}); err != nil {
		t.Fatal(err)
	}

	// go-github's AddLabelsToIssue sends a bare JSON array, which GitHub's
	// description does not allow; the object form is what the schema names.
	req, _ := c.NewRequest("POST", "repos/octo/widgets/issues/1/labels", map[string][]string{"labels": {"planex:planned"}})
	var labels []*github.Label
	if _, err := c.Do(ctx, req, &labels); err != nil {
		t.Fatal(err)
	}
	if len(labels) != 2 {
		t.Fatalf("labels after add: %v", labels)
	}
	if !contains(f.Labels(repoName), "planex:planned") {
		t.Fatalf("label was not created on the repository: %v", f.Labels(repoName))
	}
	if _, err := c.Issues.RemoveLabelForIssue(ctx, "octo", "widgets", a, "planex:planned"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Issues.RemoveLabelForIssue(ctx, "octo", "widgets", a, "planex:planned"); !isStatus(err, 404) {
		t.Fatalf("removing an absent label: %v", err)
	}

	list, _, err := c.Issues.ListByRepo(ctx, "octo", "widgets", &github.IssueListByRepoOptions{Labels: []string{"planex:auto"}, State: "open", Direction: "asc"})
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, is := range list {
		nums = append(nums, is.GetNumber())
	}
	if len(nums) != 2 || nums[0] != a || nums[1] != b {
		t.Fatalf("open planex:auto issues = %v, want [%d %d]", nums, a, b)
	}
}

func TestPermission(t *testing.T) {
	ctx := context.Background()
	_, c := newFake(t)
	tests := []struct {
		login      string
		permission string
		role       string
		status     int
	}{
		{"octo", "admin", "admin", 200},
		{"maint", "write", "maintain", 200},
		{"reader", "read", "read", 200},
		{"stranger", "read", "read", 200},
		{"ghost-nobody", "", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.login, func(t *testing.T) {
			req, _ := c.NewRequest("GET", "repos/octo/widgets/collaborators/"+tt.login+"/permission", nil)
			var out struct {
				Permission string `json:"permission"`
				RoleName   string `json:"role_name"`
				User       struct {
					Login string `json:"login"`
				} `json:"user"`
			}
			resp, err := c.Do(ctx, req, &out)
			if tt.status == 404 {
				if !isStatus(err, 404) {
					t.Fatalf("want 404, got %v", err)
				}
				return
			}
			if err != nil || resp.StatusCode != tt.status {
				t.Fatal(err)
			}
			if out.Permission != tt.permission || out.RoleName != tt.role || out.User.Login != tt.login {
				t.Fatalf("got %+v", out)
			}
		})
	}
}

func TestPullRequestFlow(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	pr, resp, err := c.PullRequests.Create(ctx, "octo", "widgets", &github.NewPullRequest{
		Title: github.String("planex: rate limiting"), Head: github.String("planex/1-rate-limiting"),
		Base: github.String("trunk"), Body: github.String("report"), Draft: github.Bool(true),
	})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v", err)
	}
	if !pr.GetDraft() || pr.GetHead().GetRef() != "planex/1-rate-limiting" || pr.GetHead().GetRepo().GetFullName() != repoName || pr.GetBase().GetRef() != "trunk" {
		t.Fatalf("pr = %+v", pr)
	}
	// A second one for the same head is refused.
	_, _, err = c.PullRequests.Create(ctx, "octo", "widgets", &github.NewPullRequest{
		Title: github.String("dup"), Head: github.String("planex/1-rate-limiting"), Base: github.String("trunk")})
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response.StatusCode != 422 || !strings.Contains(ge.Error(), "already exists") {
		t.Fatalf("duplicate: %v", err)
	}
	found, _, err := c.PullRequests.List(ctx, "octo", "widgets", &github.PullRequestListOptions{Head: "octo:planex/1-rate-limiting", State: "open"})
	if err != nil || len(found) != 1 || found[0].GetNumber() != pr.GetNumber() {
		t.Fatalf("list by head: %v %d", err, len(found))
	}
	none, _, err := c.PullRequests.List(ctx, "octo", "widgets", &github.PullRequestListOptions{Head: "octo:other", State: "open"})
	if err != nil || len(none) != 0 {
		t.Fatalf("list by other head: %v %d", err, len(none))
	}
	upd, _, err := c.PullRequests.Edit(ctx, "octo", "widgets", pr.GetNumber(), &github.PullRequest{Body: github.String("new report")})
	if err != nil || upd.GetBody() != "new report" {
		t.Fatalf("edit: %v", err)
	}
	if _, _, err := c.PullRequests.RequestReviewers(ctx, "octo", "widgets", pr.GetNumber(), github.ReviewersRequest{Reviewers: []string{"maint"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.PullRequests.RequestReviewers(ctx, "octo", "widgets", pr.GetNumber(), github.ReviewersRequest{Reviewers: []string{"stranger"}}); !isStatus(err, 422) {
		t.Fatalf("non-collaborator reviewer: %v", err)
	}
	got := f.PullRequests(repoName)
	if len(got) != 1 || got[0].RequestedReviewers[0] != "maint" || got[0].Body != "new report" {
		t.Fatalf("state: %+v", got)
	}
	// The pull request shares the issue number space and labels.
	req, _ := c.NewRequest("POST", fmt.Sprintf("repos/octo/widgets/issues/%d/labels", pr.GetNumber()), map[string][]string{"labels": {"planex:running"}})
	if _, err := c.Do(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	is, _ := f.Issue(repoName, pr.GetNumber())
	if !is.IsPR || is.Labels[0] != "planex:running" {
		t.Fatalf("issue view of PR: %+v", is)
	}
}

const patch = "@@ -1,3 +1,4 @@\n package x\n-func A() {}\n+func A() int { return 1 }\n+func B() {}\n \n"

func TestReviews(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	n := f.AddPullRequest(repoName, PullRequest{Title: "t", Head: "feature", Files: []PRFile{{Filename: "x.go", Status: "modified", Additions: 2, Deletions: 1, Patch: patch}}, Diff: "diff --git a/x.go b/x.go\n" + patch})

	files, _, err := c.PullRequests.ListFiles(ctx, "octo", "widgets", n, nil)
	if err != nil || len(files) != 1 || files[0].GetPatch() != patch {
		t.Fatalf("files: %v %v", err, files)
	}
	diff, _, err := c.PullRequests.GetRaw(ctx, "octo", "widgets", n, github.RawOptions{Type: github.Diff})
	if err != nil || !strings.HasPrefix(diff, "diff --git") {
		t.Fatalf("diff: %v %q", err, diff)
	}

	// Own pull request: the bot cannot approve it.
	if _, _, err := c.PullRequests.CreateReview(ctx, "octo", "widgets", n, &github.PullRequestReviewRequest{Event: github.String("APPROVE")}); !isStatus(err, 422) {
		t.Fatalf("approve own PR: %v", err)
	}
	tests := []struct {
		name string
		line int
		side string
		ok   bool
	}{
		{"added line", 2, "RIGHT", true},
		{"context line", 1, "RIGHT", true},
		{"deleted line on left", 2, "LEFT", true},
		{"line outside the diff", 40, "RIGHT", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.PullRequests.CreateReview(ctx, "octo", "widgets", n, &github.PullRequestReviewRequest{
				Event: github.String("COMMENT"), Body: github.String("summary"),
				Comments: []*github.DraftReviewComment{{Path: github.String("x.go"), Line: github.Int(tt.line), Side: github.String(tt.side), Body: github.String("nit")}},
			})
			if tt.ok != (err == nil) {
				t.Fatalf("ok=%v err=%v", tt.ok, err)
			}
		})
	}
	reviews, _, err := c.PullRequests.ListReviews(ctx, "octo", "widgets", n, nil)
	if err != nil || len(reviews) != 3 || reviews[0].GetState() != "COMMENTED" {
		t.Fatalf("reviews: %v %d", err, len(reviews))
	}
	if _, _, err := c.PullRequests.UpdateReview(ctx, "octo", "widgets", n, reviews[0].GetID(), "replaced"); err != nil {
		t.Fatal(err)
	}
	if f.Reviews(repoName, n)[0].Body != "replaced" {
		t.Fatal("review body not updated")
	}

	human := f.AddReviewComment(repoName, n, "maint", "x.go", 3, "/planex rename B to C")
	// go-github's CreateCommentInReplyTo omits commit_id and path, which the
	// description requires; the replies endpoint is the valid way.
	req, _ := c.NewRequest("POST", fmt.Sprintf("repos/octo/widgets/pulls/%d/comments/%d/replies", n, human), map[string]string{"body": "done in abc123"})
	reply := new(github.PullRequestComment)
	_, err = c.Do(ctx, req, reply)
	if err != nil || reply.GetInReplyTo() != human || reply.GetPath() != "x.go" {
		t.Fatalf("reply: %v %+v", err, reply)
	}
	all, _, err := c.PullRequests.ListComments(ctx, "octo", "widgets", n, nil)
	if err != nil || len(all) != 5 {
		t.Fatalf("review comments: %v %d", err, len(all))
	}
}

func TestContentsAndRepo(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	f.SetFile(repoName, "", ".github/planex.yml", []byte("concurrency: 2\n"))
	f.SetFile(repoName, "feature", ".github/planex.yml", []byte("concurrency: 9\n"))
	repo, _, err := c.Repositories.Get(ctx, "octo", "widgets")
	if err != nil || repo.GetDefaultBranch() != "trunk" {
		t.Fatalf("repo: %v %+v", err, repo)
	}
	fc, _, _, err := c.Repositories.GetContents(ctx, "octo", "widgets", ".github/planex.yml", &github.RepositoryContentGetOptions{Ref: "trunk"})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := fc.GetContent(); s != "concurrency: 2\n" {
		t.Fatalf("content %q", s)
	}
	if _, _, _, err := c.Repositories.GetContents(ctx, "octo", "widgets", ".github/missing.yml", nil); !isStatus(err, 404) {
		t.Fatalf("missing: %v", err)
	}
}

func TestInvalidRequestsAreRefusedAndRecorded(t *testing.T) {
	ctx := context.Background()
	var reported []string
	f, c := newFake(t, WithInvalidRequestHook(func(m string) { reported = append(reported, m) }))
	n := f.AddIssue(repoName, "maint", "t", "b")
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		status int
	}{
		{"bad reaction content", "POST", "repos/octo/widgets/issues/comments/1/reactions", map[string]string{"content": "thumbsup"}, 422},
		{"comment without body", "POST", "repos/octo/widgets/issues/1/comments", map[string]string{"text": "x"}, 422},
		{"unknown query parameter", "GET", "repos/octo/widgets/issues?label=planex", nil, 422},
		{"unknown route", "GET", "repos/octo/widgets/no-such-thing", nil, 404},
		{"bad state value", "GET", "repos/octo/widgets/pulls?state=merged", nil, 422},
		{"wrong method", "DELETE", "repos/octo/widgets", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Errors())
			req, err := c.NewRequest(tt.method, tt.path, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Do(ctx, req, nil)
			if !isStatus(err, tt.status) {
				t.Fatalf("want %d, got %v", tt.status, err)
			}
			if len(f.Errors()) != before+1 {
				t.Fatalf("failure not recorded: %v", f.Errors())
			}
		})
	}
	for _, m := range reported {
		t.Log(m)
	}
	if len(reported) != len(tests) {
		t.Fatalf("hook saw %d failures, want %d", len(reported), len(tests))
	}
	_ = n
}

func TestFaultsAndEnterprisePrefix(t *testing.T) {
	ctx := context.Background()
	f, _ := newFake(t)
	n := f.AddIssue(repoName, "maint", "t", "b")
	c, err := github.NewClient(f.HTTPClient()).WithAuthToken("t").WithEnterpriseURLs(f.ServerURL(), f.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	route := "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	f.InjectFault(route, 2, ServerError(502))
	for i, want := range []int{502, 502, 201} {
		_, resp, err := c.Issues.CreateComment(ctx, "octo", "widgets", n, &github.IssueComment{Body: github.String("x")})
		if resp == nil || resp.StatusCode != want {
			t.Fatalf("call %d: want %d, got %v", i, want, err)
		}
	}
	f.InjectFault("*", 1, SecondaryRateLimit(3*time.Second))
	_, _, err = c.Issues.Get(ctx, "octo", "widgets", n)
	var rl *github.AbuseRateLimitError
	if !errors.As(err, &rl) || rl.GetRetryAfter() != 3*time.Second {
		t.Fatalf("secondary rate limit: %v", err)
	}
	reqs := f.Requests()
	if !strings.HasPrefix(reqs[0].Path, "/repos/") || reqs[0].Route != route {
		t.Fatalf("request log: %+v", reqs[0])
	}
}

func isStatus(err error, status int) bool {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) {
		return ge.Response.StatusCode == status
	}
	var rl *github.AbuseRateLimitError
	if errors.As(err, &rl) {
		return rl.Response.StatusCode == status
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestLostAnswersAreAppliedFirst(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	n := f.AddIssue(repoName, "maint", "t", "b")
	route := "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	post := func(ctx context.Context, body string) (*github.Response, error) {
		_, resp, err := c.Issues.CreateComment(ctx, "octo", "widgets", n, &github.IssueComment{Body: github.String(body)})
		return resp, err
	}

	f.InjectFault(route, 1, LostResponse(502))
	if resp, err := post(ctx, "one"); resp == nil || resp.StatusCode != 502 {
		t.Fatalf("lost response: %v", err)
	}
	f.InjectFault(route, 1, LostConnection())
	if _, err := post(ctx, "two"); err == nil {
		t.Fatal("a dropped connection answered")
	}
	f.InjectFault(route, 1, Timeout())
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := post(tctx, "three")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled answer: %v", err)
	}
	var bodies []string
	for _, cm := range f.Comments(repoName, n) {
		bodies = append(bodies, cm.Body)
	}
	if strings.Join(bodies, ",") != "one,two,three" {
		t.Errorf("comments %v: every write was to be applied", bodies)
	}
	lost := 0
	for _, r := range f.Requests() {
		if r.Lost {
			lost++
		}
	}
	if lost != 3 {
		t.Errorf("%d requests marked lost", lost)
	}
	// A fault that is not Applied refuses the write.
	f.InjectFault(route, 1, ServerError(503))
	post(ctx, "four")
	if len(f.Comments(repoName, n)) != 3 {
		t.Error("a refused write was applied")
	}
}

func TestRateLimitFaults(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	n := f.AddIssue(repoName, "maint", "t", "b")
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	f.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}", 1, PrimaryRateLimit(0, reset))
	_, _, err := c.Issues.Get(ctx, "octo", "widgets", n)
	var rl *github.RateLimitError
	if !errors.As(err, &rl) || !rl.Rate.Reset.Time.Equal(reset) || rl.Response.StatusCode != 403 {
		t.Fatalf("primary limit: %v", err)
	}
	// The last request of the budget succeeds and says it was the last.
	c2 := f.Client("other")
	f.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}", 1, LastRequestBeforeLimit(reset))
	is, resp, err := c2.Issues.Get(ctx, "octo", "widgets", n)
	if err != nil || is.GetNumber() != n || resp.Rate.Remaining != 0 || !resp.Rate.Reset.Time.Equal(reset) {
		t.Fatalf("last request: %v %v %+v", err, is, resp.Rate)
	}
}

func TestWorkflowRuns(t *testing.T) {
	ctx := context.Background()
	f, c := newFake(t)
	f.SetWorkflowRun(repoName, WorkflowRun{ID: 42, Status: "in_progress"})
	run, _, err := c.Actions.GetWorkflowRunByID(ctx, "octo", "widgets", 42)
	if err != nil || run.GetStatus() != "in_progress" || run.GetRunAttempt() != 1 || run.Conclusion != nil {
		t.Fatalf("run: %v %+v", err, run)
	}
	f.SetWorkflowRun(repoName, WorkflowRun{ID: 42, Attempt: 2, Status: "completed", Conclusion: "cancelled"})
	run, _, err = c.Actions.GetWorkflowRunByID(ctx, "octo", "widgets", 42)
	if err != nil || run.GetStatus() != "completed" || run.GetConclusion() != "cancelled" || run.GetRunAttempt() != 2 {
		t.Fatalf("run: %v %+v", err, run)
	}
	if _, _, err := c.Actions.GetWorkflowRunByID(ctx, "octo", "widgets", 7); !isStatus(err, 404) {
		t.Fatalf("unknown run: %v", err)
	}
	if errs := f.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

// TestIssueLabelEvents: labels added and removed, through the API or as a
// person on GitHub, are the issue's labeled/unlabeled events, oldest
// first, with who did it, a page at a time.
func TestIssueLabelEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, c := newFake(t)
	n := f.AddIssue(repoName, "reader", "a", "")
	f.LabelIssue(repoName, n, "maint", "planex:auto")
	f.UnlabelIssue(repoName, n, "maint", "planex:auto")
	f.SetPermission(repoName, "helper", "triage")
	f.LabelIssue(repoName, n, "helper", "planex:auto")
	req, _ := c.NewRequest("POST", fmt.Sprintf("repos/octo/widgets/issues/%d/labels", n), map[string][]string{"labels": {"planex:planned"}})
	if _, err := c.Do(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	opt := &github.ListOptions{PerPage: 2}
	for pages := 0; ; pages++ {
		evs, resp, err := c.Issues.ListIssueEvents(ctx, "octo", "widgets", n, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			got = append(got, ev.GetEvent()+" "+ev.GetLabel().GetName()+" by "+ev.GetActor().GetLogin())
		}
		if resp.NextPage == 0 {
			if pages != 1 {
				t.Errorf("%d pages, want 2", pages+1)
			}
			break
		}
		opt.Page = resp.NextPage
	}
	want := []string{"labeled planex:auto by maint", "unlabeled planex:auto by maint", "labeled planex:auto by helper", "labeled planex:planned by " + DefaultActor}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs := f.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
}

// TestCommentEditAndDelete: a person's edit keeps created_at and moves
// updated_at; a deleted comment is gone (404).
func TestCommentEditAndDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f, c := newFake(t, WithClock(func() time.Time { now = now.Add(time.Minute); return now }))
	n := f.AddIssue(repoName, "maint", "a", "")
	id := f.AddComment(repoName, n, "maint", "one")
	f.EditComment(repoName, id, "two")
	cm, _, err := c.Issues.GetComment(ctx, "octo", "widgets", id)
	if err != nil {
		t.Fatal(err)
	}
	if cm.GetBody() != "two" || !cm.GetUpdatedAt().After(cm.GetCreatedAt().Time) {
		t.Fatalf("edited comment: %q created %v updated %v", cm.GetBody(), cm.GetCreatedAt(), cm.GetUpdatedAt())
	}
	f.DeleteComment(repoName, id)
	if _, _, err := c.Issues.GetComment(ctx, "octo", "widgets", id); !isStatus(err, 404) {
		t.Fatalf("deleted comment: %v", err)
	}
}
