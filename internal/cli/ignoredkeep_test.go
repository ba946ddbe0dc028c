package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo"
)

// emptyRepo makes an empty git repository and returns it opened: what
// containment asks of a checkout (its ignored files, its config).
func emptyRepo(t *testing.T) *gitrepo.Repo {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	r, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNamedPaths keeps visible the files an agent command names: its
// program, on PATH or relative to the checkout, and its arguments that
// name files; words naming nothing are left out.
func TestNamedPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, rel := range []string{"tools/agent.sh", "prompts/p.md"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	for _, row := range []struct {
		words []string
		want  []string
	}{
		{[]string{"./tools/agent.sh", "--flag"}, []string{filepath.Join(dir, "tools/agent.sh")}},
		{[]string{"sh", `"tools/agent.sh"`, "prompts/p.md", "missing.txt"}, []string{sh, filepath.Join(dir, "tools/agent.sh"), filepath.Join(dir, "prompts/p.md")}},
		{[]string{"~/bin/agent"}, nil},
		{[]string{filepath.Join(dir, "prompts")}, []string{filepath.Join(dir, "prompts")}},
	} {
		if got := namedPaths(row.words, dir, "/nonexistent-home"); !slices.Equal(got, row.want) {
			t.Errorf("namedPaths(%q) = %q, want %q", row.words, got, row.want)
		}
	}
}
