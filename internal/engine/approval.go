package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/session"
)

// The plan that passed the tasks gate is recorded in session.json
// (session.Approval) and kept in memory while it runs. tasks.csv is
// compared with it before every wave, before every task starts and before
// planex writes the file: a difference in a planned column that the user
// did not make at the gate stops the run before anything from the changed
// plan runs. Only the columns planex owns (status, findings, usage, …)
// may change after approval.

// ChangedError says how tasks.csv differs from the approved plan.
type ChangedError struct {
	Session string
	File    string // tasks.csv
	Meta    string // session.json, where the approved plan is recorded
	Changes []plan.Change
	// Was and Now are plan ids, for changes that cannot be named field by
	// field (a session approved before approvals were recorded).
	Was, Now string
}

func (e *ChangedError) Error() string {
	what := plan.Changes(e.Changes)
	if what == "" {
		what = fmt.Sprintf("plan %s was approved, the file now holds plan %s", e.Was, e.Now)
	}
	return fmt.Sprintf("tasks.csv changed after approval: %s\n"+
		"Nothing from the changed plan was run. If you did not make this change, something else wrote %s after the plan was approved: "+
		"put the approved values back (they are recorded under \"approval\" in %s) and run planex --continue %s. "+
		"To run the edited plan instead, start a new run from it: planex %s",
		what, e.File, e.Meta, e.Session, e.File)
}

// Is makes a ChangedError an ErrPlanChanged.
func (e *ChangedError) Is(target error) bool { return target == ErrPlanChanged }

// approval returns the approved plan of a session whose tasks gate was
// passed. A session approved before approvals were recorded keeps only
// the plan's hash; its approval is rebuilt from tasks.csv when the file
// still has that hash.
func (g *approvedPlans) approval(s *session.Session) (*session.Approval, error) {
	if !s.Meta.Approved[session.GateTasks] {
		return nil, fmt.Errorf("session %s: %w", s.Meta.ID, ErrNotApproved)
	}
	if ap := s.Meta.Approval; ap != nil {
		if err := ap.Check(); err != nil {
			return nil, fmt.Errorf("session %s: %w (%v)", s.Meta.ID, ErrPlanChanged, err)
		}
		return ap, nil
	}
	tasks, err := s.ReadTasks()
	if err != nil {
		return nil, err
	}
	if now := plan.Hash(tasks); s.Meta.PlanHash == "" || now != s.Meta.PlanHash {
		return nil, &ChangedError{Session: s.Meta.ID, File: s.File(session.TasksFile), Meta: s.File(session.MetaFile),
			Was: plan.ID(s.Meta.PlanHash), Now: plan.ID(now)}
	}
	s.Meta.Approval = session.NewApproval(tasks, "", "recorded from the approved plan hash", g.now())
	return s.Meta.Approval, s.SaveMeta()
}

// unchanged compares tasks with the approved plan.
func unchanged(s *session.Session, ap *session.Approval, tasks []plan.Task) error {
	if cs := plan.Compare(ap.Tasks, tasks); len(cs) > 0 {
		return &ChangedError{Session: s.Meta.ID, File: s.File(session.TasksFile), Meta: s.File(session.MetaFile), Changes: cs}
	}
	return nil
}

// loadApproved reads tasks.csv, refuses it when it differs from the
// approved plan, and validates it (see loadTasks).
func (g *approvedPlans) loadApproved(s *session.Session, ap *session.Approval) ([]plan.Task, error) {
	if ap == nil {
		return nil, fmt.Errorf("session %s: %w", s.Meta.ID, ErrNotApproved)
	}
	tasks, err := s.ReadTasks()
	if err != nil {
		return nil, err
	}
	if err := unchanged(s, ap, tasks); err != nil {
		return nil, err
	}
	return validTasks(s, tasks)
}

// checkPlan reads tasks.csv again and compares it with the approved plan:
// before a task starts, and before planex writes the file (which would
// otherwise carry a change it did not make).
func checkPlan(s *session.Session, ap *session.Approval) error {
	tasks, err := s.ReadTasks()
	if err != nil {
		return err
	}
	return unchanged(s, ap, tasks)
}

// writeTasks writes tasks.csv after checking that the file on disk is
// still the approved plan.
func writeTasks(s *session.Session, ap *session.Approval, tasks []plan.Task) error {
	if err := checkPlan(s, ap); err != nil {
		return err
	}
	return s.WriteTasks(tasks)
}

// approvedPlans reads and records the approval of sessions' plans: the
// gate every run passes before a task of a plan runs.
type approvedPlans struct {
	store session.Store
	now   func() time.Time
	out   io.Writer
}

