package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/execute"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// execution is one single-process run of an approved plan: it starts
// tasks as the schedule allows, up to the concurrency limit, and records
// their outcomes one at a time. The plan is checked against the approved
// one before each task starts and before each outcome is recorded; a
// change ends the run, tasks still running included, and nothing more is
// recorded.
type execution struct {
	e         *Engine
	s         *session.Session
	ap        *session.Approval
	rc        *RepoContext
	tasks     []plan.Task // tasks.csv as planex last wrote it
	sched     *schedule
	tip       string // the run branch's tip
	held      map[int]execute.Outcome
	results   chan execute.Outcome
	announced map[int]bool // waves whose first task started
	// shared is what the tasks running at once spend together of what the
	// budget left when the execution began (nil without a budget).
	shared *agent.Shared
}

func (e *Engine) newExecution(s *session.Session, ap *session.Approval, rc *RepoContext, tasks []plan.Task, tip string) *execution {
	x := &execution{e: e, s: s, ap: ap, rc: rc, tasks: tasks, sched: newSchedule(tasks), tip: tip,
		held: map[int]execute.Outcome{}, results: make(chan execute.Outcome, len(tasks)), announced: map[int]bool{}}
	if l := e.o.Budget.limit(s, tasks); l != (agent.Limit{}) {
		x.shared = agent.NewShared(l)
	}
	return x
}

// run works until nothing is left to start and nothing runs. After an
// interrupt or a budget stop it starts nothing more but still records
// what finishes (a completed task is committed).
func (x *execution) run(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var budgetErr error
	for {
		if budgetErr == nil && ctx.Err() == nil {
			var err error
			if budgetErr, err = x.startReady(ctx, wctx); err != nil {
				return x.abort(cancel, err)
			}
		}
		if len(x.sched.running) == 0 {
			break
		}
		if err := x.finished(ctx, <-x.results); err != nil {
			return x.abort(cancel, err)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return budgetErr
}

// abort ends the tasks still running and waits for them.
func (x *execution) abort(cancel context.CancelFunc, err error) error {
	cancel()
	for len(x.sched.running) > 0 {
		o := <-x.results
		delete(x.sched.running, x.index(o.ID))
	}
	return err
}

func (x *execution) index(id string) int {
	for i, t := range x.tasks {
		if t.ID == id {
			return i
		}
	}
	return -1
}

// startReady starts tasks while there are free slots and tasks whose
// prerequisites are done. It returns the budget's refusal separately:
// that stops new work without abandoning what runs.
func (x *execution) startReady(ctx, wctx context.Context) (budget, err error) {
	for len(x.sched.running) < x.e.o.Concurrency {
		i, ok := x.sched.next()
		if !ok {
			return nil, nil
		}
		if err := x.e.canStart(x.s, x.tasks, agent.PhaseExecute); err != nil {
			return err, nil
		}
		if err := x.start(ctx, wctx, i); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// start runs task i from the current tip.
func (x *execution) start(ctx, wctx context.Context, i int) error {
	in, err := x.e.taskInputs(ctx, x.s, x.rc)
	if err != nil {
		return err
	}
	job, err := x.e.taskJob(x.s, in, x.tasks, x.tasks[i], x.tip)
	if err != nil {
		return err
	}
	job.Limit.Shared = x.shared
	if err := checkPlan(x.s, x.ap); err != nil {
		return err
	}
	x.announce(x.tasks[i].Wave)
	x.sched.running[i] = true
	go func() {
		fmt.Fprintf(x.e.o.Out, "  %s: started (%s)\n", job.Task.ID, job.Task.Title)
		x.results <- x.e.runner.Run(wctx, job)
	}()
	return nil
}

// announce names a wave when its first task starts, as the plan presents
// it: the Action folds its log into a group per wave.
func (x *execution) announce(wave int) {
	if x.announced[wave] {
		return
	}
	x.announced[wave] = true
	var ids []string
	for _, t := range sortedByID(x.tasks) {
		if t.Wave == wave && !t.Status.Done() {
			ids = append(ids, t.ID)
		}
	}
	line := fmt.Sprintf("wave %d: %s", wave, strings.Join(ids, ", "))
	x.e.phase(line)
	fmt.Fprintln(x.e.o.Out, line)
}

func sortedByID(tasks []plan.Task) []plan.Task {
	out := append([]plan.Task(nil), tasks...)
	plan.SortByID(out)
	return out
}

// finished takes one task's outcome: a completed task waits to be
// committed (see schedule), a failure is recorded at once and its
// dependents are skipped.
func (x *execution) finished(ctx context.Context, o execute.Outcome) error {
	if x.shared != nil {
		// A completed task may wait to be recorded; its spending counts now.
		x.shared.Finish(o.ID, o.Usage)
	}
	i := x.index(o.ID)
	delete(x.sched.running, i)
	switch {
	case o.Status == plan.StatusCompleted:
		x.held[i] = o
		x.sched.held[i] = true
	case ctx.Err() != nil:
		// Interrupted, not failed: leave it pending for --continue.
	default:
		if err := x.record(ctx, o); err != nil {
			return err
		}
	}
	if err := x.flush(ctx); err != nil {
		return err
	}
	if x.held[i].ID != "" {
		x.e.o.Log.Debug("task completed; its commit waits for the tasks before it", "task", o.ID)
	}
	return nil
}

// flush commits the held tasks the schedule lets through, in its order.
func (x *execution) flush(ctx context.Context) error {
	for {
		i, ok := x.sched.committable()
		if !ok {
			return nil
		}
		o := x.held[i]
		delete(x.held, i)
		delete(x.sched.held, i)
		if err := x.record(ctx, o); err != nil {
			return err
		}
	}
}

// record applies an outcome (committing a completed task on the tip) and
// skips the tasks that can no longer run.
func (x *execution) record(ctx context.Context, o execute.Outcome) error {
	tip, err := x.e.record(ctx, x.s, x.ap, x.tasks, x.tip, o)
	if err != nil {
		return err
	}
	x.tip = tip
	if err := x.e.cascade(x.s, x.ap, x.tasks); err != nil {
		return err
	}
	if x.e.o.Progress != nil {
		x.e.o.Progress(ctx, x.s, x.tasks)
	}
	return nil
}
