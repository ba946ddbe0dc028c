package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/execute"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
)

// Mode is how an approved plan runs (the mode input): a closed set.
type Mode string

// Modes of execution.
const (
	ModeSingle Mode = "single" // every wave in one job
	ModeMatrix Mode = "matrix" // one job per task (see above)
)

// MatrixWave is the wave a matrix run is working on.
type MatrixWave struct {
	Attempt   int      `json:"attempt"` // counts prepared waves, retries included
	Wave      int      `json:"wave"`
	Base      string   `json:"base"`
	Tasks     []string `json:"tasks"`
	RunID     string   `json:"run_id,omitempty"` // the workflow run that prepared it
	Collected bool     `json:"collected"`
}

// taskResult is what a task job reports, in the message of the commit its
// ref points at (a commit whose parent is the task's commit, or the base
// when the task did not complete, and whose tree is its parent's).
type taskResult struct {
	Session       string          `json:"session"`
	Task          string          `json:"task"`
	Attempt       int             `json:"attempt"`
	Base          string          `json:"base"`
	Status        plan.Status     `json:"status"`
	Commit        string          `json:"commit,omitempty"`
	Findings      string          `json:"findings,omitempty"`
	AcceptanceMet string          `json:"acceptance_met,omitempty"`
	TestsPassed   plan.TestResult `json:"tests_passed,omitempty"`
	Error         string          `json:"error,omitempty"`
	Usage         agent.Usage     `json:"usage"`
	RunURL        string          `json:"run_url,omitempty"`
	// NetworkRefused is what the egress proxy refused the task's processes.
	NetworkRefused string `json:"network_refused,omitempty"`
}

const resultSubject = "planex task result"

// taskRef is where a task job publishes its result. Not under
// refs/heads/planex/<session>/: that name is taken by the run branch, and
// git cannot have a ref that is both a file and a directory.
func taskRef(sessionID, task string) string {
	return "refs/planex/tasks/" + sessionID + "/" + task
}

// threadOf is the issue or pull request a matrix step works for.
func threadOf(ev *event.Event) int {
	if ev.Number != 0 {
		return ev.Number
	}
	return ev.Inputs.Issue
}

// workflowAPI is what matrix mode and owner checks need from Actions:
// dispatching a wave, and the state of the run that holds a plan.
type workflowAPI interface {
	CreateWorkflowDispatch(ctx context.Context, owner, repo, workflow, ref string, inputs map[string]string) error
	GetWorkflowRun(ctx context.Context, owner, repo string, runID int64) (gh.WorkflowRun, error)
}

// dispatchWave asks GitHub to run the matrix workflow for a thread.
func (r *matrixFlow) dispatchWave(ctx context.Context, rec *Record) error {
	ref, err := r.dispatchRef(ctx)
	if err != nil {
		return err
	}
	wf := r.Cfg.MatrixWorkflow
	if wf == "" {
		wf = "planex-matrix.yml"
	}
	if err := r.GH.Workflows.CreateWorkflowDispatch(ctx, r.Cfg.Owner, r.Cfg.Repo, wf, ref, map[string]string{"issue": strconv.Itoa(rec.Thread)}); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "dispatched %s on %s for #%d\n", wf, ref, rec.Thread)
	return nil
}

// dispatchRef is the full ref a wave runs on: DispatchRef, or the default
// branch. Never a short name: GitHub resolves one as git does, a tag of
// that name before the branch, and whoever can push may push a tag named
// main past the branch's protection, whose matrix workflow would then run
// with this workflow's secrets.
func (r *matrixFlow) dispatchRef(ctx context.Context) (string, error) {
	ref := r.Cfg.DispatchRef
	if ref == "" {
		var err error
		if ref, err = r.defaultBranch(ctx); err != nil {
			return "", err
		}
	}
	if !strings.HasPrefix(ref, "refs/") {
		ref = "refs/heads/" + ref
	}
	return ref, nil
}

// startMatrix approves the plan in the session and hands it to the matrix
// workflow; execute has already recorded it as running.
func (r *matrixFlow) startMatrix(ctx context.Context, th thread, rec *Record, a approval) (Outputs, error) {
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	if err := eng.ApprovePlan(ctx, rec.SessionID, rec.PlanHash, a.engine(r.Cfg.Trigger)); err != nil {
		if isRefusal(err) {
			err = r.gate.refuseUnapproved(rec, err)
		}
		return r.talk.fail(ctx, th, rec, err)
	}
	return r.handOver(ctx, th, rec)
}

