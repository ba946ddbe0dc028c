package gh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/google/go-github/v60/github"
)

// ---- Actions: runs, jobs and job logs (for fixing failed CI) ----

func workflowRun(run *github.WorkflowRun) WorkflowRun {
	out := WorkflowRun{ID: run.GetID(), Attempt: run.GetRunAttempt(), Status: run.GetStatus(), Conclusion: run.GetConclusion(),
		Name: run.GetName(), Event: run.GetEvent(), HTMLURL: run.GetHTMLURL(),
		HeadBranch: run.GetHeadBranch(), HeadSHA: run.GetHeadSHA(),
		HeadRepo: run.GetHeadRepository().GetFullName(), HeadFork: run.GetHeadRepository().GetFork(),
		Actor: run.GetActor().GetLogin(), ActorType: run.GetActor().GetType(),
		TriggeringActor: run.GetTriggeringActor().GetLogin(), TriggeringActorType: run.GetTriggeringActor().GetType()}
	for _, pr := range run.PullRequests {
		out.PullRequests = append(out.PullRequests, pr.GetNumber())
	}
	return out
}

// RunFilter narrows ListWorkflowRuns; empty fields do not filter.
type RunFilter struct {
	Branch  string
	HeadSHA string
	// Status is a status (completed, in_progress, …) or a conclusion
	// (failure, success, …), as GitHub's status parameter takes either.
	Status string
}

// ListWorkflowRuns returns the newest workflow runs of the repository
// that match f (one page of up to 30, newest first). It needs the
// token's `actions: read`.
func (c *Client) ListWorkflowRuns(ctx context.Context, owner, repo string, f RunFilter) ([]WorkflowRun, error) {
	q := url.Values{"per_page": {"30"}}
	for k, v := range map[string]string{"branch": f.Branch, "head_sha": f.HeadSHA, "status": f.Status} {
		if v != "" {
			q.Set(k, v)
		}
	}
	what := fmt.Sprintf("listing workflow runs of %s/%s", owner, repo)
	req, err := c.gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/runs?%s", url.PathEscape(owner), url.PathEscape(repo), q.Encode()), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	// go-github's WorkflowRun has no path (the workflow file); the
	// response does.
	var runs struct {
		WorkflowRuns []struct {
			github.WorkflowRun
			Path string `json:"path"`
		} `json:"workflow_runs"`
	}
	if _, err := c.gh.Do(ctx, req, &runs); err != nil {
		return nil, classify(what, "actions: read", err)
	}
	out := make([]WorkflowRun, 0, len(runs.WorkflowRuns))
	for _, run := range runs.WorkflowRuns {
		w := workflowRun(&run.WorkflowRun)
		w.Path = run.Path
		out = append(out, w)
	}
	return out, nil
}

// Job is a job of a workflow run.
type Job struct {
	ID         int64
	Name       string
	Status     string
	Conclusion string
	HTMLURL    string
	Steps      []JobStep
}

// JobStep is a step of a job.
type JobStep struct {
	Name       string
	Number     int
	Conclusion string
}

// FailedStep is the first step that failed, or "" when none did.
func (j Job) FailedStep() string {
	for _, s := range j.Steps {
		if s.Conclusion == "failure" || s.Conclusion == "timed_out" {
			return s.Name
		}
	}
	return ""
}

// ListRunJobs returns the jobs of a run's latest attempt.
func (c *Client) ListRunJobs(ctx context.Context, owner, repo string, runID int64) ([]Job, error) {
	opt := &github.ListWorkflowJobsOptions{Filter: "latest", ListOptions: github.ListOptions{PerPage: 100}}
	var out []Job
	for {
		page, resp, err := c.gh.Actions.ListWorkflowJobs(ctx, owner, repo, runID, opt)
		if err != nil {
			return nil, classify(fmt.Sprintf("listing the jobs of workflow run %d of %s/%s", runID, owner, repo), "actions: read", err)
		}
		for _, j := range page.Jobs {
			job := Job{ID: j.GetID(), Name: j.GetName(), Status: j.GetStatus(), Conclusion: j.GetConclusion(), HTMLURL: j.GetHTMLURL()}
			for _, s := range j.Steps {
				job.Steps = append(job.Steps, JobStep{Name: s.GetName(), Number: int(s.GetNumber()), Conclusion: s.GetConclusion()})
			}
			out = append(out, job)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// JobLog downloads a job's log as plain text. GitHub answers the logs
// endpoint with a redirect to a short-lived, signed URL; that URL is
// fetched without the token. Of a log longer than maxBytes only the end
// is kept, where a failure is.
func (c *Client) JobLog(ctx context.Context, owner, repo string, jobID int64, maxBytes int) (string, error) {
	op := fmt.Sprintf("downloading the log of job %d of %s/%s", jobID, owner, repo)
	u, resp0, err := c.gh.Actions.GetWorkflowJobLogs(ctx, owner, repo, jobID, 1)
	if err != nil {
		// go-github reads no error body here, only the status.
		if resp0 != nil {
			switch st := resp0.StatusCode; st {
			case http.StatusNotFound, http.StatusGone:
				return "", fmt.Errorf("%s: %w (GitHub answered %d; logs expire with the repository's retention period)", op, ErrNotFound, st)
			case http.StatusForbidden, http.StatusUnauthorized:
				return "", &PermissionError{Op: op, Status: st, Message: http.StatusText(st), Err: err,
					Need: "the token lacks a permission; add `actions: read` to the workflow's `permissions:` block (or grant it to the token)"}
			}
		}
		return "", classify(op, "actions: read", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	resp, err := c.plain.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: the log URL answered %s", op, resp.Status)
	}
	s, err := tail(resp.Body, maxBytes)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return s, nil
}

// tail reads r to the end and returns its last max bytes (all of it when
// max <= 0), never holding much more than that.
func tail(r io.Reader, max int) (string, error) {
	if max <= 0 {
		b, err := io.ReadAll(r)
		return string(b), err
	}
	buf := make([]byte, 0, 2*max)
	chunk := make([]byte, 32*1024)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > 2*max {
			buf = append(buf[:0], buf[len(buf)-max:]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if len(buf) > max {
		buf = buf[len(buf)-max:]
	}
	return string(buf), nil
}
