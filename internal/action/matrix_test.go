package action

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/event"
)

const routeDispatch = "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"

func (w *world) dispatches() int {
	n := 0
	for _, q := range w.fake.Requests() {
		if q.Route == routeDispatch && q.Status < 300 {
			n++
		}
	}
	return n
}

func matrixMode(run string) func(*Config) {
	return func(c *Config) { c.Mode, c.RunID = ModeMatrix, run }
}

// runWave is one dispatched matrix workflow run: prepare, a job per
// task, collect. It returns the collect job's runner and the wave's tasks.
// The jobs of the tasks named in dead die before they publish anything
// (they are not run).
func (w *world) runWave(n int, run string, dead ...string) (*Runner, []string) {
	w.t.Helper()
	ctx := context.Background()
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Inputs: event.Inputs{Issue: n}}
	prep, _ := w.job(matrixMode(run))
	if err := prep.Prepare(ctx, ev); err != nil {
		w.t.Fatalf("prepare: %v", err)
	}
	if prep.Outputs.HasTasks != "true" {
		return prep, nil
	}
	var m struct {
		Include []struct{ Task string } `json:"include"`
	}
	if err := json.Unmarshal([]byte(prep.Outputs.Matrix), &m); err != nil {
		w.t.Fatalf("matrix %q: %v", prep.Outputs.Matrix, err)
	}
	if mp, _ := strconv.Atoi(prep.Outputs.MaxParallel); mp < 1 || mp > len(m.Include) {
		w.t.Errorf("max-parallel = %q for %d task(s)", prep.Outputs.MaxParallel, len(m.Include))
	}
	var ids []string
	for _, in := range m.Include {
		ids = append(ids, in.Task)
		if slices.Contains(dead, in.Task) {
			continue
		}
		job, _ := w.job(matrixMode(run))
		if err := job.RunTask(ctx, ev, in.Task); err != nil {
			w.t.Fatalf("task %s: %v", in.Task, err)
		}
	}
	collect, _ := w.job(matrixMode(run))
	if err := collect.Collect(ctx, ev); err != nil {
		w.t.Fatalf("collect: %v", err)
	}
	return collect, ids
}

// repeatedJobsAddNothing runs a wave's collect again and its first task's
// job again, as a re-run of the workflow's jobs would, and checks that
// neither changes the run branch (the dispatch count is checked by the
// caller).
func (w *world) repeatedJobsAddNothing(run string, n int, session, task string) {
	w.t.Helper()
	ctx := context.Background()
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Inputs: event.Inputs{Issue: n}}
	before := w.branch("planex/" + session)
	again, _ := w.job(matrixMode(run))
	if err := again.Collect(ctx, ev); err != nil {
		w.t.Fatalf("run %s: a second collect: %v", run, err)
	}
	job, _ := w.job(matrixMode(run))
	if err := job.RunTask(ctx, ev, task); err != nil {
		w.t.Fatalf("run %s: %s's job again: %v", run, task, err)
	}
	if got := w.branch("planex/" + session); !slices.Equal(got, before) {
		w.t.Fatalf("run %s: a repeated collect or task job changed the branch:\n%v\nthen\n%v", run, before, got)
	}
}

// TestMatrixModeRunsWaveByWave approves a diamond plan in matrix mode and
// plays the workflow runs GitHub would start: each wave's tasks run as
// jobs of their own, collect puts them on the run branch in plan order
// and dispatches the next wave, and the last collect opens the pull
// request. In every wave a second collect and a re-run of a task's job
// add nothing: no commit, no second dispatch (was checked end to end in
// internal/cli's matrixMatchesSingleJob, a process per job).
func TestMatrixModeRunsWaveByWave(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Four files", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex four files"), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), matrixMode("1"))
	if err != nil || r.Outputs.Status != StatusRunning || w.dispatches() != 1 {
		t.Fatalf("approve: %v %+v, %d dispatches", err, r.Outputs, w.dispatches())
	}
	var waves [][]string
	var last *Runner
	for i, run := range []string{"101", "102", "103", "104"} {
		collect, ids := w.runWave(n, run)
		if ids == nil {
			break
		}
		waves, last = append(waves, ids), collect
		w.repeatedJobsAddNothing(run, n, collect.Outputs.SessionID, ids[0])
		if collect.Outputs.Status == StatusDone {
			break
		}
		if w.dispatches() != i+2 {
			t.Fatalf("after wave %d: %d dispatches", i+1, w.dispatches())
		}
	}
	if got := len(waves); got != 3 || !slices.Equal(waves[1], []string{"T2", "T3"}) {
		t.Fatalf("waves = %v", waves)
	}
	if last.Outputs.Status != StatusDone || !strings.Contains(last.Outputs.PullRequestURL, "/pull/") {
		t.Errorf("last collect: %+v", last.Outputs)
	}
	if got := strings.Join(w.branch("planex/"+last.Outputs.SessionID), " "); got != "T1:_base T2:_left T3:_right T4:_join" {
		t.Errorf("run branch = %s", got)
	}
	// Nothing is left to prepare, and a late collect changes nothing.
	if r, ids := w.runWave(n, "105"); ids != nil || r.Outputs.HasTasks != "false" {
		t.Errorf("prepare after the end: %v %+v", ids, r.Outputs)
	}
	w.noRefusedRequests()
}