// handOver saves the session and dispatches the matrix workflow.
func (r *matrixFlow) handOver(ctx context.Context, th thread, rec *Record) (Outputs, error) {
	if rec.Matrix != nil {
		// Whatever wave was outstanding is abandoned; prepare starts afresh.
		rec.Matrix.Collected = true
	}
	if err := r.store.saveRecord(ctx, rec); err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	if err := r.dispatchWave(ctx, rec); err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	tasks, unread := r.store.statusTasks(rec)
	r.talk.updateStatus(ctx, rec, tasks, withNote(fmt.Sprintf("Approved by @%s; running in matrix mode (one job per task).", rec.ApprovedBy), unread))
	return planOutputs(rec, StatusRunning), nil
}

// retryMatrix puts failed and skipped tasks back and dispatches a wave.
func (r *matrixFlow) retryMatrix(ctx context.Context, th thread, rec *Record) (Outputs, error) {
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return r.talk.fail(ctx, th, rec, err)
	}
	if _, err := eng.ResetFailed(ctx, rec.SessionID, rec.PlanHash); err != nil && !errors.Is(err, engine.ErrNothingToRetry) {
		if isRefusal(err) {
			err = r.gate.refuseUnapproved(rec, err)
		}
		return r.talk.fail(ctx, th, rec, err)
	}
	return r.handOver(ctx, th, rec)
}

// Prepare picks the next wave of a running plan and sets the outputs a
// matrix reads: matrix ({"include":[{"task":"T1"},…]}), max-parallel and
// has-tasks. With nothing left to run it publishes the result instead.
func (r *Runner) Prepare(ctx context.Context, ev *event.Event) error {
	if err := r.sameRepository(ev); err != nil {
		return r.step(Outputs{HasTasks: "false"}, err)
	}
	o, err := r.flows().matrix.prepare(ctx, ev)
	if o.HasTasks == "" {
		o.HasTasks = "false"
	}
	return r.step(o, err)
}

func (r *matrixFlow) prepare(ctx context.Context, ev *event.Event) (Outputs, error) {
	n := threadOf(ev)
	if n == 0 {
		return Outputs{}, userf("prepare needs the issue number (workflow_dispatch input `issue`)")
	}
	rec, found, err := r.store.loadRecord(ctx, n)
	if err != nil {
		return Outputs{}, err
	}
	if !found || rec.State != StateRunning {
		fmt.Fprintf(r.Out, "#%d has no running plan; nothing to prepare\n", n)
		return Outputs{}, nil
	}
	o := planOutputs(rec, recordStatus(rec.State))
	if m := rec.Matrix; m != nil && !m.Collected {
		fmt.Fprintf(r.Out, "wave %d (attempt %d, run %s) is still being worked on; not preparing another\n", m.Wave, m.Attempt, m.RunID)
		return o, nil
	}
	th := thread{Number: n, Actor: ev.Sender}
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return r.talk.failAfter(ctx, th, rec, o, err)
	}
	w, next, done, err := r.nextWave(ctx, th, rec, eng)
	if done || err != nil {
		return o.with(next), err
	}
	attempt := 1
	if rec.Matrix != nil {
		attempt = rec.Matrix.Attempt + 1
	}
	rec.Matrix = &MatrixWave{Attempt: attempt, Wave: w.Number, Base: w.Base, Tasks: w.IDs(), RunID: r.Cfg.RunID}
	r.claim(rec)
	// The wave's base must be on origin for the task jobs.
	if err := r.store.pushBranch(ctx, rec); err != nil {
		return r.talk.failAfter(ctx, th, rec, o, err)
	}
	if err := r.store.saveRecord(ctx, rec); err != nil {
		if errors.Is(err, errStateMoved) {
			fmt.Fprintln(r.Out, "another run prepared this plan first; not preparing a wave")
			return o, nil
		}
		return r.talk.failAfter(ctx, th, rec, o, err)
	}
	if o.Matrix, err = matrixJSON(w.IDs()); err != nil {
		return o, err
	}
	o.HasTasks, o.MaxParallel = "true", strconv.Itoa(min(r.Cfg.Concurrency, len(w.Tasks)))
	tasks, unread := r.store.statusTasks(rec)
	r.talk.updateStatus(ctx, rec, tasks, withNote(fmt.Sprintf("Wave %d: %s, one job each.", w.Number, strings.Join(w.IDs(), ", ")), unread))
	fmt.Fprintf(r.Out, "wave %d (attempt %d) from %s: %s\n", w.Number, attempt, abbrev.SHA(w.Base), strings.Join(w.IDs(), ", "))
	return o, nil
}

