package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/execute"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// execute runs the waves of tasks.csv on the session's branch.
func (e *Engine) execute(ctx context.Context, s *session.Session, rc *RepoContext) error {
	branch := s.Meta.Branch
	tip, err := e.repo.ResolveBranch(ctx, branch)
	if err != nil {
		return err
	}
	if tip == "" {
		if err := e.repo.UpdateBranch(ctx, branch, s.Meta.Base, "", "planex: start "+s.Meta.ID); err != nil {
			return err
		}
		tip = s.Meta.Base
	}
	if err := e.reconcile(ctx, s); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The CSV is the source of truth: re-read it before every wave.
		tasks, err := e.loadTasks(s)
		if err != nil {
			return err
		}
		if skipped := plan.Cascade(tasks); len(skipped) > 0 {
			fmt.Fprintf(e.o.Out, "skipped (a dependency did not complete): %s\n", strings.Join(skipped, ", "))
			if err := s.WriteTasks(tasks); err != nil {
				return err
			}
		}
		ready, wave := plan.Ready(tasks)
		if wave == 0 {
			return nil
		}
		if tip, err = e.repo.ResolveBranch(ctx, branch); err != nil {
			return err
		}
		ids := make([]string, len(ready))
		for i, t := range ready {
			ids[i] = t.ID
		}
		fmt.Fprintf(e.o.Out, "wave %d: %s\n", wave, strings.Join(ids, ", "))
		if err := e.runWave(ctx, s, rc, tasks, ready, tip); err != nil {
			return err
		}
	}
}

// runWave runs ready tasks concurrently and commits the completed ones in
// id order, so the branch is the same whatever order they finish in.
func (e *Engine) runWave(ctx context.Context, s *session.Session, rc *RepoContext, tasks, ready []plan.Task, tip string) error {
	testCmd := ""
	if rc != nil {
		testCmd = rc.TestCommand
	}
	explore := []plan.ExploreRow{}
	if s.Exists(session.ExploreFile) {
		var err error
		if explore, err = s.ReadExplore(); err != nil {
			return err
		}
	}
	discoveries := e.discoveriesText(s)
	results := make([]chan execute.Outcome, len(ready))
	sem := make(chan struct{}, e.o.Concurrency)
	var budgetErr error
	started := 0
	for i, t := range ready {
		if err := e.o.Budget.check(s, tasks, agent.PhaseExecute); err != nil {
			budgetErr = err
			break
		}
		directives := t.ExecutionDirectives
		if strings.TrimSpace(directives) == "" {
			directives = testCmd
		}
		c := e.common(s, rc)
		c.Discoveries = discoveries
		p, err := e.prompts.Execute(c, t, plan.PrevContext(t, explore, tasks), directives)
		if err != nil {
			return err
		}
		job := execute.Job{Task: t, Base: tip, Prompt: p, Session: s.Meta.ID, SessionDir: s.Path, Timeout: e.step(agent.PhaseExecute), Directives: directives}
		results[i] = make(chan execute.Outcome, 1)
		started++
		sem <- struct{}{}
		go func(ch chan<- execute.Outcome) {
			defer func() { <-sem }()
			fmt.Fprintf(e.o.Out, "  %s: started (%s)\n", job.Task.ID, job.Task.Title)
			ch <- e.runner.Run(ctx, job)
		}(results[i])
	}
	idx := plan.Index(tasks)
	for i := 0; i < started; i++ {
		o := <-results[i]
		t := tasks[idx[o.ID]]
		if ctx.Err() != nil && o.Status != plan.StatusCompleted {
			// Interrupted, not failed: leave it pending for --continue.
			continue
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
		tasks[idx[o.ID]] = t
		fmt.Fprintf(e.o.Out, "  %s: %s%s\n", t.ID, t.Status, suffix(t.Error))
		if err := s.WriteTasks(tasks); err != nil {
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
