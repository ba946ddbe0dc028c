package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// WithTemplate makes a repository a test package's tests copy instead of
// making their own (main with one empty commit and an identity in its
// config: copying it starts no git process, where making it runs four),
// runs run with its path, removes it and returns run's exit code; it is
// for a TestMain, named prefix in the folder's name.
func WithTemplate(prefix string, run func(template string) int) int {
	dir, err := os.MkdirTemp("", prefix+"-template-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "making the tests' template repository:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	repo := filepath.Join(dir, "repo")
	if err := makeTemplate(repo); err != nil {
		fmt.Fprintln(os.Stderr, "making the tests' template repository:", err)
		return 1
	}
	return run(repo)
}

// makeTemplate makes WithTemplate's repository at dir.
func makeTemplate(dir string) error {
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