// matrixJSON is the matrix output of a wave: {"include":[{"task":"T1"},…]}.
func matrixJSON(ids []string) (string, error) {
	include := make([]map[string]string, len(ids))
	for i, id := range ids {
		include[i] = map[string]string{"task": id}
	}
	b, err := json.Marshal(map[string]any{"include": include})
	if err != nil {
		return "", fmt.Errorf("encoding the matrix: %w", err)
	}
	return string(b), nil
}

// RunTask runs one task of the prepared wave and publishes its result on
// refs/planex/tasks/<session>/<task>. It never touches the run branch.
func (r *Runner) RunTask(ctx context.Context, ev *event.Event, taskID string) error {
	if err := r.sameRepository(ev); err != nil {
		return r.step(Outputs{}, err)
	}
	return r.step(r.flows().matrix.runTask(ctx, ev, taskID))
}

func (r *matrixFlow) runTask(ctx context.Context, ev *event.Event, taskID string) (Outputs, error) {
	n := threadOf(ev)
	if n == 0 {
		return Outputs{}, userf("--task needs the issue number (workflow_dispatch input `issue`)")
	}
	rec, found, err := r.store.loadRecord(ctx, n)
	if err != nil {
		return Outputs{}, err
	}
	m := rec.matrixWave()
	if !found || rec.State != StateRunning || m == nil || m.Collected || !slices.Contains(m.Tasks, taskID) {
		fmt.Fprintf(r.Out, "%s is not part of a wave being worked on for #%d; nothing to do\n", taskID, n)
		return Outputs{}, nil
	}
	if done, err := r.taskOnBranch(ctx, rec, taskID); done || err != nil {
		return Outputs{}, err
	}
	if err := rec.repo.EnsureCommit(ctx, r.Cfg.Remote, m.Base); err != nil {
		return Outputs{}, err
	}
	// A redelivered (or re-run) task job finds the result its first
	// delivery published for this attempt and does not run the agent again.
	if o, has, err := r.readResult(ctx, rec, m, taskID); err != nil {
		return Outputs{}, err
	} else if has {
		fmt.Fprintf(r.Out, "%s already has a result for attempt %d on %s (%s); not running it again\n", taskID, m.Attempt, taskRef(rec.SessionID, taskID), o.Status)
		return planOutputs(rec, taskStatus(o.Status)), nil
	}
	// Each task job checks the approval again: the state it was handed
	// may have been rewritten since the wave was prepared.
	if err := r.gate.checkApproval(ctx, rec); err != nil {
		if isRefusal(err) {
			return Outputs{}, r.gate.refuseUnapproved(rec, err)
		}
		return Outputs{}, err
	}
	eng, err := r.engines.newEngine(rec.repo, false, 0, nil)
	if err != nil {
		return Outputs{}, err
	}
	o, err := r.runWatched(ctx, eng, rec, m, taskID)
	if isRefusal(err) {
		return Outputs{}, r.gate.refuseUnapproved(rec, err)
	}
	if err != nil {
		return Outputs{}, err
	}
	if err := r.publishTask(ctx, rec, m, taskID, o); err != nil {
		return Outputs{}, err
	}
	fmt.Fprintf(r.Out, "%s: %s%s; result on %s\n", taskID, o.Status, errSuffix(o.Error), taskRef(rec.SessionID, taskID))
	out := planOutputs(rec, taskStatus(o.Status))
	if o.Status != plan.StatusCompleted {
		out.Failure = fmt.Sprintf("%s %s: %s", taskID, o.Status, abbrev.OneLine(o.Error))
	}
	return out, nil
}

// runWatched runs taskID of wave m while its approver's access is read
// again (watchApprover): a lapse stops the task, and its result is not
// published.
func (r *matrixFlow) runWatched(ctx context.Context, eng *engine.Engine, rec *Record, m *MatrixWave, taskID string) (execute.Outcome, error) {
	taskCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := r.engines.watchApprover(taskCtx, cancel, rec)
	o, err := eng.RunTask(taskCtx, rec.SessionID, taskID, m.Base, rec.PlanHash)
	stop()
	if errors.Is(context.Cause(taskCtx), errApprovalLapsed) && ctx.Err() == nil {
		return o, userf("Plan `%s`: task %s stopped, and its result is not published: @%s, who approved the plan, can no longer approve plans",
			rec.PlanID, taskID, rec.ApprovedBy)
	}
	return o, err
}

