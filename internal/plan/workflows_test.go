package plan

import (
	"strings"
	"testing"
)

func TestWorkflowTasks(t *testing.T) {
	tasks := []Task{
		{ID: "T1", Scope: "src/**"},
		{ID: "T2", Scope: ".github/workflows/ci.yml"},
		{ID: "T3", Scope: "**"},
		{ID: "T4", Scope: ".github/**"},
		{ID: "T5", Scope: ".github/ISSUE_TEMPLATE/**"},
		{ID: "T6", Scope: "docs/**;**/*.yml"},
		{ID: "T7", Scope: ".github/workflows"},
	}
	if got := strings.Join(WorkflowTasks(tasks), ","); got != "T2,T3,T4,T6,T7" {
		t.Errorf("WorkflowTasks = %s", got)
	}
}
