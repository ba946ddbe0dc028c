package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/execute"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/scope"
	"github.com/planexhq/planex/internal/session"
)

// The execution of a plan is made of three building blocks, shared by the
// single-process mode (execute → runWave) and the one-task-per-process
// mode (PrepareWave → RunTask → Integrate):
//
//   - nextWave: re-read tasks.csv, skip what can no longer run, pick the
//     next wave and the branch tip it starts from;
//   - taskJob: the prompt, context and directives of one task;
//   - record: apply one task's outcome to tasks.csv and commit a completed
//     task on top of the branch (compare-and-swap).
//
// Whichever mode ran the tasks, the branch gets the same commits (one per
// completed task, in the order of tasks.csv) with the same trees.

// execute runs the waves of tasks.csv on the session's branch.
func (e *Engine) execute(ctx context.Context, s *session.Session, rc *RepoContext) error {
	if err := e.startBranch(ctx, s); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		w, tasks, err := e.nextWave(ctx, s)
		if err != nil {
			return err
		}
		if w.Number == 0 {
			return nil
		}
		fmt.Fprintf(e.o.Out, "wave %d: %s\n", w.Number, strings.Join(w.IDs(), ", "))
		if err := e.runWave(ctx, s, rc, tasks, w.Tasks, w.Base); err != nil {
			return err
		}
	}
}

// startBranch creates the run branch at the session's base when it does
// not exist yet, and makes tasks.csv agree with it.
func (e *Engine) startBranch(ctx context.Context, s *session.Session) error {
	tip, err := e.repo.ResolveBranch(ctx, s.Meta.Branch)
	if err != nil {
		return err
	}
	if tip == "" {
		if err := e.repo.UpdateBranch(ctx, s.Meta.Branch, s.Meta.Base, "", "planex: start "+s.Meta.ID); err != nil {
			return err
		}
	}
	return e.reconcile(ctx, s)
}

// Wave is a set of tasks that can run now, side by side, from Base.
type Wave struct {
	Number int         // 0: nothing is left to run
	Base   string      // the run branch's tip the tasks start from
	Tasks  []plan.Task // in the order of tasks.csv
}

// IDs lists the wave's task ids.
func (w Wave) IDs() []string {
	ids := make([]string, len(w.Tasks))
	for i, t := range w.Tasks {
		ids[i] = t.ID
	}
	return ids
}

// nextWave re-reads tasks.csv (the source of truth), skips the tasks whose
// dependencies did not complete, and returns the next wave with the tasks.
func (e *Engine) nextWave(ctx context.Context, s *session.Session) (Wave, []plan.Task, error) {
	tasks, err := e.loadTasks(s)
	if err != nil {
		return Wave{}, nil, err
	}
	if skipped := plan.Cascade(tasks); len(skipped) > 0 {
		fmt.Fprintf(e.o.Out, "skipped (a dependency did not complete): %s\n", strings.Join(skipped, ", "))
		if err := s.WriteTasks(tasks); err != nil {
			return Wave{}, nil, err
		}
	}
	ready, wave := plan.Ready(tasks)
	if wave == 0 {
		return Wave{}, tasks, nil
	}
	tip, err := e.repo.ResolveBranch(ctx, s.Meta.Branch)
	if err != nil {
		return Wave{}, nil, err
	}
	return Wave{Number: wave, Base: tip, Tasks: ready}, tasks, nil
}

// taskInputs is what every task of a wave is told besides its own row.
type taskInputs struct {
	rc          *RepoContext
	explore     []plan.ExploreRow
	discoveries string
}

func (e *Engine) taskInputs(s *session.Session, rc *RepoContext) (taskInputs, error) {
	in := taskInputs{rc: rc, explore: []plan.ExploreRow{}, discoveries: e.discoveriesText(s)}
	if s.Exists(session.ExploreFile) {
		var err error
		if in.explore, err = s.ReadExplore(); err != nil {
			return in, err
		}
	}
	return in, nil
}

// taskJob builds the job of one task: its prompt (with the context of the
// explorations and tasks it draws on) and its execution directives (the
// task's own, or the repository's test command).
func (e *Engine) taskJob(s *session.Session, in taskInputs, tasks []plan.Task, t plan.Task, base string) (execute.Job, error) {
	directives := t.ExecutionDirectives
	if strings.TrimSpace(directives) == "" && in.rc != nil {
		directives = in.rc.TestCommand
	}
	c := e.common(s, in.rc)
	c.Discoveries = in.discoveries
	p, err := e.prompts.Execute(c, t, plan.PrevContext(t, in.explore, tasks), directives)
	if err != nil {
		return execute.Job{}, fmt.Errorf("building the prompt of %s: %w", t.ID, err)
	}
	return execute.Job{Task: t, Base: base, Prompt: p, Session: s.Meta.ID, Board: s.File(session.DiscoveriesFile),
		Timeout: e.step(agent.PhaseExecute), Directives: directives}, nil
}

