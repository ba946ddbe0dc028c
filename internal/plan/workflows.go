package plan

import "github.com/planexhq/planex/internal/scope"

// WorkflowsDir holds a repository's GitHub Actions workflows. GitHub
// refuses a push that creates or changes a file there unless the token
// has the `workflows` permission, which GITHUB_TOKEN can never have.
const WorkflowsDir = ".github/workflows"

// WorkflowTasks lists the tasks whose scope can reach WorkflowsDir, in
// plan order.
func WorkflowTasks(tasks []Task) []string {
	var out []string
	for _, t := range tasks {
		if scope.Overlap(t.Scope, WorkflowsDir+"/**") {
			out = append(out, t.ID)
		}
	}
	return out
}
