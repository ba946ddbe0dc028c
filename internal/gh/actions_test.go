package gh

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/ghfake"
)

func TestWorkflowRunsJobsAndLogs(t *testing.T) {
	f, c := setup(t)
	ctx := context.Background()
	n := f.AddPullRequest(full, ghfake.PullRequest{Title: "t", Head: "planex/1-x"})
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	log := "2026-11-23T10:00:00.0000000Z ##[group]Run go test ./...\n2026-11-23T10:00:01.0000000Z FAIL\n"
	f.SetWorkflowRun(full, ghfake.WorkflowRun{ID: 7, Name: "CI", Event: "pull_request", Status: "completed", Conclusion: "failure",
		HeadBranch: "planex/1-x", HeadSHA: "abc", PullRequests: []int{n}, Created: t0,
		Jobs: []ghfake.WorkflowJob{
			{ID: 71, Name: "lint", Conclusion: "success", Steps: []ghfake.WorkflowStep{{Name: "Run golangci-lint", Conclusion: "success"}}},
			{ID: 72, Name: "test", Conclusion: "failure", Log: log, Steps: []ghfake.WorkflowStep{
				{Name: "Set up job", Conclusion: "success"}, {Name: "Run go test ./...", Conclusion: "failure"}}},
		}})
	f.SetWorkflowRun(full, ghfake.WorkflowRun{ID: 8, Name: "CI", Status: "completed", Conclusion: "success", HeadBranch: "planex/1-x", Created: t0.Add(time.Hour)})
	f.SetWorkflowRun(full, ghfake.WorkflowRun{ID: 9, Name: "CI", Status: "completed", Conclusion: "failure", HeadBranch: "other", Created: t0.Add(2 * time.Hour)})

	runs, err := c.ListWorkflowRuns(ctx, owner, name, RunFilter{Branch: "planex/1-x", Status: "failure"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != 7 || runs[0].HeadSHA != "abc" || runs[0].HeadRepo != full || runs[0].HeadFork ||
		len(runs[0].PullRequests) != 1 || runs[0].PullRequests[0] != n || runs[0].Name != "CI" || !strings.Contains(runs[0].HTMLURL, "/actions/runs/7") {
		t.Fatalf("runs = %+v", runs)
	}
	all, err := c.ListWorkflowRuns(ctx, owner, name, RunFilter{})
	if err != nil || len(all) != 3 || all[0].ID != 9 || all[2].ID != 7 {
		t.Fatalf("all runs, newest first = %+v %v", all, err)
	}
	jobs, err := c.ListRunJobs(ctx, owner, name, 7)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs = %+v %v", jobs, err)
	}
	if jobs[1].Conclusion != "failure" || jobs[1].FailedStep() != "Run go test ./..." || jobs[0].FailedStep() != "" {
		t.Errorf("jobs = %+v", jobs)
	}
	got, err := c.JobLog(ctx, owner, name, 72, 0)
	if err != nil || got != log {
		t.Fatalf("log = %q, %v", got, err)
	}
	// Only the end of a long log is kept.
	if got, err := c.JobLog(ctx, owner, name, 72, 10); err != nil || got != log[len(log)-10:] {
		t.Errorf("tail = %q, %v", got, err)
	}
	if _, err := c.JobLog(ctx, owner, name, 99, 0); !IsNotFound(err) {
		t.Errorf("missing job: %v", err)
	}
	// The token went to the API, never to the log's storage (the fake
	// reports a download that carries it).
	if errs := f.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
	for _, r := range f.Requests() {
		if r.Method != "GET" {
			t.Errorf("reading CI wrote: %s %s", r.Method, r.Path)
		}
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	in := strings.Repeat("a", 100000) + "THE END"
	got, err := tail(strings.NewReader(in), 1000)
	if err != nil || len(got) != 1000 || !strings.HasSuffix(got, "THE END") {
		t.Errorf("tail: %d bytes, %v", len(got), err)
	}
	if got, _ := tail(strings.NewReader("short"), 1000); got != "short" {
		t.Errorf("tail of a short text = %q", got)
	}
}