// TestMatrixFinalizeThenRetry: a job that ended mid-plan is finalized as
// failed; a retry hands the plan to the matrix workflow again.
func TestMatrixFinalizeThenRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "One file", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex one file"), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, Inputs: event.Inputs{Issue: n}}
	// Another run's finalize leaves it alone; the owner's marks it failed.
	other, _ := w.job(matrixMode("999"))
	if err := other.Finalize(context.Background(), ev); err != nil || other.Outputs.Status != "" {
		t.Errorf("finalize by another run: %v %+v", err, other.Outputs)
	}
	fin, _ := w.job(matrixMode("1"))
	if err := fin.Finalize(context.Background(), ev); err != nil || fin.Outputs.Status != StatusFailed {
		t.Fatalf("finalize: %v %+v", err, fin.Outputs)
	}
	if l := w.labels(n); !slices.Equal(l, []string{LabelFailed}) {
		t.Errorf("labels after finalize = %v", l)
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex retry"), matrixMode("2"))
	if err != nil || r.Outputs.Status != StatusRunning || w.dispatches() != 2 {
		t.Fatalf("retry: %v %+v, %d dispatches", err, r.Outputs, w.dispatches())
	}
	collect, ids := w.runWave(n, "3")
	if !slices.Equal(ids, []string{"T1"}) || collect.Outputs.Status != StatusDone {
		t.Errorf("wave after retry: %v %+v", ids, collect.Outputs)
	}
	w.noRefusedRequests()
}

