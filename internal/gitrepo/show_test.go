package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShowCommit(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	os.WriteFile(filepath.Join(r.Root, "README.md"), []byte("hello\nworld\n"), 0o644)
	mustGit(t, r.Root, "commit", "-qam", "T1: add a line\n\nPlanex-Task: T1")
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ShowCommit(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"commit " + head + "\n\nT1: add a line\n", "Planex-Task: T1", "+++ b/README.md", "+world"} {
		if !strings.Contains(got, want) {
			t.Errorf("ShowCommit lacks %q:\n%s", want, got)
		}
	}
	// A name that is not a commit is an error naming it, not a path.
	if _, err := r.ShowCommit(ctx, "README.md"); err == nil || !strings.Contains(err.Error(), "showing commit README.md") {
		t.Errorf("ShowCommit(README.md) error = %v", err)
	}
	// Nor is anything git would read as an option.
	out := filepath.Join(t.TempDir(), "written")
	if _, err := r.ShowCommit(ctx, "--output="+out); err == nil || !strings.Contains(err.Error(), "not a commit id") {
		t.Errorf("ShowCommit(--output=…) error = %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("git wrote %s", out)
	}
}
