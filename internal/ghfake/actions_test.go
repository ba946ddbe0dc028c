package ghfake

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The logs endpoint redirects to plain text, as GitHub does, and the
// plain-text URL refuses a request that carries the API token.
func TestJobLogsRedirectToPlainText(t *testing.T) {
	ctx := context.Background()
	var refused []string
	f := New(t, WithInvalidRequestHook(func(msg string) { refused = append(refused, msg) }))
	f.AddRepo(repoName, Repo{})
	f.SetWorkflowRun(repoName, WorkflowRun{ID: 5, Status: "completed", Conclusion: "failure", HeadBranch: "feature",
		Jobs: []WorkflowJob{{ID: 51, Name: "test", Conclusion: "failure", Log: "line one\nFAIL\n"}}})
	c := f.Client("tok")
	u, _, err := c.Actions.GetWorkflowJobLogs(ctx, "octo", "widgets", 51, 0)
	if err != nil || !strings.HasPrefix(u.String(), f.ServerURL()+logPathPrefix) {
		t.Fatalf("redirect: %v %v", u, err)
	}
	get := func(url, auth string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get(u.String(), ""); st != 200 || body != "line one\nFAIL\n" {
		t.Errorf("download: %d %q", st, body)
	}
	if st, _ := get(u.String(), "Bearer tok"); st != 400 || len(refused) != 1 || !strings.Contains(refused[0], "Authorization") {
		t.Errorf("download with the token: %d, refused %v", st, refused)
	}
	if st, _ := get(strings.Split(u.String(), "?")[0], ""); st != 404 {
		t.Errorf("unsigned download: %d", st)
	}
	if _, resp, _ := c.Actions.GetWorkflowJobLogs(ctx, "octo", "widgets", 52, 0); resp == nil || resp.StatusCode != 404 {
		t.Errorf("unknown job: %v", resp)
	}
	jobs, _, err := c.Actions.ListWorkflowJobs(ctx, "octo", "widgets", 5, nil)
	if err != nil || jobs.GetTotalCount() != 1 || jobs.Jobs[0].GetConclusion() != "failure" || jobs.Jobs[0].GetHeadBranch() != "feature" {
		t.Errorf("jobs: %+v %v", jobs, err)
	}
}
