package gitrepo

import (
	"os"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// TestMain runs the package's tests with their scratch (repositories,
// worktrees, git's objects and lock files) in memory where the caller
// chose no TMPDIR: on disk, about half of their CPU was system time
// (issue 32, item 4).
func TestMain(m *testing.M) {
	os.Exit(gittest.InMemory("planex-gitrepo-test", m.Run))
}