// TestMatrixDeadTaskRetryAndRacingCollects: in wave 2 T2's job dies
// before it publishes a result, T3's completes; collect commits T3,
// reports T2 and T4 as not done and the plan failed. /planex retry
// dispatches once, wave 3 runs T2; while wave 4 runs, a redelivered
// dispatch prepares nothing, and two collects of it racing commit T4 once
// and dispatch nothing. (Was internal/cli's
// TestActionMatrixDeadTaskRetryAndRacingCollects, which killed T2's
// process mid-task; a job killed mid-run is still end to end there, in
// TestActionFinalizeAfterKilledJob and TestActionKilledRunIsTakenOver.)
func TestMatrixDeadTaskRetryAndRacingCollects(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add four files"), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	approved, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), matrixMode("1"))
	if err != nil || approved.Outputs.Status != StatusRunning || w.dispatches() != 1 {
		t.Fatalf("approve: %v %+v, %d dispatches", err, approved.Outputs, w.dispatches())
	}
	branch := "planex/" + approved.Outputs.SessionID
	if w.branch(branch) != nil {
		t.Fatal("the approve run executed tasks itself")
	}
	if _, ids := w.runWave(n, "101"); !slices.Equal(ids, []string{"T1"}) {
		t.Fatalf("wave 1 = %v", ids)
	}
	if _, ids := w.runWave(n, "102", "T2"); !slices.Equal(ids, []string{"T2", "T3"}) {
		t.Fatalf("wave 2 = %v", ids)
	}
	if got := strings.Join(w.branch(branch), " | "); got != "T1:_base | T3:_right" {
		t.Errorf("branch after the dead job = %s", got)
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests", len(prs))
	}
	for _, want := range []string{"its job published no result", "T4"} {
		if !strings.Contains(prs[0].Body, want) {
			t.Errorf("report lacks %q:\n%s", want, prs[0].Body)
		}
	}
	if !slices.Contains(w.labels(n), LabelFailed) {
		t.Errorf("labels = %v", w.labels(n))
	}

	before := w.dispatches()
	if _, err := w.handle(w.comment(n, "maintainer", "/planex retry"), matrixMode("2")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if w.dispatches() != before+1 {
		t.Fatalf("retry made %d dispatches", w.dispatches()-before)
	}
	if _, ids := w.runWave(n, "103"); !slices.Equal(ids, []string{"T2"}) {
		t.Fatalf("retry wave = %v", ids)
	}
	ctx := context.Background()
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Inputs: event.Inputs{Issue: n}}
	before = w.dispatches()
	prep, _ := w.job(matrixMode("104"))
	if err := prep.Prepare(ctx, ev); err != nil || !strings.Contains(prep.Outputs.Matrix, "T4") {
		t.Fatalf("wave 4: %v, matrix %q", err, prep.Outputs.Matrix)
	}
	again, _ := w.job(matrixMode("105"))
	if err := again.Prepare(ctx, ev); err != nil || again.Outputs.HasTasks != "false" {
		t.Errorf("second prepare of a running wave: %v %+v", err, again.Outputs)
	}
	task, _ := w.job(matrixMode("104"))
	if err := task.RunTask(ctx, ev, "T4"); err != nil {
		t.Fatalf("task T4: %v", err)
	}
	collects := []*Runner{}
	for i := 0; i < 2; i++ {
		c, _ := w.job(matrixMode("104"))
		collects = append(collects, c)
	}
	errs := make([]error, len(collects))
	var wg sync.WaitGroup
	for i, c := range collects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Collect(ctx, ev)
		}()
	}
	wg.Wait()
	if got := strings.Join(w.branch(branch), " | "); got != "T1:_base | T3:_right | T2:_left | T4:_join" {
		t.Errorf("branch after retry = %s (collects: %v; %+v; %+v)", got, errs, collects[0].Outputs, collects[1].Outputs)
	}
	if w.dispatches() != before {
		t.Errorf("the last wave dispatched again")
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 1 || !strings.Contains(prs[0].Body, "| T2 | left | ✅ completed | ❔ agent says passed (not run by planex) |") {
		t.Errorf("pull requests after retry = %+v", prs)
	}
	if !slices.Contains(w.labels(n), LabelDone) {
		t.Errorf("labels = %v (collects: %v)", w.labels(n), errs)
	}
}

// TestRedTeamWaveNotDispatchedOnATagNamedLikeTheDefaultBranch: whoever
// can push may push a tag named main whose planex-matrix.yml runs what
// they like with the workflow's secrets. planex dispatched each wave on
// "main", a short name GitHub resolves as git does, the tag first; it
// must ask for refs/heads/main (and, with DispatchRef set from the
// triggering run, for that full ref).
func TestRedTeamWaveNotDispatchedOnATagNamedLikeTheDefaultBranch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, dispatchRef, want string
	}{
		{"default branch", "", "refs/heads/main"},
		{"the triggering run's branch", "refs/heads/main", "refs/heads/main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.fake.SetFile(wRepo, "refs/tags/main", ".github/workflows/planex-matrix.yml", []byte("on: workflow_dispatch\njobs: {steal: {runs-on: ubuntu-latest, steps: [{run: env}]}}\n"))
			w.agent.setPlan(diamond()...)
			n := w.fake.AddIssue(wRepo, "maintainer", "Four files", "")
			mode := func(c *Config) { matrixMode("1")(c); c.DispatchRef = tc.dispatchRef }
			if _, err := w.handle(w.comment(n, "maintainer", "/planex four files"), mode); err != nil {
				t.Fatal(err)
			}
			if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), mode); err != nil || r.Outputs.Status != StatusRunning {
				t.Fatalf("approve: %v %+v", err, r.Outputs)
			}
			ds := w.fake.Dispatches(wRepo)
			if len(ds) != 1 || ds[0].Ref != tc.want || ds[0].Workflow != "planex-matrix.yml" {
				t.Fatalf("dispatches = %+v, want one of planex-matrix.yml on %s", ds, tc.want)
			}
		})
	}
}
