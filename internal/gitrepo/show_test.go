package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShowCommit(t *testing.T) {
	t.Parallel()
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
	for _, want := range []string{"commit " + head + "\n\nplanex: the commit changes 1 file (", "M\t\"README.md\"\n\nT1: add a line\n", "Planex-Task: T1", "+++ b/README.md", "+world"} {
		if !strings.Contains(got, want) {
			t.Errorf("ShowCommit lacks %q:\n%s", want, got)
		}
	}
	// A name that is not a commit is an error naming it, not a path.
	if _, err := r.ShowCommit(ctx, "README.md"); err == nil || !strings.Contains(err.Error(), `showing commit "README.md"`) {
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

// TestRedTeamPatchBounded: an agent commits a patch far larger than
// planex keeps (files just under core.bigFileThreshold are diffed as
// text, so gigabytes are possible); the review's ShowCommit and the pull
// request's DiffText return at most their cap, cut at a line.
func TestRedTeamPatchBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(r.Root, name), []byte(strings.Repeat(line, 80_000)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustGit(t, r.Root, "add", ".")
	mustGit(t, r.Root, "commit", "-qm", "T1: 24 MB of text")
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const small = 1 << 20
	got, err := showCommit(ctx, r, head, small)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > small+len(patchCut) || !strings.HasPrefix(got, "commit "+head) || !strings.HasSuffix(got, "\n+"+line+patchCut) {
		t.Errorf("showCommit kept %d bytes (cap %d), ending %q", len(got), small, got[max(0, len(got)-200):])
	}
	diff, err := r.DiffText(ctx, base, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > MaxPatchBytes || len(diff) < MaxPatchBytes-len(line)-1 || !strings.HasSuffix(diff, "\n+"+line) {
		t.Errorf("DiffText kept %d bytes (cap %d)", len(diff), MaxPatchBytes)
	}
}
