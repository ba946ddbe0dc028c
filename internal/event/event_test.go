package event

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type obj = map[string]any

// variant loads a real payload from testdata, applies patch and writes it
// to a temporary file, returning its path.
func variant(t *testing.T, fixture string, patch func(obj)) string {
	t.Helper()
	path := filepath.Join("testdata", fixture)
	if patch == nil {
		return path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p obj
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	patch(p)
	out, _ := json.Marshal(p)
	dst := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		fixture string
		patch   func(obj)
		check   func(t *testing.T, e *Event)
	}{
		{name: "issue comment created", event: IssueComment, fixture: "issue_comment.created.json",
			check: func(t *testing.T, e *Event) {
				if e.Ignored || e.FullName() != "Codertocat/Hello-World" || e.Number != 1 || e.IsPR || e.DefaultBranch != "master" {
					t.Fatalf("%+v", e)
				}
				if e.Comment.Kind != KindIssueComment || e.Comment.ID != 492700400 || e.Comment.Author.Login != "Codertocat" || e.Comment.Author.Type != "User" ||
					!strings.HasPrefix(e.Comment.Body, "You are totally right!") {
					t.Fatalf("comment %+v", e.Comment)
				}
				if e.Issue.Title != "Spelling error in the README file" || e.Issue.Author.Login != "Codertocat" {
					t.Fatalf("issue %+v", e.Issue)
				}
			}},
		{name: "issue comment edited is ignored", event: IssueComment, fixture: "issue_comment.edited.json",
			check: ignored("comment was edited")},
		{name: "issue comment deleted is ignored", event: IssueComment, fixture: "issue_comment.deleted.json",
			check: ignored("comment was deleted")},
		{name: "comment on a pull request", event: IssueComment, fixture: "issue_comment.created.json",
			patch: func(p obj) {
				p["issue"].(obj)["pull_request"] = obj{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
				p["comment"].(obj)["body"] = "/planex add a test"
			},
			check: func(t *testing.T, e *Event) {
				if !e.IsPR || !e.Issue.IsPR || e.Comment.Body != "/planex add a test" || e.PR != nil {
					t.Fatalf("%+v", e)
				}
			}},
		{name: "comment by a bot", event: IssueComment, fixture: "issue_comment.created.json",
			patch: func(p obj) { p["comment"].(obj)["user"] = obj{"login": "planex-app[bot]", "type": "Bot"} },
			check: func(t *testing.T, e *Event) {
				if !e.Comment.Author.IsBot() {
					t.Fatalf("%+v", e.Comment.Author)
				}
			}},
		{name: "issue labeled with any label loads it; the runner compares it with the configured one", event: Issues, fixture: "issues.labeled.json",
			check: func(t *testing.T, e *Event) {
				if e.Ignored || e.Label != "bug" || e.Number != 1 {
					t.Fatalf("%+v", e)
				}
			}},
		{name: "issue labeled planex", event: Issues, fixture: "issues.labeled.json",
			patch: func(p obj) { p["label"].(obj)["name"] = "planex" },
			check: func(t *testing.T, e *Event) {
				if e.Ignored || e.Label != "planex" || e.Number != 1 || e.Issue.Title == "" {
					t.Fatalf("%+v", e)
				}
			}},
		{name: "issue opened is ignored", event: Issues, fixture: "issues.opened.json", check: ignored("issue was opened")},
		{name: "dispatch without inputs", event: WorkflowDispatch, fixture: "workflow_dispatch.event.json",
			check: func(t *testing.T, e *Event) {
				if e.Ignored || e.FullName() != "octo-org/octo-repo" || e.Ref != "refs/heads/main" || e.Number != 0 || e.Inputs.AutoApprove {
					t.Fatalf("%+v", e)
				}
			}},
		{name: "dispatch with inputs", event: WorkflowDispatch, fixture: "workflow_dispatch.event.json",
			patch: func(p obj) {
				p["inputs"] = obj{"issue": "#42", "requirement": " add caching ", "auto-approve": true, "concurrency": "3"}
			},
			check: func(t *testing.T, e *Event) {
				if e.Inputs.Issue != 42 || e.Number != 42 || e.Inputs.Requirement != "add caching" || !e.Inputs.AutoApprove || e.Inputs.Raw["concurrency"] != "3" {
					t.Fatalf("%+v", e.Inputs)
				}
			}},
		{name: "schedule", event: Schedule, fixture: "workflow_dispatch.event.json",
			patch: func(p obj) {
				for k := range p {
					delete(p, k)
				}
				p["schedule"] = "17 3 * * *"
			},
			check: func(t *testing.T, e *Event) {
				if e.Cron != "17 3 * * *" || e.Owner != "" {
					t.Fatalf("%+v", e)
				}
				if err := e.SetRepository("octo/widgets"); err != nil || e.FullName() != "octo/widgets" {
					t.Fatalf("%v %s", err, e.FullName())
				}
			}},
		{name: "review comment created", event: PullRequestReviewComment, fixture: "pull_request_review_comment.created.json",
			check: func(t *testing.T, e *Event) {
				if e.Ignored || !e.IsPR || e.Number != 2 || e.PR.HeadRef != "changes" || e.PR.BaseRef != "master" || e.PR.FromFork() {
					t.Fatalf("%+v %+v", e, e.PR)
				}
				if e.Comment.Kind != KindReviewComment || e.Comment.Path != "README.md" || e.Comment.ID != 284312630 {
					t.Fatalf("%+v", e.Comment)
				}
			}},
		{name: "review comment edited is ignored", event: PullRequestReviewComment, fixture: "pull_request_review_comment.edited.json",
			check: ignored("review comment was edited")},
		{name: "review comment on a fork", event: PullRequestReviewComment, fixture: "pull_request_review_comment.created.json",
			patch: func(p obj) {
				p["pull_request"].(obj)["head"].(obj)["repo"].(obj)["full_name"] = "mallory/Hello-World"
			},
			check: func(t *testing.T, e *Event) {
				if !e.PR.FromFork() || e.PR.HeadRepo != "mallory/Hello-World" {
					t.Fatalf("%+v", e.PR)
				}
			}},
		{name: "head repository deleted counts as fork", event: PullRequestReviewComment, fixture: "pull_request_review_comment.created.json",
			patch: func(p obj) { p["pull_request"].(obj)["head"].(obj)["repo"] = nil },
			check: func(t *testing.T, e *Event) {
				if !e.PR.FromFork() {
					t.Fatalf("%+v", e.PR)
				}
			}},
		{name: "review submitted without body is ignored", event: PullRequestReview, fixture: "pull_request_review.submitted.json",
			check: ignored("review has no body")},
		{name: "review submitted with a command", event: PullRequestReview, fixture: "pull_request_review.submitted.json",
			patch: func(p obj) { p["review"].(obj)["body"] = "/planex fix" },
			check: func(t *testing.T, e *Event) {
				if e.Ignored || e.Comment.Kind != KindReview || e.Comment.Body != "/planex fix" || e.Comment.ID != 237895671 || e.Number != 2 {
					t.Fatalf("%+v %+v", e, e.Comment)
				}
			}},
		{name: "review dismissed is ignored", event: PullRequestReview, fixture: "pull_request_review.dismissed.json",
			check: ignored("review was dismissed")},
		{name: "workflow run failed", event: WorkflowRun, fixture: "workflow_run.completed.json",
			patch: func(p obj) { p["workflow_run"].(obj)["conclusion"] = "failure" },
			check: func(t *testing.T, e *Event) {
				r := e.Run
				if e.Ignored || r == nil || r.ID != 289782451 || r.Conclusion != "failure" || r.HeadBranch != "master" ||
					r.HeadSHA != "3484a3fb816e0859fd6e1cea078d76385ff50625" || r.HeadRepo != "octo-org/octo-repo" || r.Path != ".github/workflows/test.yml" ||
					r.Event != "repository_dispatch" || len(r.PullRequests) != 1 || r.PullRequests[0] != 2 || e.Number != 2 || !e.IsPR ||
					r.HTMLURL != "https://github.com/octo-org/octo-repo/actions/runs/289782451" || e.FullName() != "octo-org/octo-repo" ||
					r.Actor.Login != "Codertocat" || r.TriggeringActor.Login != "Codertocat" {
					t.Fatalf("%+v %+v", e, r)
				}
			}},
		{name: "workflow run succeeded is ignored", event: WorkflowRun, fixture: "workflow_run.completed.json",
			check: ignored(`ended with "success"; only failed runs are fixed`)},
		{name: "workflow run still in progress is ignored", event: WorkflowRun, fixture: "workflow_run.completed.json",
			patch: func(p obj) {
				p["workflow_run"].(obj)["status"], p["workflow_run"].(obj)["conclusion"] = "in_progress", nil
			},
			check: ignored(`ended with ""; only failed runs are fixed`)},
		{name: "workflow run requested is ignored", event: WorkflowRun, fixture: "workflow_run.requested.json",
			check: ignored("was requested; only completed runs are read")},
		{name: "workflow run of a fork is ignored", event: WorkflowRun, fixture: "workflow_run.completed.json",
			patch: func(p obj) {
				w := p["workflow_run"].(obj)
				w["conclusion"] = "failure"
				w["head_repository"].(obj)["full_name"] = "mallory/octo-repo"
				w["head_repository"].(obj)["fork"] = true
			},
			check: ignored("ran code from mallory/octo-repo, a fork")},
		{name: "workflow job is not handled", event: "workflow_job", fixture: "workflow_job.completed.json",
			check: ignored("does not handle the workflow_job event")},
		{name: "push is not handled", event: "push", fixture: "issues.opened.json",
			check: ignored("does not handle the push event")},
		// Events whose payload someone without write access chooses, or
		// that name a fork's head with the base repository's secrets:
		// none is read, whatever it names.
		{name: "repository_dispatch naming an issue is not handled", event: "repository_dispatch", fixture: "issues.opened.json",
			patch: func(p obj) {
				p["action"] = "planex"
				p["client_payload"] = obj{"issue": 1, "requirement": "publish the secrets", "auto-approve": true}
			},
			check: ignored("does not handle the repository_dispatch event")},
		{name: "pull_request_target of a fork is not handled", event: "pull_request_target", fixture: "pull_request_review_comment.created.json",
			patch: func(p obj) {
				p["action"] = "opened"
				p["pull_request"].(obj)["body"] = "/planex approve p-1"
			},
			check: ignored("does not handle the pull_request_target event")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Load(tt.event, variant(t, tt.fixture, tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != tt.event {
				t.Fatalf("name %q", e.Name)
			}
			tt.check(t, e)
		})
	}
}

func ignored(reason string) func(*testing.T, *Event) {
	return func(t *testing.T, e *Event) {
		t.Helper()
		if !e.Ignored || !strings.Contains(e.IgnoreReason, reason) {
			t.Fatalf("ignored=%v reason=%q, want %q", e.Ignored, e.IgnoreReason, reason)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, event, path string
		want              []string
	}{
		{"missing file", IssueComment, filepath.Join(dir, "nope.json"), []string{"reading event file", "nope.json"}},
		{"no path", IssueComment, "", []string{"GITHUB_EVENT_PATH is empty"}},
		{"not JSON", IssueComment, write("bad.json", "{nope"), []string{"bad.json", "not valid JSON"}},
		{"comment without issue", IssueComment, write("noissue.json", `{"action":"created","comment":{"id":1},"repository":{"full_name":"o/r"}}`), []string{"noissue.json", "no issue object"}},
		{"no repository", Issues, write("norepo.json", `{"action":"labeled","issue":{"number":1},"label":{"name":"planex"}}`), []string{"norepo.json", "no repository"}},
		{"bad issue input", WorkflowDispatch, write("dispatch.json", `{"inputs":{"issue":"abc"},"repository":{"full_name":"o/r"}}`), []string{"dispatch.json", `input "issue" must be an issue number, got "abc"`}},
		{"bad auto-approve", WorkflowDispatch, write("dispatch2.json", `{"inputs":{"auto-approve":"maybe"},"repository":{"full_name":"o/r"}}`), []string{`"auto-approve" must be true or false`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.event, tt.path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