// runWave runs ready tasks concurrently and commits the completed ones in
// id order, so the branch is the same whatever order they finish in.
func (e *Engine) runWave(ctx context.Context, s *session.Session, rc *RepoContext, tasks, ready []plan.Task, tip string) error {
	in, err := e.taskInputs(s, rc)
	if err != nil {
		return err
	}
	base := tip
	results := make([]chan execute.Outcome, len(ready))
	sem := make(chan struct{}, e.o.Concurrency)
	var budgetErr error
	started := 0
	for i, t := range ready {
		if err := e.o.Budget.check(s, tasks, agent.PhaseExecute); err != nil {
			budgetErr = err
			break
		}
		job, err := e.taskJob(s, in, tasks, t, base)
		if err != nil {
			return err
		}
		results[i] = make(chan execute.Outcome, 1)
		started++
		sem <- struct{}{}
		go func(ch chan<- execute.Outcome) {
			defer func() { <-sem }()
			fmt.Fprintf(e.o.Out, "  %s: started (%s)\n", job.Task.ID, job.Task.Title)
			ch <- e.runner.Run(ctx, job)
		}(results[i])
	}
	for i := 0; i < started; i++ {
		o := <-results[i]
		if ctx.Err() != nil && o.Status != plan.StatusCompleted {
			// Interrupted, not failed: leave it pending for --continue.
			continue
		}
		if tip, err = e.record(ctx, s, tasks, tip, o); err != nil {
			return err
		}
		if e.o.Progress != nil {
			e.o.Progress(ctx, s, tasks)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return budgetErr
}

// record applies one task's outcome to tasks (in place): a completed task
// becomes one commit on top of tip, moving the branch there with a
// compare-and-swap. tasks.csv is written. It returns the new tip.
func (e *Engine) record(ctx context.Context, s *session.Session, tasks []plan.Task, tip string, o execute.Outcome) (string, error) {
	idx := plan.Index(tasks)
	i, ok := idx[o.ID]
	if !ok {
		return tip, fmt.Errorf("session %s has no task %q", s.Meta.ID, o.ID)
	}
	t := tasks[i]
	if o.Status == plan.StatusCompleted {
		// Checked again here: an outcome may come from another process.
		if bad := scope.Outside(t.Scope, o.Files()); len(bad) > 0 {
			o.Status, o.Changes = plan.StatusFailed, nil
			o.Error = plan.Truncate(fmt.Sprintf("wrote outside its scope %q: %s", t.Scope, strings.Join(bad, ", ")), 1000)
		} else if len(o.Changes) == 0 {
			o.Status, o.Error = plan.StatusFailed, "no changes: the agent reported success but changed no file"
		}
	}
	if o.Status == plan.StatusCompleted {
		sha, err := e.runner.Commit(ctx, s.Meta.Branch, tip, s.Meta.ID, t, o)
		if err != nil {
			o.Status, o.Error = plan.StatusFailed, err.Error()
		} else {
			tip = sha
			t.Commit = sha
		}
	}
	t.Status = o.Status
	t.Findings = o.Findings
	t.FilesModified = o.Files()
	t.TestsPassed = o.TestsPassed
	t.AcceptanceMet = o.AcceptanceMet
	t.Error = o.Error
	t.InputTokens += o.Usage.InputTokens
	t.OutputTokens += o.Usage.OutputTokens
	t.CostUSD += o.Usage.CostUSD
	tasks[i] = t
	fmt.Fprintf(e.o.Out, "  %s: %s%s\n", t.ID, t.Status, suffix(t.Error))
	return tip, s.WriteTasks(tasks)
}

// ErrNotApproved means a session's plan has not passed the tasks gate.
var ErrNotApproved = errors.New("the plan is not approved")

// PrepareWave readies an approved session's next wave for tasks that run
// elsewhere (RunTask in other processes, then Integrate): the run branch
// exists and agrees with tasks.csv, and tasks whose dependencies did not
// complete are skipped. Wave.Number is 0 when nothing is left to run.
func (e *Engine) PrepareWave(ctx context.Context, sessionID string) (Wave, error) {
	s, err := e.openApproved(sessionID)
	if err != nil {
		return Wave{}, err
	}
	if err := e.startBranch(ctx, s); err != nil {
		return Wave{}, err
	}
	w, tasks, err := e.nextWave(ctx, s)
	if err != nil || w.Number == 0 {
		return w, err
	}
	if err := e.o.Budget.check(s, tasks, agent.PhaseExecute); err != nil {
		return Wave{}, err
	}
	return w, nil
}

// RunTask runs one task of an approved session in a worktree at base, as
// runWave would (same prompt, context and directives), and returns its
// outcome without committing it. The outcome's changes are relative to
// base.
func (e *Engine) RunTask(ctx context.Context, sessionID, taskID, base string) (execute.Outcome, error) {
	s, err := e.openApproved(sessionID)
	if err != nil {
		return execute.Outcome{}, err
	}
	tasks, err := e.loadTasks(s)
	if err != nil {
		return execute.Outcome{}, err
	}
	i, ok := plan.Index(tasks)[taskID]
	if !ok {
		return execute.Outcome{}, fmt.Errorf("session %s has no task %q", s.Meta.ID, taskID)
	}
	in, err := e.taskInputs(s, e.repoContext(ctx, s))
	if err != nil {
		return execute.Outcome{}, err
	}
	job, err := e.taskJob(s, in, tasks, tasks[i], base)
	if err != nil {
		return execute.Outcome{}, err
	}
	fmt.Fprintf(e.o.Out, "  %s: started (%s)\n", taskID, tasks[i].Title)
	o := e.runner.Run(ctx, job)
	fmt.Fprintf(e.o.Out, "  %s: %s%s\n", taskID, o.Status, suffix(o.Error))
	return o, nil
}

// Integrate records the outcomes of tasks that ran elsewhere: completed
// ones become one commit each on the run branch, in the order of
// tasks.csv (whatever order the outcomes are given in), failures are
// recorded with their reasons, dependents of failed tasks are skipped and
// tasks.csv is written. It is idempotent: a task whose commit is already
// on the branch (found by its trailers) is never committed again. The
// changes of each outcome must be relative to the wave's base, and their
// blobs present in the repository.
func (e *Engine) Integrate(ctx context.Context, sessionID string, outcomes []execute.Outcome) error {
	s, err := e.openApproved(sessionID)
	if err != nil {
		return err
	}
	// reconcile: a task already on the branch is completed in tasks.csv.
	if err := e.startBranch(ctx, s); err != nil {
		return err
	}
	tasks, err := e.loadTasks(s)
	if err != nil {
		return err
	}
	idx := plan.Index(tasks)
	sorted := append([]execute.Outcome(nil), outcomes...)
	for _, o := range sorted {
		if _, ok := idx[o.ID]; !ok {
			return fmt.Errorf("session %s has no task %q", s.Meta.ID, o.ID)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return idx[sorted[i].ID] < idx[sorted[j].ID] })
	tip, err := e.repo.ResolveBranch(ctx, s.Meta.Branch)
	if err != nil {
		return err
	}
	for _, o := range sorted {
		if tasks[idx[o.ID]].Status == plan.StatusCompleted {
			fmt.Fprintf(e.o.Out, "  %s: already on %s\n", o.ID, s.Meta.Branch)
			continue
		}
		if tip, err = e.record(ctx, s, tasks, tip, o); err != nil {
			return err
		}
	}
	if skipped := plan.Cascade(tasks); len(skipped) > 0 {
		fmt.Fprintf(e.o.Out, "skipped (a dependency did not complete): %s\n", strings.Join(skipped, ", "))
	}
	if err := s.WriteTasks(tasks); err != nil {
		return err
	}
	if e.o.Progress != nil {
		e.o.Progress(ctx, s, tasks)
	}
	return nil
}

// Conclude writes the report of a session whose tasks ran through
// PrepareWave/RunTask/Integrate and says where it stands.
func (e *Engine) Conclude(ctx context.Context, sessionID string) (*Outcome, error) {
	s, err := session.Open(e.repo.Root, sessionID)
	if err != nil {
		return nil, err
	}
	tasks, err := e.loadTasks(s)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Session: s, Stage: StageDone, Counts: plan.Count(tasks)}
	reason := ""
	if _, wave := plan.Ready(tasks); wave != 0 {
		out.Stage, reason = StageStopped, "stopped before every task ran"
		out.Reason = reason
	} else {
		// The same review single-job mode makes after its last wave.
		e.review(ctx, s, tasks)
	}
	if err := e.aggregate(s, tasks, reason); err != nil {
		return nil, err
	}
	return out, nil
}

// openApproved opens a session whose tasks gate was passed.
func (e *Engine) openApproved(id string) (*session.Session, error) {
	s, err := session.Open(e.repo.Root, id)
	if err != nil {
		return nil, err
	}
	if s.Meta.Cancelled {
		return nil, fmt.Errorf("session %s was cancelled", s.Meta.ID)
	}
	if !s.Meta.Approved[session.GateTasks] {
		return nil, fmt.Errorf("session %s: %w", s.Meta.ID, ErrNotApproved)
	}
	return s, nil
}

// repoContext maps the repository for a session the way run does.
func (e *Engine) repoContext(ctx context.Context, s *session.Session) *RepoContext {
	if e.o.Mapper == nil || (s.Exists(session.TasksFile) && s.Meta.Imported) {
		return nil
	}
	rc, err := e.o.Mapper.Map(ctx, e.repo.Root, s.Meta.Requirement)
	if err != nil {
		e.o.Log.Warn("repository map unavailable", "err", err)
		return nil
	}
	e.seedDiscoveries(s, rc)
	return rc
}

// reconcile makes tasks.csv agree with the branch after a crash: a task
// whose commit is on the branch is completed (the commit is the proof),
// and a "completed" task without one runs again.
func (e *Engine) reconcile(ctx context.Context, s *session.Session) error {
	tasks, err := e.loadTasks(s)
	if err != nil {
		return err
	}
	commits, err := e.repo.TaskCommits(ctx, s.Meta.Branch, s.Meta.Base)
	if err != nil {
		return err
	}
	byTask := map[string]gitrepo.TaskCommit{}
	for _, c := range commits {
		if c.Session == s.Meta.ID {
			byTask[c.Task] = c
		}
	}
	changed := false
	for i := range tasks {
		t := &tasks[i]
		c, onBranch := byTask[t.ID]
		switch {
		case onBranch && (t.Status != plan.StatusCompleted || t.Commit != c.SHA):
			changes, err := e.repo.DiffTrees(ctx, c.SHA+"^", c.SHA)
			if err != nil {
				return err
			}
			if t.Status != plan.StatusCompleted {
				fmt.Fprintf(e.o.Out, "%s: found its commit %s on %s; marking it completed\n", t.ID, short(c.SHA), s.Meta.Branch)
				t.Findings = c.Body
				t.TestsPassed = "true"
				t.Error = ""
			}
			t.Status = plan.StatusCompleted
			t.Commit = c.SHA
			t.FilesModified = gitrepo.Paths(changes)
			changed = true
		case !onBranch && t.Status == plan.StatusCompleted:
			fmt.Fprintf(e.o.Out, "%s: marked completed but its commit is not on %s; it will run again\n", t.ID, s.Meta.Branch)
			t.Status, t.Commit = plan.StatusPending, ""
			changed = true
		case t.Status == plan.StatusRunning:
			t.Status = plan.StatusPending
			changed = true
		}
	}
	if !changed {
		return nil
	}
	sort.SliceStable(tasks, func(i, j int) bool { return tasks[i].Line < tasks[j].Line })
	return s.WriteTasks(tasks)
}

// ApprovePlan passes the tasks gate of a session only if its plan still
// has the given hash, without running anything (the tasks then run through
// PrepareWave, RunTask and Integrate).
func (e *Engine) ApprovePlan(ctx context.Context, id, hash string) error {
	_, err := e.approvePlan(id, hash)
	return err
}

func (e *Engine) approvePlan(id, hash string) (*session.Session, error) {
	s, err := session.Open(e.repo.Root, id)
	if err != nil {
		return nil, err
	}
	tasks, err := e.loadTasks(s)
	if err != nil {
		return nil, err
	}
	if got := plan.Hash(tasks); got != hash {
		return nil, fmt.Errorf("%w: the session's plan is %s, not %s", ErrPlanChanged, plan.ID(got), plan.ID(hash))
	}
	if s.Meta.Approved == nil {
		s.Meta.Approved = map[session.Gate]bool{}
	}
	s.Meta.Approved[session.GateAngles] = true
	s.Meta.Approved[session.GateTasks] = true
	s.Meta.PlanHash = hash
	s.Meta.WaitingAt = ""
	if err := s.SaveMeta(); err != nil {
		return nil, err
	}
	return s, nil
}

// ResetFailed sets failed and skipped tasks back to pending without
// running them, and reports how many there were.
func (e *Engine) ResetFailed(ctx context.Context, id string) (int, error) {
	_, n, err := e.resetFailed(id)
	return n, err
}

// ErrNothingToRetry means a session has no failed or skipped task.
var ErrNothingToRetry = errors.New("no failed or skipped task to retry")

func (e *Engine) resetFailed(id string) (*session.Session, int, error) {
	s, err := session.Open(e.repo.Root, id)
	if err != nil {
		return nil, 0, err
	}
	tasks, err := s.ReadTasks()
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for i := range tasks {
		if tasks[i].Status == plan.StatusFailed || tasks[i].Status == plan.StatusSkipped {
			tasks[i].Status, tasks[i].Error, tasks[i].TestsPassed = plan.StatusPending, "", ""
			n++
		}
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("session %s has %w", s.Meta.ID, ErrNothingToRetry)
	}
	if err := s.WriteTasks(tasks); err != nil {
		return nil, 0, err
	}
	s.Meta.Finished = time.Time{}
	if err := s.SaveMeta(); err != nil {
		return nil, 0, err
	}
	fmt.Fprintf(e.o.Out, "retrying %d task(s)\n", n)
	return s, n, nil
}