// publishTask commits a completed task on the wave's base and publishes
// its result, whatever its status, for the wave's collector.
func (r *matrixFlow) publishTask(ctx context.Context, rec *Record, m *MatrixWave, taskID string, o execute.Outcome) error {
	res := taskResult{Session: rec.SessionID, Task: taskID, Attempt: m.Attempt, Base: m.Base, Status: o.Status,
		Findings: o.Findings, AcceptanceMet: o.AcceptanceMet, TestsPassed: o.TestsPassed, Error: o.Error, Usage: o.Usage, RunURL: r.Cfg.RunURL,
		NetworkRefused: o.NetworkRefused}
	parent := m.Base
	if o.Status == plan.StatusCompleted {
		var err error
		if res.Commit, err = r.commitTask(ctx, rec, m.Base, o); err != nil {
			return err
		}
		parent = res.Commit
	}
	return r.publishResult(ctx, rec.repo, res, parent)
}

// taskOnBranch says whether the run branch has taskID's commit already.
func (r *matrixFlow) taskOnBranch(ctx context.Context, rec *Record, taskID string) (bool, error) {
	commits, err := r.Repo.TaskCommits(ctx, rec.Branch, rec.Base)
	if err != nil {
		return false, err
	}
	for _, c := range commits {
		if c.Session == rec.SessionID && c.Task == taskID {
			fmt.Fprintf(r.Out, "%s is already on %s (%s); nothing to do\n", taskID, rec.Branch, abbrev.SHA(c.SHA))
			return true, nil
		}
	}
	return false, nil
}

// commitTask commits a completed task's changes on the wave's base.
func (r *matrixFlow) commitTask(ctx context.Context, rec *Record, base string, o execute.Outcome) (string, error) {
	tasks, err := r.store.sessionTasks(rec)
	if err != nil {
		return "", err
	}
	title := o.ID
	if i, ok := plan.Index(tasks)[o.ID]; ok {
		title = tasks[i].Title
	}
	sha, err := rec.repo.CommitChanges(ctx, base, o.Changes, gitrepo.TaskMessage(rec.SessionID, o.ID, title, o.Findings))
	if err != nil {
		return "", fmt.Errorf("committing %s: %w", o.ID, err)
	}
	if sha, err = r.engines.makeOnGitHub(ctx, base, sha); err != nil {
		return "", fmt.Errorf("committing %s through GitHub's API: %w", o.ID, err)
	}
	return sha, nil
}

func (rec *Record) matrixWave() *MatrixWave {
	if rec == nil {
		return nil
	}
	return rec.Matrix
}

// publishResult records res as a commit on top of parent (same tree) and
// pushes it to the task's ref, replacing an earlier result with a lease.
func (r *matrixFlow) publishResult(ctx context.Context, repo *gitrepo.Repo, res taskResult, parent string) error {
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encoding the result of %s: %w", res.Task, err)
	}
	sha, err := repo.NoteCommit(ctx, parent, resultSubject+" "+res.Task+"\n\n"+string(b)+"\n")
	if err != nil {
		return fmt.Errorf("recording the result of %s: %w", res.Task, err)
	}
	ref := taskRef(res.Session, res.Task)
	if err := r.Repo.SetRef(ctx, ref, sha); err != nil {
		return err
	}
	old, err := r.Repo.RemoteRef(ctx, r.Cfg.Remote, ref)
	if err != nil {
		return err
	}
	return r.Repo.PushRef(ctx, r.Cfg.Remote, ref, true, old)
}

