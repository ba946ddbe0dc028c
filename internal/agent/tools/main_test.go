package tools

import (
	"os"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// TestMain runs the package's tests with their scratch (repositories,
// worktrees, and the files the edit race links and renames over each
// other for three seconds) in memory where the caller chose no TMPDIR: on
// disk that race alone cost about 5 s of system time (issue 32, item 4).
func TestMain(m *testing.M) {
	os.Exit(gittest.InMemory("planex-tools-test", m.Run))
}
