package plan

import (
	"strings"

	"github.com/planexhq/planex/internal/scope"
)

// WorkflowsDir holds a repository's GitHub Actions workflows. GitHub
// refuses a push that creates or changes a file there unless the token
// has the `workflows` permission, which GITHUB_TOKEN can never have. A
// workflow a push adds runs on that push with any secret of the
// repository it names, before anyone has read it: a task may change one
// only when its scope is written for this folder (MayChangeWorkflow).
const WorkflowsDir = ".github/workflows"

// InWorkflows says whether the repository path p is WorkflowsDir or lies
// in it.
func InWorkflows(p string) bool {
	return p == WorkflowsDir || strings.HasPrefix(p, WorkflowsDir+"/")
}

// MayChangeWorkflow says whether a task whose scope is taskScope may change
// p, a path in WorkflowsDir: only when a glob of the scope that covers p is
// written for that folder (.github/workflows/ci.yml,
// .github/workflows/*.yml), never through a wide one that reaches it by
// chance (**, .github/**, **/*.yml).
func MayChangeWorkflow(taskScope, p string) bool {
	return scope.Targets(taskScope, WorkflowsDir, p)
}

// WorkflowTasks lists the tasks that may change workflow files (a glob of
// their scope is written for WorkflowsDir), in plan order.
func WorkflowTasks(tasks []Task) []string {
	var out []string
	for _, t := range tasks {
		if scope.TargetsDir(t.Scope, WorkflowsDir) {
			out = append(out, t.ID)
		}
	}
	return out
}
