package session

import (
	"fmt"
	"time"

	"github.com/planexhq/planex/internal/plan"
)

// Approval records the plan that passed the tasks gate: its hash, who
// approved it and how, and a copy of every task's planned columns, so a
// later change to tasks.csv can be named task by task and field by field.
type Approval struct {
	PlanID   string `json:"plan_id"`
	PlanHash string `json:"plan_hash"` // plan.Hash of the approved tasks
	// By is who approved: a GitHub login, or the local user.
	By string `json:"by,omitempty"`
	// How is the way it was approved (terminal prompt, -y, --continue at
	// the gate, /planex approve, …).
	How   string         `json:"how"`
	At    time.Time      `json:"at"`
	Tasks []plan.Planned `json:"tasks"`
}

// NewApproval records tasks as approved.
func NewApproval(tasks []plan.Task, by, how string, at time.Time) *Approval {
	h := plan.Hash(tasks)
	return &Approval{PlanID: plan.ID(h), PlanHash: h, By: by, How: how, At: at.UTC(), Tasks: plan.PlannedOf(tasks)}
}

// Check verifies that the record is whole: its copy of the tasks has the
// hash it claims.
func (a *Approval) Check() error {
	if got := plan.HashPlanned(a.Tasks); got != a.PlanHash || plan.ID(a.PlanHash) != a.PlanID {
		return fmt.Errorf("the approval record of plan %s does not match its own copy of the tasks (plan %s)", a.PlanID, plan.ID(got))
	}
	return nil
}
