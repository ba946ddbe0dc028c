package action

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
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
func (w *world) runWave(n int, run string) (*Runner, []string) {
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
	var ids []string
	for _, in := range m.Include {
		ids = append(ids, in.Task)
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
