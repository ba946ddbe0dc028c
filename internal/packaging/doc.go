// Package packaging holds the checks for how planex is shipped as a GitHub
// Action: action.yml at the repository root, the project's own workflows under
// .github/workflows and the ready-to-copy ones under examples/workflows.
//
// It has no code of its own. Its tests lint every workflow with actionlint
// (used as a Go library, so `go test ./...` needs nothing installed), check that
// every action input reaches planex as an INPUT_* variable with the documented
// default, hold the workflows to the least-privilege rules in docs/action.md,
// and run the action's install script against a fake `gh` to check download,
// checksum verification, caching and the fallback to building from source.
package packaging
