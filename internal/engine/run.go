package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/execute"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/prompt"
	"github.com/planexhq/planex/internal/scope"
	"github.com/planexhq/planex/internal/session"
)

// The execution of a plan is made of three building blocks, shared by the
// single-process mode (execute, scheduled task by task) and the
// one-task-per-process mode (PrepareWave → RunTask → Integrate, wave by
// wave):
//
//   - nextWave / schedule: what can run now and from which branch tip;
//   - taskJob: the prompt, context and directives of one task;
//   - record: apply one task's outcome to tasks.csv and commit a completed
//     task on top of the branch (compare-and-swap).
//
// Whichever mode ran the tasks, the branch gets one commit per completed
// task, each holding the same changes, and the same final tree.

// execute runs the approved plan on the session's branch (see schedule
// and execution).
func (e *Engine) execute(ctx context.Context, s *session.Session, rc *RepoContext, ap *session.Approval) error {
	tip, err := e.startBranch(ctx, s, ap)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.o.Out, "execute: on branch %s\n", s.Meta.Branch)
	// Worktrees are kept from task to task; they go when the run does.
	defer e.runner.Close(ctx)
	tasks, err := e.plans.loadApproved(s, ap)
	if err != nil {
		return err
	}
	if err := e.cascade(s, ap, tasks); err != nil {
		return err
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	e.runner.RemoveStale(ctx, s.Meta.ID, ids)
	return e.newExecution(s, ap, rc, tasks, tip).run(ctx)
}

// cascade skips the tasks whose dependencies did not complete, and writes
// tasks.csv when it did.
func (e *Engine) cascade(s *session.Session, ap *session.Approval, tasks []plan.Task) error {
	skipped := plan.Cascade(tasks)
	if len(skipped) == 0 {
		return nil
	}
	fmt.Fprintf(e.o.Out, "skipped (a dependency did not complete): %s\n", strings.Join(skipped, ", "))
	return writeTasks(s, ap, tasks)
}

