package gitrepo

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
// chose no TMPDIR: on disk 15.7 of its 28.9 CPU-s were system time
// (issue 32, item 4; 27 November 2026, load 8 to 12). It makes newRepo's
// template first.
func TestMain(m *testing.M) {
	os.Exit(gittest.InMemory("planex-gitrepo-test", func() int { return runWithTemplate(m) }))
}

// templateRepo is the repository newRepo copies (main with one commit of
// README.md and src/old.txt), made by runWithTemplate before any test
// runs and only read after: copying it starts no git process, where
// making it ran six (issue 32, item 4: newRepo serves over a hundred
// tests).
var templateRepo string

// runWithTemplate makes templateRepo, runs the tests and removes it.
func runWithTemplate(m *testing.M) int {
	dir, err := os.MkdirTemp("", "planex-gitrepo-template-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "making newRepo's template:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	templateRepo = dir
	if err := makeTemplateRepo(dir); err != nil {
		fmt.Fprintln(os.Stderr, "making newRepo's template:", err)
		return 1
	}
	return m.Run()
}

// makeTemplateRepo makes at dir what newRepo hands each test: an
// identity in the repository's config, README.md and src/old.txt
// committed on main.
func makeTemplateRepo(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "old.txt"), []byte("old\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "Test"},
		{"config", "user.email", "test@example.com"},
		{"add", "."},
		{"commit", "-qm", "initial"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w\n%s", args, err, out)
		}
	}
	return nil
}
