package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/planexhq/planex/internal/agent"
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

// TestHideUntrackedInTheAction: a local run hides only the checkout's
// ignored files (untracked ones are the user's new work, which the plan
// should see), while the Action hides every untracked one: its checkout
// is fresh, so a file that no .gitignore names there, such as the
// credentials file a cloud login step writes at the workspace's root,
// came from an earlier step of the workflow.
func TestHideUntrackedInTheAction(t *testing.T) {
	t.Parallel()
	repo := emptyRepo(t)
	root := repo.Root
	for rel, content := range map[string]string{
		".gitignore":              ".env\n",
		"main.go":                 "package main\n",
		".env":                    "TOKEN=ignored-secret\n",
		"gha-creds-1f2e.json":     `{"private_key":"untracked-secret"}`,
		"build/out/cache.bin":     "x",
		"notes/new-idea.md":       "the user's new work\n",
		"notes/also-untracked.md": "more\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", ".gitignore", "main.go"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "initial"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			r, err := filepath.Rel(root, p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, filepath.ToSlash(r))
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		name      string
		untracked bool
		want      []string
	}{
		{"local run", false, []string{".env"}},
		{"Action", true, []string{".env", "build", "gha-creds-1f2e.json", "notes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var contain agent.Containment
			if err := hideIgnored(context.Background(), &contain, repo, "", nil, func(string) string { return "" }, c.untracked, true); err != nil {
				t.Fatal(err)
			}
			if got := rel(contain.Ignored.Paths); !slices.Equal(got, c.want) {
				t.Errorf("hidden: %q, want %q", got, c.want)
			}
		})
	}
}

// TestMCPConfigInCheckout tells a repository's MCP configuration (a file
// in the checkout, named as such or through a link either way) from the
// user's own (inline, or a file outside it), whose arguments may keep
// ignored files visible.
func TestMCPConfigInCheckout(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(root, ".mcp.json"), filepath.Join(outside, "mine.json")} {
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A committed link leading out, and a link of the user's leading in.
	if err := os.Symlink(filepath.Join(outside, "mine.json"), filepath.Join(root, "out.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, ".mcp.json"), filepath.Join(outside, "in.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg, dir string
		want     bool
	}{
		{`{"mcpServers":{}}`, root, false},
		{"", root, false},
		{".mcp.json", root, true},
		{filepath.Join(root, ".mcp.json"), "", true},
		{"out.json", root, true},
		{"missing.json", root, true},
		{filepath.Join(outside, "mine.json"), root, false},
		{filepath.Join(outside, "in.json"), root, true},
		{"../" + filepath.Base(outside) + "/mine.json", root, false},
	} {
		if got := mcpConfigInCheckout(c.arg, c.dir, root); got != c.want {
			t.Errorf("mcpConfigInCheckout(%q, %q) = %v, want %v", c.arg, c.dir, got, c.want)
		}
	}
}