// readResult fetches a task's published result; ok is false when there is
// none for this attempt (the job died, timed out, was cancelled, or this
// is an older attempt's result).
func (r *matrixFlow) readResult(ctx context.Context, rec *Record, m *MatrixWave, task string) (execute.Outcome, bool, error) {
	ref := taskRef(rec.SessionID, task)
	found, err := r.Repo.FetchRef(ctx, r.Cfg.Remote, ref)
	if err != nil || !found {
		return execute.Outcome{}, false, err
	}
	id, err := gitrepo.ResolveRef(ctx, r.Repo, ref)
	if err != nil || id == "" {
		return execute.Outcome{}, false, err
	}
	msg, err := r.Repo.CommitMessage(ctx, id)
	if errors.Is(err, gitrepo.ErrNotCommit) {
		// A tag or a tree someone pushed there: no result, as below.
		r.Log.Warn("task result is not a commit", "ref", ref, "object", id)
		return execute.Outcome{}, false, nil
	}
	if err != nil {
		return execute.Outcome{}, false, err
	}
	_, body, _ := strings.Cut(strings.TrimSpace(msg), "\n\n")
	var res taskResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &res); err != nil {
		// Logged, and read as no result: the task job runs the task again,
		// and the collector records the task failed, which the status
		// comment and the run's failure output tell.
		r.Log.Warn("unreadable task result", "ref", ref, "err", err)
		return execute.Outcome{}, false, nil
	}
	if res.Session != rec.SessionID || res.Task != task || res.Attempt != m.Attempt || res.Base != m.Base {
		fmt.Fprintf(r.Out, "%s: the result on %s is from attempt %d, not %d; ignoring it\n", task, ref, res.Attempt, m.Attempt)
		return execute.Outcome{}, false, nil
	}
	o := execute.Outcome{ID: task, Status: res.Status, Findings: res.Findings, AcceptanceMet: res.AcceptanceMet,
		TestsPassed: res.TestsPassed, Error: res.Error, Usage: res.Usage.Bounded(), NetworkRefused: res.NetworkRefused}
	if res.Status != plan.StatusCompleted {
		return o, true, nil
	}
	// The task's commit must sit directly on the wave's base; its diff is
	// the task's change (the scope is checked again when it is integrated).
	parents, err := r.Repo.Parents(ctx, res.Commit)
	if err != nil || len(parents) != 1 || parents[0] != m.Base {
		o.Status, o.Error = plan.StatusFailed, fmt.Sprintf("its result commit %s does not start from the wave's base %s", abbrev.SHA(res.Commit), abbrev.SHA(m.Base))
		return o, true, nil
	}
	if o.Changes, err = r.Repo.DiffTrees(ctx, m.Base, res.Commit); err != nil {
		return execute.Outcome{}, false, err
	}
	r.engines.offerToPublisher(res.Commit)
	return o, true, nil
}

// Collect integrates the results of the wave this workflow run prepared,
// then dispatches the next wave or publishes the result. It is meant for a
// job that runs always (if: always()), after every task job.
func (r *Runner) Collect(ctx context.Context, ev *event.Event) error {
	if err := r.sameRepository(ev); err != nil {
		return r.step(Outputs{}, err)
	}
	return r.step(r.flows().matrix.collect(ctx, ev))
}

func (r *matrixFlow) collect(ctx context.Context, ev *event.Event) (Outputs, error) {
	n := threadOf(ev)
	if n == 0 {
		return Outputs{}, userf("--collect needs the issue number (workflow_dispatch input `issue`)")
	}
	const tries = 4
	var o Outputs
	for try := 1; ; try++ {
		next, err := r.collectOnce(ctx, ev, n)
		o = o.with(next)
		if !errors.Is(err, errStateMoved) && !errors.Is(err, errBranchMoved) || try == tries {
			return o, err
		}
		fmt.Fprintf(r.Out, "another run moved the plan's state or branch (%v); collecting again\n", err)
	}
}

var errBranchMoved = errors.New("the run branch moved")

