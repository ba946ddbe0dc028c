package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLinkEscapes(t *testing.T) {
	t.Parallel()
	// Symlinks already in the tree that the cases may pass through.
	base := map[string]string{
		"up":         "..",
		"docs/inner": "../src",
		"docs/out":   "../../elsewhere",
		"loop/a":     "b",
		"loop/b":     "a",
	}
	for _, c := range []struct {
		link, target string
		escapes      bool
	}{
		{"a.txt", "b.txt", false},
		{"src/link", "../README.md", false},
		{"src/deep/link", "../../docs/guide.md", false},
		{"src/link", "./x/./y/../z", false},
		{"src/link", "../docs/inner/x", false},
		{"dangling", "not/there/yet", false},
		{"abs", "/etc/passwd", true},
		{"abs-root", "/", true},
		{"rel", "../outside", true},
		{"src/rel", "../../outside", true},
		{"src/rel", "../src/../../x", true},
		{"dotdot", "..", true},
		{"via-link", "up/x", true},
		{"src/via-link", "../docs/out/x", true},
		{"gitdir", ".git/hooks/pre-commit", true},
		{"src/gitdir", "../.GIT/config", true},
		{"sub-gitdir", "vendor/lib/.git", true},
		{"loop/c", "a", true},
	} {
		links := map[string]string{c.link: c.target}
		for k, v := range base {
			links[k] = v
		}
		if got := LinkEscapes(c.link, links); got != c.escapes {
			t.Errorf("%s -> %s: escapes = %v, want %v", c.link, c.target, got, c.escapes)
		}
	}
}

// TestRedTeamGitSymlinkEscapes reads links from a real task snapshot: only
// the task's own links that leave the repository are named.
func TestRedTeamGitSymlinkEscapes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	// The repository already has a link out (e.g. to a system file); it is
	// not the task's doing and is not reported, but linking through it is.
	os.Symlink("/usr/share", filepath.Join(r.Root, "share"))
	mustGit(t, r.Root, "add", "share")
	mustGit(t, r.Root, "commit", "-qm", "system link")
	head, _ := r.Head(ctx)
	wt := r.WorktreeDir("s1", "T1")
	if err := r.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"src/ok":      "old.txt",
		"src/abs":     "/etc/passwd",
		"src/up":      "../../outside",
		"src/through": "../share/doc",
		"src/git":     "../.git/config",
	} {
		if err := os.Symlink(target, filepath.Join(wt, link)); err != nil {
			t.Fatal(err)
		}
	}
	tree, changes, err := r.Snapshot(ctx, wt, head)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := r.SymlinkEscapes(ctx, tree, changes)
	if err != nil {
		t.Fatal(err)
	}
	want := "src/abs -> /etc/passwd, src/git -> ../.git/config, src/through -> ../share/doc, src/up -> ../../outside"
	if got := strings.Join(bad, ", "); got != want {
		t.Errorf("SymlinkEscapes = %s\nwant            %s", got, want)
	}
}

