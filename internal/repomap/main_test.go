package repomap

import (
	"os"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// TestMain runs the package's tests with their scratch (repositories,
// worktrees, git's objects and lock files) in memory where the caller
// chose no TMPDIR: on disk 1.7 of its 3.9 CPU-s were system time (2.3 CPU-s in memory)
// (issue 32, item 4; 27 November 2026, load 8 to 12).
func TestMain(m *testing.M) {
	os.Exit(gittest.InMemory("planex-repomap-test", m.Run))
}
