package ghfake

import (
	"cmp"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WorkflowJob is one job of a workflow run; its Log is what
// GET .../actions/jobs/{job_id}/logs redirects to, as plain text.
type WorkflowJob struct {
	ID         int64
	Name       string
	Status     string // "completed" when empty
	Conclusion string // success, failure, cancelled, skipped, timed_out …
	Steps      []WorkflowStep
	Log        string
}

// WorkflowStep is one step of a job.
type WorkflowStep struct {
	Name       string
	Number     int // its position (1, 2, …) when zero
	Conclusion string
}

// logPathPrefix is where the fake serves job logs, outside the API, as
// GitHub's blob storage does behind the logs endpoint's redirect.
const logPathPrefix = "/_blobs/job-logs/"

// logSignature stands in for the short-lived signature of the real
// redirect URL; the download must carry it and nothing else.
const logSignature = "sig=fake-signature"

func (run *WorkflowRun) defaults(r *repoState) {
	if run.Attempt == 0 {
		run.Attempt = 1
	}
	if run.Name == "" {
		run.Name = "planex"
	}
	if run.Event == "" {
		run.Event = "issue_comment"
	}
	if run.HeadBranch == "" {
		run.HeadBranch = r.defaultBranch
	}
	if run.HeadSHA == "" {
		run.HeadSHA = fakeSHA(r.fullName() + ":" + run.HeadBranch)
	}
	if run.HeadRepo == "" {
		run.HeadRepo = r.fullName()
	}
	if run.Path == "" {
		run.Path = ".github/workflows/" + strings.ToLower(strings.ReplaceAll(run.Name, " ", "-")) + ".yml"
	}
	for i := range run.Jobs {
		j := &run.Jobs[i]
		if j.Status == "" {
			j.Status = "completed"
		}
		for k := range j.Steps {
			if j.Steps[k].Number == 0 {
				j.Steps[k].Number = k + 1
			}
		}
	}
}

func (f *Fake) runJSON(c *call, r *repoState, run WorkflowRun) obj {
	api := c.apiBase + "repos/" + r.fullName() + "/actions/runs/" + strconv.FormatInt(run.ID, 10)
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	created := run.Created
	if created.IsZero() {
		created = f.now()
	}
	prs := []obj{}
	for _, n := range run.PullRequests {
		is := r.issues[n]
		if is == nil || is.pr == nil {
			continue
		}
		repoRef := obj{"id": r.id, "url": c.apiBase + "repos/" + r.fullName(), "name": r.name}
		prs = append(prs, obj{"id": is.id, "number": n, "url": c.apiBase + "repos/" + r.fullName() + "/pulls/" + strconv.Itoa(n),
			"head": obj{"ref": is.pr.head, "sha": is.pr.headSHA, "repo": repoRef},
			"base": obj{"ref": is.pr.base, "sha": fakeSHA(r.fullName() + ":" + is.pr.base), "repo": repoRef}})
	}
	head := f.repoJSON(c, r)
	if !strings.EqualFold(run.HeadRepo, r.fullName()) {
		owner, name, _ := strings.Cut(run.HeadRepo, "/")
		head = obj{"id": fakeID(run.HeadRepo), "name": name, "full_name": run.HeadRepo, "fork": true,
			"owner": obj{"login": owner, "id": fakeID(owner), "type": "User"}, "private": false,
			"html_url": f.ServerURL() + "/" + run.HeadRepo, "url": c.apiBase + "repos/" + run.HeadRepo}
	}
	return obj{
		"id": run.ID, "name": run.Name, "node_id": nodeID("WorkflowRun", run.ID), "path": run.Path,
		"head_branch": run.HeadBranch, "head_sha": run.HeadSHA, "run_number": run.ID % 1000, "run_attempt": run.Attempt,
		"event": run.Event, "status": run.Status, "conclusion": conclusion, "workflow_id": fakeID(run.Path),
		"url": api, "html_url": f.ServerURL() + "/" + r.fullName() + "/actions/runs/" + strconv.FormatInt(run.ID, 10),
		"jobs_url": api + "/jobs", "logs_url": api + "/logs", "pull_requests": prs,
		"created_at": ts(created), "updated_at": ts(created), "run_started_at": ts(created),
		"repository": f.repoJSON(c, r), "head_repository": head,
		"actor": f.userJSON(c, cmp.Or(run.Actor, DefaultActor)), "triggering_actor": f.userJSON(c, cmp.Or(run.TriggeringActor, run.Actor, DefaultActor)),
	}
}

func fakeID(seed string) int64 {
	n, _ := strconv.ParseInt(fakeSHA(seed)[:12], 16, 64)
	return n
}

func (f *Fake) runFor(c *call, r *repoState) (WorkflowRun, *apiError) {
	return lookup(c, "run_id", r.runs)
}

// statusValues are the values of the status query parameter that name a
// status rather than a conclusion.
var statusValues = map[string]bool{"completed": true, "in_progress": true, "queued": true, "requested": true, "waiting": true, "pending": true}

// listWorkflowRuns lists the repository's runs, newest first, filtered
// as GitHub filters them (branch, event, status or conclusion, head_sha).
func listWorkflowRuns(f *Fake, c *call, r *repoState) *apiError {
	q := c.r.URL.Query()
	var out []WorkflowRun
	for _, run := range r.runs {
		switch st := q.Get("status"); {
		case q.Get("branch") != "" && run.HeadBranch != q.Get("branch"),
			q.Get("event") != "" && run.Event != q.Get("event"),
			q.Get("head_sha") != "" && run.HeadSHA != q.Get("head_sha"),
			st != "" && statusValues[st] && run.Status != st,
			st != "" && !statusValues[st] && run.Conclusion != st:
			continue
		}
		out = append(out, run)
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Created.Equal(out[b].Created) {
			return out[a].Created.After(out[b].Created)
		}
		return out[a].ID > out[b].ID
	})
	runs := pageJSON(c, out, func(run WorkflowRun) obj { return f.runJSON(c, r, run) })
	c.json(http.StatusOK, obj{"total_count": len(out), "workflow_runs": runs})
	return nil
}