// TestResolveFolders: where the configuration folders of a real tree lead
// through its committed links, chained, to the root, out of the
// repository and in a loop, and a link whose target is one byte longer
// than planex reads (none).
func TestResolveFolders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	for _, d := range []string{"ci", "wf", "docs/real"} {
		if err := os.MkdirAll(filepath.Join(r.Root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.Root, d, "x"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{".github": "ci", "ci/workflows": "../wf", "ci/actions": "/etc", "docs/a": "b", "docs/b": "a"} {
		if err := os.Symlink(target, filepath.Join(r.Root, link)); err != nil {
			t.Fatal(err)
		}
	}
	head := commitAll(ctx, t, r, "links")
	// Two links no file system makes, only a push: targets of 4,096 bytes
	// (the longest read) and of 4,097 (too long to lead anywhere here).
	longest := strings.Repeat("./", 2047) + "wf"
	var entries strings.Builder
	for link, target := range map[string]string{".gitlab": longest, ".gitea": longest + "/"} {
		blob := strings.TrimSpace(mustGitIn(t, r.Root, target, "hash-object", "-w", "--stdin"))
		fmt.Fprintf(&entries, "120000 %s\t%s\n", blob, link)
	}
	idx := filepath.Join(t.TempDir(), "index")
	gitIndexIn(t, r.Root, idx, "", "read-tree", head)
	gitIndexIn(t, r.Root, idx, entries.String(), "update-index", "--index-info")
	tree := gitIndexIn(t, r.Root, idx, "", "write-tree")
	got, err := r.Tree(tree).ResolveFolders(ctx, []string{".github", ".github/workflows", ".github/actions", "docs", "docs/a", "src", ".gitlab", ".gitea"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{".github": "ci", ".github/workflows": "wf", ".gitlab": "wf"}
	if len(got) != len(want) {
		t.Errorf("ResolveFolders = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ResolveFolders[%s] = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// TestFoldersHolding: the folders of a real tree, above the paths asked
// about, that hold an action's definition (in any case); names with
// spaces or a line break, and a folder of that name, are read right.
func TestFoldersHolding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	writeFiles(t, r.Root, map[string]string{"tools/deploy/action.yml": "runs: {}", "a blob/action.yaml": "x", "x/action.yml/inner": "x",
		"action.yml": "x", "src/main.go": "x", "ci/Build/Action.YML": "x", "new\nline/action.yml": "x"})
	head := commitAll(ctx, t, r, "actions")
	definition := func(name string) bool {
		return strings.EqualFold(name, "action.yml") || strings.EqualFold(name, "action.yaml")
	}
	got, err := r.Tree(head).FoldersHolding(ctx, []string{"tools/deploy/lib/run.sh", "a blob/c", "x/y", "src/main.go", "top", "new\nline/z", "ci/Build/run.sh"},
		definition)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || !got["tools/deploy"] || !got["a blob"] || !got["ci/Build"] || !got["new\nline"] {
		t.Errorf("FoldersHolding = %v, want tools/deploy, a blob, ci/Build and new\\nline", got)
	}
}

// TestFolderFiles: the files directly in a folder of a real tree, each
// cut at the byte bound, a folder of more files than the file bound
// refused; links, sub-folders and a missing folder give nothing.
func TestFolderFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	writeFiles(t, r.Root, map[string]string{".github/workflows/a.yml": "uses: ./x\n", ".github/workflows/b.yml": "0123456789",
		".github/workflows/sub/c.yml": "x", "other.yml": "x"})
	if err := os.Symlink("../../other.yml", filepath.Join(r.Root, ".github/workflows/link.yml")); err != nil {
		t.Fatal(err)
	}
	head := commitAll(ctx, t, r, "workflows")
	got, err := r.Tree(head).FolderFiles(ctx, ".github/workflows", 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[".github/workflows/a.yml"]) != "uses" || string(got[".github/workflows/b.yml"]) != "0123" {
		t.Errorf("FolderFiles = %q, want a.yml and b.yml cut at 4 bytes", got)
	}
	if got, err := r.Tree(head).FolderFiles(ctx, ".github/workflows", 2, 100); err != nil || len(got) != 2 {
		t.Errorf("FolderFiles with two files allowed = %q, %v", got, err)
	}
	if got, err := r.Tree(head).FolderFiles(ctx, ".github/workflows", 1, 100); !errors.Is(err, ErrTooManyFiles) {
		t.Errorf("FolderFiles with one file allowed = %q, %v; want ErrTooManyFiles", got, err)
	}
	if got, err := r.Tree(head).FolderFiles(ctx, "missing", 10, 100); err != nil || len(got) != 0 {
		t.Errorf("FolderFiles of a missing folder = %q, %v", got, err)
	}
}

// TestReadFiles: the files at given paths of a real tree, at any depth,
// each cut at the byte bound; a folder, a missing path and a path with a
// line break give nothing.
func TestReadFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	writeFiles(t, r.Root, map[string]string{"action.yml": "runs: {}\n", "tools/x/action.yml": "0123456789", "tools/y/z": "x"})
	head := commitAll(ctx, t, r, "files")
	got, err := r.Tree(head).ReadFiles(ctx, []string{"action.yml", "tools/x/action.yml", "tools/y", "missing/action.yml", "new\nline"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got["action.yml"]) != "runs" || string(got["tools/x/action.yml"]) != "0123" {
		t.Errorf("ReadFiles = %q", got)
	}
}

// writeFiles writes each file of files (path with slashes → content)
// under root, making the folders on the way.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// commitAll commits everything in r's work tree with message msg and
// returns the new head.
func commitAll(ctx context.Context, t *testing.T, r *Repo, msg string) string {
	t.Helper()
	mustGit(t, r.Root, "add", "-A")
	mustGit(t, r.Root, "commit", "-qm", msg)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// TestNamedFilesRefusesWhatItWouldLeaveOut: NamedFiles reads every entry
// of a folder whose name it is asked for, and refuses a folder holding
// more than it reads rather than leave out the later ones (git lists
// Action.yml before action.yml, which a Linux runner reads).
func TestNamedFilesRefusesWhatItWouldLeaveOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	files := map[string]string{"few/Action.yml": "a", "few/action.yml": "b", "few/other": "c"}
	for i := range maxNamed {
		files[fmt.Sprintf("many/Action.yml%02d", i)] = "decoy"
	}
	files["many/action.yml"] = "real"
	writeFiles(t, r.Root, files)
	head := commitAll(ctx, t, r, "files")
	keep := func(name string) bool { return strings.HasPrefix(strings.ToLower(name), "action.yml") }
	got, links, err := r.Tree(head).NamedFiles(ctx, "few", keep, 16)
	if err != nil || len(links) != 0 || len(got) != 2 || string(got["few/action.yml"]) != "b" {
		t.Errorf("NamedFiles(few) = %q, %v, %v", got, links, err)
	}
	if got, _, err := r.Tree(head).NamedFiles(ctx, "many", keep, 16); !errors.Is(err, ErrTooManyNamed) {
		t.Errorf("NamedFiles(many) = %q, %v; want ErrTooManyNamed", got, err)
	}
}
