package execute

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// TestMain runs the package's tests with their scratch (repositories,
// worktrees, git's objects and lock files) in memory where the caller
// chose no TMPDIR: on disk 10.3 of its 20.2 CPU-s were system time (14.8 CPU-s in memory)
// (issue 32, item 4; 27 November 2026, load 8 to 12). It makes
// testRepo's template first.
func TestMain(m *testing.M) {
	os.Exit(gittest.InMemory("planex-execute-test", func() int { return runWithTemplate(m) }))
}

// templateRepo is the repository testRepo copies (main with one empty
// commit, an identity in its config), made by runWithTemplate before any
// test runs and only read after: copying it starts no git process, where
// making it ran four (issue 32, item 4: testRepo made about 290
// repositories a run, a quarter of the package's git processes).
var templateRepo string

// runWithTemplate makes templateRepo, runs the tests and removes it.
func runWithTemplate(m *testing.M) int {
	dir, err := os.MkdirTemp("", "planex-execute-template-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "making testRepo's template:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	templateRepo = filepath.Join(dir, "repo")
	if err := makeTemplateRepo(templateRepo); err != nil {
		fmt.Fprintln(os.Stderr, "making testRepo's template:", err)
		return 1
	}
	return m.Run()
}

// makeTemplateRepo makes at dir what testRepo hands each test: main with
// one empty commit and an identity in the repository's config.
func makeTemplateRepo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "T"}, {"config", "user.email", "t@example.com"},
		{"commit", "-q", "--allow-empty", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w\n%s", args, err, out)
		}
	}
	return nil
}
