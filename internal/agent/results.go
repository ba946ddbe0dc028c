package agent

import "github.com/planexhq/planex/internal/plan"

// The result shapes of each phase, as in the lite-plan design.

// Angle is one exploration angle proposed by analyze.
type Angle struct {
	ID          string `json:"id"`
	Angle       string `json:"angle"`
	Description string `json:"description"`
	Focus       string `json:"focus"`
}

// AnalyzeResult classifies the requirement and proposes angles.
type AnalyzeResult struct {
	Type       string  `json:"type"`
	Complexity string  `json:"complexity"`
	Angles     []Angle `json:"angles"`
}

// Report is what an agent reports on every item it worked on: which item
// (an angle or a task), whether it completed or failed, what it found, and
// why it failed.
type Report struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Findings string `json:"findings"`
	Error    string `json:"error"`
}

// ExploreResult is one angle's findings.
type ExploreResult struct {
	Report
	KeyFiles []string `json:"key_files"`
}

// PlannedTask is one task proposed by the plan phase: the planned columns
// of a task, the same that an approval pins.
type PlannedTask = plan.Planned

// PlanResult is the synthesized plan.
type PlanResult struct {
	Summary  string        `json:"summary"`
	Approach string        `json:"approach"`
	Tasks    []PlannedTask `json:"tasks"`
}

// ExecuteResult is what an agent reports after working on one task.
type ExecuteResult struct {
	Report
	FilesModified []string `json:"files_modified"`
	TestsPassed   bool     `json:"tests_passed"`
	AcceptanceMet string   `json:"acceptance_met"`
}