// startBranch creates the run branch at the session's base when it does
// not exist yet, makes tasks.csv agree with it, and returns its tip.
//
// The branch is read once, after the publisher brought it up to date:
// that is where a writer from outside (a push, another job) shows. The
// tip read is the one reconcile checks and the one the run builds on.
// Nothing between here and the first task commit moves the branch (the
// run's own writes are tasks.csv and its worktrees), and that commit
// is a compare-and-swap from this tip, so a branch moved meanwhile (by
// an agent, or another process on the same repository) stops it with
// ErrRefMoved instead of being built on unchecked.
func (e *Engine) startBranch(ctx context.Context, s *session.Session, ap *session.Approval) (string, error) {
	if e.o.Publisher != nil {
		if err := e.o.Publisher.Sync(ctx, s.Meta.Branch); err != nil {
			return "", err
		}
	}
	tip, err := e.repo.ResolveBranch(ctx, s.Meta.Branch)
	if err != nil {
		return "", err
	}
	if tip == "" {
		if err := e.repo.UpdateBranch(ctx, s.Meta.Branch, s.Meta.Base, "", "planex: start "+s.Meta.ID); err != nil {
			return "", err
		}
		tip = s.Meta.Base
	}
	return tip, e.reconcile(ctx, s, ap, tip)
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

// nextWave re-reads tasks.csv (the source of truth for progress), refuses
// it if its plan is not the approved one, skips the tasks whose
// dependencies did not complete, and returns the next wave, to start from
// tip, with the tasks.
func (e *Engine) nextWave(s *session.Session, ap *session.Approval, tip string) (Wave, []plan.Task, error) {
	tasks, err := e.plans.loadApproved(s, ap)
	if err != nil {
		return Wave{}, nil, err
	}
	if err := e.cascade(s, ap, tasks); err != nil {
		return Wave{}, nil, err
	}
	ready, wave := plan.Ready(tasks)
	if wave == 0 {
		return Wave{}, tasks, nil
	}
	return Wave{Number: wave, Base: tip, Tasks: ready}, tasks, nil
}

// taskInputs is what every task of a wave is told besides its own row.
type taskInputs struct {
	common      prompt.Common
	rc          *RepoContext
	explore     []plan.ExploreRow
	discoveries string
}

func (e *Engine) taskInputs(ctx context.Context, s *session.Session, rc *RepoContext) (taskInputs, error) {
	in := taskInputs{common: e.common(ctx, s, rc), rc: rc, explore: []plan.ExploreRow{}, discoveries: e.discoveriesText(s)}
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
	if strings.TrimSpace(directives) == "" && in.rc != nil && !e.o.ApprovedDirectivesOnly {
		directives = in.rc.TestCommand
	}
	c := in.common
	c.Discoveries = in.discoveries
	p, err := e.prompts.Execute(c, t, plan.PrevContext(t, in.explore, tasks), directives)
	if err != nil {
		return execute.Job{}, fmt.Errorf("building the prompt of %s: %w", t.ID, err)
	}
	return execute.Job{Task: t, Base: base, Prompt: p, Session: s.Meta.ID, Board: s.File(session.DiscoveriesFile),
		Timeout: e.step(agent.PhaseExecute), Directives: directives, Limit: e.o.Budget.limit(s, tasks)}, nil
}

// record applies one task's outcome to tasks (in place): a completed task
// becomes one commit on top of tip, moving the branch there with a
// compare-and-swap. tasks.csv is written. It returns the new tip. Nothing
// is recorded when tasks.csv is no longer the approved plan.
func (e *Engine) record(ctx context.Context, s *session.Session, ap *session.Approval, tasks []plan.Task, tip string, o execute.Outcome) (string, error) {
	if err := checkPlan(s, ap); err != nil {
		return tip, err
	}
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
			o.Error = abbrev.Truncate(fmt.Sprintf("wrote outside its scope %q: %s", t.Scope, strings.Join(bad, ", ")), 1000)
		} else if len(o.Changes) == 0 {
			o.Status, o.Error = plan.StatusFailed, "no changes: the agent reported success but changed no file"
		} else if why := e.runner.Recheck(ctx, t.Scope, tip, o); why != "" {
			o.Status, o.Changes, o.Error = plan.StatusFailed, nil, why
		}
	}
	if o.Status == plan.StatusCompleted {
		// A task that completed is committed even when the run is being
		// interrupted: cancelling its commit half-way recorded the task as
		// failed, and --continue does not run failed tasks again.
		limit := time.Minute
		if e.o.Publisher != nil {
			// The commit is made through GitHub's API: many requests,
			// rate-limit waits included.
			limit = 15 * time.Minute
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		sha, err := e.runner.Commit(cctx, s.Meta.Branch, tip, s.Meta.ID, t, o)
		cancel()
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
	t.NetworkRefused = o.NetworkRefused
	t.InputTokens += o.Usage.InputTokens
	t.OutputTokens += o.Usage.OutputTokens
	t.CostUSD += o.Usage.CostUSD
	t.CacheReadTokens += o.Usage.CacheReadTokens
	t.CacheWriteTokens += o.Usage.CacheWriteTokens
	tasks[i] = t
	fmt.Fprintf(e.o.Out, "  %s: %s%s\n", t.ID, t.Status, suffix(t.Error))
	if t.NetworkRefused != "" {
		fmt.Fprintf(e.o.Out, "  %s: network refused: %s\n", t.ID, t.NetworkRefused)
	}
	return tip, writeTasks(s, ap, tasks)
}

// PrepareWave readies the next wave of a session whose plan was approved
// with the given hash, for tasks that run elsewhere (RunTask in other
// processes, then Integrate): the run branch exists and agrees with
// tasks.csv, and tasks whose dependencies did not complete are skipped.
// Wave.Number is 0 when nothing is left to run.
func (e *Engine) PrepareWave(ctx context.Context, sessionID, hash string) (Wave, error) {
	s, ap, err := e.plans.openApproved(sessionID, hash)
	if err != nil {
		return Wave{}, err
	}
	tip, err := e.startBranch(ctx, s, ap)
	if err != nil {
		return Wave{}, err
	}
	w, tasks, err := e.nextWave(s, ap, tip)
	if err != nil || w.Number == 0 {
		return w, err
	}
	if err := e.canStart(s, tasks, agent.PhaseExecute); err != nil {
		return Wave{}, err
	}
	return w, nil
}

// RunTask runs one task of a session whose plan was approved with the
// given hash in a worktree at base, as runWave would (same prompt, context
// and directives), and returns its outcome without committing it. The
// outcome's changes are relative to base.
func (e *Engine) RunTask(ctx context.Context, sessionID, taskID, base, hash string) (execute.Outcome, error) {
	s, ap, err := e.plans.openApproved(sessionID, hash)
	if err != nil {
		return execute.Outcome{}, err
	}
	tasks, err := e.plans.loadApproved(s, ap)
	if err != nil {
		return execute.Outcome{}, err
	}
	i, ok := plan.Index(tasks)[taskID]
	if !ok {
		return execute.Outcome{}, fmt.Errorf("session %s has no task %q", s.Meta.ID, taskID)
	}
	in, err := e.taskInputs(ctx, s, e.repoContext(ctx, s))
	if err != nil {
		return execute.Outcome{}, err
	}
	job, err := e.taskJob(s, in, tasks, tasks[i], base)
	if err != nil {
		return execute.Outcome{}, err
	}
	fmt.Fprintf(e.o.Out, "  %s: started (%s)\n", taskID, tasks[i].Title)
	o := e.runner.Run(ctx, job)
	e.runner.Close(ctx)
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
// blobs present in the repository. The plan must be the one approved with
// the given hash.
func (e *Engine) Integrate(ctx context.Context, sessionID string, outcomes []execute.Outcome, hash string) error {
	s, ap, err := e.plans.openApproved(sessionID, hash)
	if err != nil {
		return err
	}
	// reconcile: a task already on the branch is completed in tasks.csv.
	tip, err := e.startBranch(ctx, s, ap)
	if err != nil {
		return err
	}
	tasks, err := e.plans.loadApproved(s, ap)
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
	for _, o := range sorted {
		if tasks[idx[o.ID]].Status == plan.StatusCompleted {
			fmt.Fprintf(e.o.Out, "  %s: already on %s\n", o.ID, s.Meta.Branch)
			continue
		}
		if tip, err = e.record(ctx, s, ap, tasks, tip, o); err != nil {
			return err
		}
	}
	if skipped := plan.Cascade(tasks); len(skipped) > 0 {
		fmt.Fprintf(e.o.Out, "skipped (a dependency did not complete): %s\n", strings.Join(skipped, ", "))
	}
	if err := writeTasks(s, ap, tasks); err != nil {
		return err
	}
	if e.o.Progress != nil {
		e.o.Progress(ctx, s, tasks)
	}
	return nil
}

// Conclude writes the report of a session whose tasks ran through
// PrepareWave/RunTask/Integrate (its plan approved with the given hash)
// and says where it stands.
func (e *Engine) Conclude(ctx context.Context, sessionID, hash string) (*Outcome, error) {
	s, ap, err := e.plans.openApproved(sessionID, hash)
	if err != nil {
		return nil, err
	}
	tasks, err := e.plans.loadApproved(s, ap)
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

// ErrForeignTaskCommit means the run branch holds a commit with planex's
// trailers for a task that the task's own checks refuse: not one this run
// made, since whoever can push to the branch can write those trailers.
var ErrForeignTaskCommit = errors.New("the run branch holds a task commit planex's checks refuse")

// ErrForeignRunBranch means the run branch is not this run's to build on:
// it does not hold the plan's base, or it held commits before any of the
// run's tasks had committed (someone who can push made it first: the
// plan comment names it).
var ErrForeignRunBranch = errors.New("the run branch is not this run's")

// checkRunBranch refuses a run branch found at a commit the approved plan
// never showed: one that does not hold the plan's base, or one that is
// ahead of the base while none of its commits is a task commit of this
// run (own counts those). Once a task has committed, later commits on the
// branch (a fix pushed before a retry) are the pull request's to show.
// tip is the branch's tip as startBranch read it, the commit whose
// history own was counted in.
func checkRunBranch(ctx context.Context, repo *gitrepo.Repo, s *session.Session, tip string, own int) error {
	if tip == "" || tip == s.Meta.Base {
		return nil
	}
	if !repo.IsAncestor(ctx, s.Meta.Base, tip) {
		return fmt.Errorf("%w: %s is at %s, which does not hold the plan's base %s: someone who can push moved it; nothing runs. "+
			"Delete the branch and approve again, or start a new plan", ErrForeignRunBranch, s.Meta.Branch, abbrev.SHA(tip), abbrev.SHA(s.Meta.Base))
	}
	if own == 0 {
		return fmt.Errorf("%w: %s already holds commits planex did not make (its tip is %s, the plan's base %s) before any task of the run committed: "+
			"someone who can push made it after the plan was posted; nothing runs. Delete the branch and approve again, or start a new plan",
			ErrForeignRunBranch, s.Meta.Branch, abbrev.SHA(tip), abbrev.SHA(s.Meta.Base))
	}
	return nil
}

// checkFound holds a commit found on the run branch for task t to the
// checks t's own commit passed (scope, links out of the repository,
// unnamed settings file, gitlinks and workflow files, held values)
// before reconcile takes it as t's work.
func (e *Engine) checkFound(ctx context.Context, s *session.Session, t plan.Task, c gitrepo.TaskCommit, changes []gitrepo.Change) error {
	o := execute.Outcome{ID: t.ID, Status: plan.StatusCompleted, Changes: changes}
	if why := e.runner.Recheck(ctx, t.Scope, c.SHA+"^", o); why != "" {
		return fmt.Errorf("%w: %s on %s is marked as %s's but %s; nothing more of the plan runs",
			ErrForeignTaskCommit, abbrev.SHA(c.SHA), s.Meta.Branch, t.ID, why)
	}
	return nil
}

// markFound records c, found on the run branch, as t's commit. Whether
// its tests passed is not known: the commit carries no result planex
// could trust (whoever can push may write planex's trailers), so the
// report shows none rather than a pass planex did not see.
func markFound(out io.Writer, s *session.Session, t *plan.Task, c gitrepo.TaskCommit, changes []gitrepo.Change) {
	if t.Status != plan.StatusCompleted {
		fmt.Fprintf(out, "%s: found its commit %s on %s; marking it completed (its test results are not known)\n", t.ID, abbrev.SHA(c.SHA), s.Meta.Branch)
		t.Findings = c.Body
		t.TestsPassed = plan.TestsNotRun
		t.Error = ""
	}
	t.Status = plan.StatusCompleted
	t.Commit = c.SHA
	t.FilesModified = gitrepo.Paths(changes)
}

// reconcile makes tasks.csv agree with the branch at tip after a crash: a
// task whose commit is on the branch is completed (the commit is the
// proof), and a "completed" task without one runs again.
func (e *Engine) reconcile(ctx context.Context, s *session.Session, ap *session.Approval, tip string) error {
	tasks, err := e.plans.loadApproved(s, ap)
	if err != nil {
		return err
	}
	commits, err := gitrepo.TaskCommitsAt(ctx, e.repo, s.Meta.Branch, tip, s.Meta.Base)
	if err != nil {
		return err
	}
	byTask := map[string]gitrepo.TaskCommit{}
	for _, c := range commits {
		if c.Session == s.Meta.ID {
			byTask[c.Task] = c
		}
	}
	if err := checkRunBranch(ctx, e.repo, s, tip, len(byTask)); err != nil {
		return err
	}
	changed := false
	for i := range tasks {
		t := &tasks[i]
		c, onBranch := byTask[t.ID]
		switch {
		case onBranch:
			// Held to the checks even when tasks.csv already names it:
			// the Action's tasks.csv comes from a state ref whoever can
			// push may rewrite, and a task's status is not in the plan's
			// hash.
			changes, err := e.repo.DiffTrees(ctx, c.SHA+"^", c.SHA)
			if err != nil {
				return err
			}
			if err := e.checkFound(ctx, s, *t, c, changes); err != nil {
				return err
			}
			if t.Status != plan.StatusCompleted || t.Commit != c.SHA {
				markFound(e.o.Out, s, t, c, changes)
				changed = true
			}
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
	return writeTasks(s, ap, tasks)
}
