package plan

import (
	"strings"
	"testing"
)

// TestWorkflowTasks: the tasks that may change workflow files are those
// with a glob written for .github/workflows/; a wide glob that reaches
// it by chance (**, .github/**, **/*.yml) may not (MayChangeWorkflow), so
// its task is not listed.
func TestWorkflowTasks(t *testing.T) {
	t.Parallel()
	tasks := []Task{
		{ID: "T1", Scope: "src/**"},
		{ID: "T2", Scope: ".github/workflows/ci.yml"},
		{ID: "T3", Scope: "**"},
		{ID: "T4", Scope: ".github/**"},
		{ID: "T5", Scope: ".github/ISSUE_TEMPLATE/**"},
		{ID: "T6", Scope: "docs/**;**/*.yml"},
		{ID: "T7", Scope: ".github/workflows"},
		{ID: "T8", Scope: "src/**;.github/workflows/*.yml"},
		{ID: "T9", Scope: ".github/{workflows,actions}/**"},
	}
	if got := strings.Join(WorkflowTasks(tasks), ","); got != "T2,T7,T8" {
		t.Errorf("WorkflowTasks = %s", got)
	}
}

// TestMayChangeWorkflow: which scopes let a change in .github/workflows/
// through.
func TestMayChangeWorkflow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scope, path string
		want        bool
	}{
		{"**", ".github/workflows/ci.yml", false},
		{".github/**", ".github/workflows/ci.yml", false},
		{"**/*.yml", ".github/workflows/ci.yml", false},
		{".github/*/ci.yml", ".github/workflows/ci.yml", false},
		{".github/{workflows,actions}/**", ".github/workflows/ci.yml", false},
		{".github/workflows/ci.yml", ".github/workflows/ci.yml", true},
		{".github/workflows/ci.yml", ".github/workflows/other.yml", false},
		{".github/workflows/*.yml", ".github/workflows/new.yml", true},
		{".github/workflows/", ".github/workflows/new.yml", true},
		{".github/workflows", ".github/workflows", true},
		{".github/workflows/*.yml", ".github/workflows", false},
		{"src/**;.github/workflows/**", ".github/workflows/a/b.yml", true},
	}
	for _, c := range cases {
		if got := MayChangeWorkflow(c.scope, c.path); got != c.want {
			t.Errorf("MayChangeWorkflow(%q, %q) = %v, want %v", c.scope, c.path, got, c.want)
		}
	}
}