// ErrNotApproved means a session's plan has not passed the tasks gate.
var ErrNotApproved = errors.New("the plan is not approved")

// openApproved opens a session whose tasks gate was passed, with the plan
// of the given hash (any, when empty), and whose tasks.csv is still that
// plan.
func (g *approvedPlans) openApproved(id, hash string) (*session.Session, *session.Approval, error) {
	s, err := session.Open(g.store, id)
	if err != nil {
		return nil, nil, err
	}
	if s.Meta.Cancelled {
		return nil, nil, fmt.Errorf("session %s was cancelled", s.Meta.ID)
	}
	if !s.Meta.Approved[session.GateTasks] {
		if hash != "" {
			// Say so when the plan on record is not the one asked about.
			if tasks, rerr := s.ReadTasks(); rerr == nil && plan.Hash(tasks) != hash {
				return nil, nil, fmt.Errorf("session %s: %w: it holds plan %s, not %s, and it is not approved", s.Meta.ID, ErrPlanChanged, plan.ID(plan.Hash(tasks)), plan.ID(hash))
			}
		}
		return nil, nil, fmt.Errorf("session %s: %w", s.Meta.ID, ErrNotApproved)
	}
	ap, err := g.approval(s)
	if err != nil {
		return nil, nil, err
	}
	if hash != "" && ap.PlanHash != hash {
		return nil, nil, fmt.Errorf("session %s: %w: plan %s was approved, not %s", s.Meta.ID, ErrPlanChanged, ap.PlanID, plan.ID(hash))
	}
	if err := checkPlan(s, ap); err != nil {
		return nil, nil, err
	}
	return s, ap, nil
}

// CheckApproved says whether a session's plan with the given hash was
// approved and is unchanged since: nil, or an error that wraps
// ErrNotApproved or ErrPlanChanged (a *ChangedError names the changes).
func (e *Engine) CheckApproved(id, hash string) error {
	_, _, err := e.plans.openApproved(id, hash)
	return err
}

// ApprovePlan passes the tasks gate of a session only if its plan still
// has the given hash, without running anything (the tasks then run through
// PrepareWave, RunTask and Integrate).
func (e *Engine) ApprovePlan(ctx context.Context, id, hash string, who Approver) error {
	_, err := e.plans.approvePlan(id, hash, who)
	return err
}

func (g *approvedPlans) approvePlan(id, hash string, who Approver) (*session.Session, error) {
	s, err := session.Open(g.store, id)
	if err != nil {
		return nil, err
	}
	if s.Meta.Cancelled {
		return nil, fmt.Errorf("session %s was cancelled", s.Meta.ID)
	}
	tasks, err := loadTasks(s)
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
	s.Meta.Approval = session.NewApproval(tasks, who.By, who.How, g.now())
	s.Meta.PlanHash = hash
	s.Meta.WaitingAt = ""
	if err := s.SaveMeta(); err != nil {
		return nil, err
	}
	return s, nil
}

// PlanMatches checks, approving nothing, that a session's tasks are the
// plan with hash.
func (e *Engine) PlanMatches(id, hash string) error {
	s, err := session.Open(e.sessions(), id)
	if err != nil {
		return err
	}
	tasks, err := loadTasks(s)
	if err != nil {
		return err
	}
	if got := plan.Hash(tasks); got != hash {
		return fmt.Errorf("%w: the session's plan is %s, not %s", ErrPlanChanged, plan.ID(got), plan.ID(hash))
	}
	return nil
}

// ResetFailed sets the failed and skipped tasks of an approved session
// (see Retry) back to pending without running them, and reports how many
// there were.
func (e *Engine) ResetFailed(ctx context.Context, id, hash string) (int, error) {
	_, n, err := e.plans.resetFailed(id, hash)
	return n, err
}

// ErrNothingToRetry means a session has no failed or skipped task.
var ErrNothingToRetry = errors.New("no failed or skipped task to retry")

func (g *approvedPlans) resetFailed(id, hash string) (*session.Session, int, error) {
	s, ap, err := g.openApproved(id, hash)
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
			tasks[i].Status, tasks[i].Error, tasks[i].TestsPassed = plan.StatusPending, "", plan.TestsNotRun
			n++
		}
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("session %s has %w", s.Meta.ID, ErrNothingToRetry)
	}
	if err := writeTasks(s, ap, tasks); err != nil {
		return nil, 0, err
	}
	s.Meta.Finished = time.Time{}
	if err := s.SaveMeta(); err != nil {
		return nil, 0, err
	}
	fmt.Fprintf(g.out, "retrying %s\n", plural.Count(n, "task", "tasks"))
	return s, n, nil
}
