package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefsNotesAndDiffs covers the ref and commit helpers the Action
// uses for its state and matrix results, against a real repository.
func TestRefsNotesAndDiffs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	note, err := r.NoteCommit(ctx, base, "planex task result T1\n\n{\"task\":\"T1\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := r.Parents(ctx, note); err != nil || len(p) != 1 || p[0] != base {
		t.Errorf("Parent(note) = %q, %v; want %s", p, err, base)
	}
	tb, _ := r.TreeOf(ctx, base)
	if tn, _ := r.TreeOf(ctx, note); tn != tb {
		t.Errorf("the note commit changed the tree: %s, want %s", tn, tb)
	}
	const ref = "refs/planex/tasks/s1/T1"
	if err := r.SetRef(ctx, ref, note); err != nil {
		t.Fatal(err)
	}
	if id, err := ResolveRef(ctx, r, ref); err != nil || id != note {
		t.Errorf("ResolveRef(%s) = %s, %v; want %s", ref, id, err, note)
	}
	msg, err := r.CommitMessage(ctx, note)
	if err != nil || !strings.HasPrefix(msg, "planex task result T1\n\n{\"task\":\"T1\"}") {
		t.Errorf("CommitMessage = %q, %v", msg, err)
	}
	if err := r.SetRef(ctx, ref, ""); err != nil {
		t.Fatal(err)
	}
	if refExists(ctx, r, ref) {
		t.Error("SetRef with no sha left the ref")
	}
	if err := r.SetRef(ctx, ref, ""); err != nil {
		t.Errorf("deleting a missing ref: %v", err)
	}
	if _, err := r.Parents(ctx, "0123456789012345678901234567890123456789"); err == nil {
		t.Error("Parent of a missing commit succeeded")
	}

	// A change on a branch, diffed as its pull request would show it.
	if err := os.WriteFile(filepath.Join(r.Root, "new.txt"), []byte("new line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, r.Root, "add", "new.txt")
	mustGit(t, r.Root, "commit", "-qm", "add new")
	head, _ := r.Head(ctx)
	diff, err := r.DiffText(ctx, base, head)
	if err != nil || !strings.Contains(diff, "+++ b/new.txt") || !strings.Contains(diff, "+new line") {
		t.Errorf("DiffText = %q, %v", diff, err)
	}
}