func (r *matrixFlow) collectOnce(ctx context.Context, ev *event.Event, n int) (Outputs, error) {
	rec, found, err := r.store.loadRecord(ctx, n)
	if err != nil {
		return Outputs{}, err
	}
	m := rec.matrixWave()
	if !found || rec.State != StateRunning || m == nil || m.Collected {
		fmt.Fprintf(r.Out, "#%d has no wave waiting to be collected; nothing to do\n", n)
		return Outputs{}, nil
	}
	if m.RunID != "" && r.Cfg.RunID != "" && m.RunID != r.Cfg.RunID {
		fmt.Fprintf(r.Out, "wave %d belongs to workflow run %s, not this one (%s); leaving it to that run\n", m.Wave, m.RunID, r.Cfg.RunID)
		return Outputs{}, nil
	}
	o := planOutputs(rec, recordStatus(rec.State))
	th := thread{Number: n, Actor: ev.Sender}
	remoteTip, err := r.Repo.RemoteRef(ctx, r.Cfg.Remote, "refs/heads/"+rec.Branch)
	if err != nil {
		return o, err
	}
	outcomes, err := r.waveOutcomes(ctx, rec, m)
	if err != nil {
		return r.talk.failAfter(ctx, th, rec, o, err)
	}
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return r.talk.failAfter(ctx, th, rec, o, err)
	}
	if err := eng.Integrate(ctx, rec.SessionID, outcomes, rec.PlanHash); err != nil {
		if isRefusal(err) {
			err = r.gate.refuseUnapproved(rec, err)
		}
		return r.talk.failAfter(ctx, th, rec, o, err)
	}
	if err := r.pushCollected(ctx, rec, remoteTip); err != nil {
		return o, err
	}
	m.Collected = true
	if err := r.store.saveRecord(ctx, rec); err != nil {
		return o, err
	}
	// Only the collect that recorded the wave goes on from here.
	w, next, done, err := r.nextWave(ctx, th, rec, eng)
	if done || err != nil {
		return o.with(next), err
	}
	if err := r.dispatchWave(ctx, rec); err != nil {
		return r.talk.failAfter(ctx, th, rec, o, err)
	}
	tasks, unread := r.store.statusTasks(rec)
	c := plan.Count(tasks)
	r.talk.updateStatus(ctx, rec, tasks, withNote(fmt.Sprintf("Wave %d collected (%d of %s completed so far); wave %d dispatched.", m.Wave, c.Completed, plural.Count(c.Total, "task", "tasks"), w.Number), unread))
	fmt.Fprintf(r.Out, "wave %d collected; wave %d dispatched\n", m.Wave, w.Number)
	return o, nil
}

// waveOutcomes reads the results the wave's task jobs published; a task
// without one failed.
func (r *matrixFlow) waveOutcomes(ctx context.Context, rec *Record, m *MatrixWave) ([]execute.Outcome, error) {
	var outcomes []execute.Outcome
	for _, id := range m.Tasks {
		o, ok, err := r.readResult(ctx, rec, m, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			o = execute.Outcome{ID: id, Status: plan.StatusFailed,
				Error: "its job published no result: it died, timed out or was cancelled" + runRef(r.Cfg.RunURL)}
		}
		outcomes = append(outcomes, o)
	}
	return outcomes, nil
}

// pushCollected moves the run branch on origin from remoteTip to what
// collect made of it, with a lease: errBranchMoved when another run moved
// it first.
func (r *matrixFlow) pushCollected(ctx context.Context, rec *Record, remoteTip string) error {
	tip, err := rec.repo.ResolveBranch(ctx, rec.Branch)
	// With commit-signing: api, Integrate moved GitHub's branch itself.
	if err != nil || tip == remoteTip || r.apiCommits() {
		return err
	}
	if err := r.Repo.PushRef(ctx, r.Cfg.Remote, "refs/heads/"+rec.Branch, true, remoteTip); err != nil {
		return fmt.Errorf("%w: %v", errBranchMoved, err)
	}
	return nil
}

func runRef(url string) string {
	if url == "" {
		return ""
	}
	return " (see " + url + ")"
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// nextWave finds the plan's next wave. When there is none (or the budget
// allows no more), it concludes the run and publishes it, and done is true.
// Before every wave the approval is checked on GitHub again and the
// session against the approved plan.
func (r *matrixFlow) nextWave(ctx context.Context, th thread, rec *Record, eng *engine.Engine) (w engine.Wave, o Outputs, done bool, err error) {
	if err := r.gate.checkApproval(ctx, rec); err != nil {
		if isRefusal(err) {
			err = r.gate.refuseUnapproved(rec, err)
		}
		o, err = r.talk.fail(ctx, th, rec, err)
		return w, o, true, err
	}
	w, err = eng.PrepareWave(ctx, rec.SessionID, rec.PlanHash)
	if isRefusal(err) {
		o, err = r.talk.fail(ctx, th, rec, r.gate.refuseUnapproved(rec, err))
		return w, o, true, err
	}
	var be *engine.BudgetError
	if errors.As(err, &be) || (err == nil && w.Number == 0) {
		out, cerr := eng.Conclude(ctx, rec.SessionID, rec.PlanHash)
		if cerr != nil {
			o, err = r.talk.fail(ctx, th, rec, cerr)
			return w, o, true, err
		}
		if be != nil {
			out.Stage, out.Reason = engine.StageStopped, be.Error()
		}
		o, err = r.runs.finish(ctx, th, rec, out)
		return w, o, true, err
	}
	if err != nil {
		o, err = r.talk.fail(ctx, th, rec, err)
		return w, o, true, err
	}
	return w, Outputs{}, false, nil
}
