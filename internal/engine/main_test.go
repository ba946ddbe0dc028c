package engine

import (
	"os"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// TestMain runs the package's tests with their scratch (repositories,
// worktrees, git's objects and lock files) in memory where the caller
// chose no TMPDIR: on disk 1.1 of its 3.2 CPU-s were system time
// (issue 32, item 4; 27 November 2026, load 8 to 12). It makes
// testRepo's template first.
func TestMain(m *testing.M) {
	os.Exit(gittest.InMemory("planex-engine-test", func() int {
		return gittest.WithTemplate("planex-engine", func(dir string) int {
			templateRepo = dir
			return m.Run()
		})
	}))
}

// templateRepo is the repository testRepo copies (gittest.WithTemplate),
// made before any test runs and only read after.
var templateRepo string
