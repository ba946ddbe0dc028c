package action

import "github.com/planexhq/planex/internal/plan"

// Status is the step's `status` output: where the session stands after
// this run. It is a closed set, listed (and explained) in docs/action.md
// under "The status output"; a test holds the two together. Counts and
// details go to other outputs, the summary and the log, never into it.
type Status string

// The values of the `status` output.
const (
	StatusPlanned    Status = "planned"    // a plan was posted (or revised) and waits for approval
	StatusRunning    Status = "running"    // the plan runs (matrix mode: a wave was dispatched)
	StatusDone       Status = "done"       // every task completed
	StatusFailed     Status = "failed"     // a task failed or was skipped, a budget stopped the run, or an error
	StatusCancelled  Status = "cancelled"  // the plan was cancelled
	StatusRefused    Status = "refused"    // a command planex would not carry out; the reply says why
	StatusReplied    Status = "replied"    // planex answered (status, help, a review thread)
	StatusReviewed   Status = "reviewed"   // a review of the pull request was posted
	StatusIgnored    Status = "ignored"    // the event was not for planex; a notice says why
	StatusStopped    Status = "stopped"    // a CI failure hit ci-fix-attempts
	StatusSuperseded Status = "superseded" // another run handled or took over the same plan
)

// Statuses lists every Status, in the order docs/action.md lists them.
func Statuses() []Status {
	return []Status{StatusPlanned, StatusRunning, StatusDone, StatusFailed, StatusCancelled,
		StatusRefused, StatusReplied, StatusReviewed, StatusIgnored, StatusStopped, StatusSuperseded}
}

// recordStatus is the output for a record in state (one of the State
// constants). A state planex does not know reads as failed: the output
// must stay in the set, and such a record cannot be run as it is.
func recordStatus(state State) Status {
	switch state {
	case StatePlanned:
		return StatusPlanned
	case StateRunning:
		return StatusRunning
	case StateDone:
		return StatusDone
	case StateCancelled:
		return StatusCancelled
	}
	return StatusFailed
}

// taskStatus is the output of a matrix task job whose task ended in s:
// done when it completed, failed when it failed or was skipped.
func taskStatus(s plan.Status) Status {
	switch s {
	case plan.StatusCompleted:
		return StatusDone
	case plan.StatusPending, plan.StatusRunning:
		return StatusRunning
	}
	return StatusFailed
}