func (f *Fake) jobJSON(c *call, r *repoState, run WorkflowRun, j WorkflowJob) obj {
	api := c.apiBase + "repos/" + r.fullName()
	started := run.Created
	if started.IsZero() {
		started = f.now()
	}
	steps := []obj{}
	for _, s := range j.Steps {
		steps = append(steps, obj{"name": s.Name, "number": s.Number, "status": "completed", "conclusion": s.Conclusion,
			"started_at": ts(started), "completed_at": ts(started.Add(time.Second))})
	}
	var conclusion any
	if j.Conclusion != "" {
		conclusion = j.Conclusion
	}
	return obj{
		"id": j.ID, "run_id": run.ID, "run_attempt": run.Attempt, "node_id": nodeID("CheckRun", j.ID),
		"run_url": api + "/actions/runs/" + strconv.FormatInt(run.ID, 10), "url": api + "/actions/jobs/" + strconv.FormatInt(j.ID, 10),
		"html_url": f.ServerURL() + "/" + r.fullName() + "/actions/runs/" + strconv.FormatInt(run.ID, 10) + "/job/" + strconv.FormatInt(j.ID, 10),
		"head_sha": run.HeadSHA, "head_branch": run.HeadBranch, "workflow_name": run.Name,
		"status": j.Status, "conclusion": conclusion, "name": j.Name, "steps": steps, "labels": []string{"ubuntu-latest"},
		"created_at": ts(started), "started_at": ts(started), "completed_at": ts(started.Add(time.Minute)),
		"check_run_url": api + "/check-runs/" + strconv.FormatInt(j.ID, 10),
	}
}

// listRunJobs lists the jobs of a workflow run.
func listRunJobs(f *Fake, c *call, r *repoState, run WorkflowRun) *apiError {
	jobs := pageJSON(c, run.Jobs, func(j WorkflowJob) obj { return f.jobJSON(c, r, run, j) })
	c.json(http.StatusOK, obj{"total_count": len(run.Jobs), "jobs": jobs})
	return nil
}

// jobLogs answers as GitHub does: 302 to a short-lived plain-text URL.
func jobLogs(f *Fake, c *call, r *repoState) *apiError {
	id, e := c.int64Param("job_id")
	if e != nil {
		return e
	}
	if _, ok := findJob(r, id); !ok {
		return errNotFound()
	}
	c.status = http.StatusFound
	c.w.Header().Set("Location", f.srv.URL+logPathPrefix+r.fullName()+"/"+strconv.FormatInt(id, 10)+"?"+logSignature)
	c.w.WriteHeader(http.StatusFound)
	return nil
}

func findJob(r *repoState, id int64) (WorkflowJob, bool) {
	for _, run := range r.runs {
		for _, j := range run.Jobs {
			if j.ID == id {
				return j, true
			}
		}
	}
	return WorkflowJob{}, false
}

// serveBlob serves a job log at the URL jobLogs redirected to. Like blob
// storage, it wants the signature in the URL and refuses a request that
// carries an Authorization header: the API token must not travel there.
func (f *Fake) serveBlob(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, logPathPrefix)
	i := strings.LastIndexByte(rest, '/')
	id, err := strconv.ParseInt(rest[i+1:], 10, 64)
	f.mu.Lock()
	repo := f.repos[strings.ToLower(rest[:max(i, 0)])]
	var job WorkflowJob
	found := false
	if repo != nil && err == nil {
		job, found = findJob(repo, id)
	}
	f.mu.Unlock()
	switch {
	case r.Header.Get("Authorization") != "":
		msg := "GET " + r.URL.Path + ": the log download carried an Authorization header (the API token must not be sent to blob storage)"
		f.mu.Lock()
		f.errs = append(f.errs, msg)
		f.mu.Unlock()
		f.report(msg)
		http.Error(w, "AuthenticationFailed", http.StatusBadRequest)
	case r.URL.RawQuery != logSignature || !found:
		http.Error(w, "BlobNotFound", http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(job.Log))
	}
}

// SetPullRequestHead records that a pull request's head branch moved to
// sha (the fake does not see git pushes).
func (f *Fake) SetPullRequestHead(fullName string, number int, sha string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.mustRepo(fullName).issues[number]
	if is == nil || is.pr == nil {
		f.t.Fatalf("ghfake: SetPullRequestHead: %s#%d is not a pull request", fullName, number)
	}
	is.pr.headSHA = sha
}
