package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestIgnored lists ignored files and wholly ignored folders once, leaves
// out tracked and untracked-but-not-ignored files, and stops at the bound.
// An untracked folder holding only ignored files is listed too (git's
// --directory does so), then its files.
func TestIgnored(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	write := func(rel, content string) {
		p := filepath.Join(r.Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", ".env\nbuild/\n*.pem\n")
	write(".env", "K=v\n")
	write("build/a/b.o", "x")
	write("build/c.o", "x")
	write("src/key.pem", "k")
	write("src/new.go", "package new\n") // untracked, not ignored
	write("with space/x.pem", "k")
	got, more, err := Ignored(context.Background(), r, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{filepath.Join(r.Root, ".env"), filepath.Join(r.Root, "build"),
		filepath.Join(r.Root, "src", "key.pem"), filepath.Join(r.Root, "with space"), filepath.Join(r.Root, "with space", "x.pem")}
	if more || !slices.Equal(got, want) {
		t.Errorf("Ignored = %q, more %v; want %q", got, more, want)
	}
	got, more, err = Ignored(context.Background(), r, 2)
	if err != nil || !more || len(got) != 2 {
		t.Errorf("bounded at 2: %q, more %v, %v; want two and more", got, more, err)
	}
	// Untracked (the Action's list) holds the untracked work too, ignored
	// or not, each wholly untracked folder once (src holds tracked files).
	got, more, err = Untracked(context.Background(), r, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want = []string{filepath.Join(r.Root, ".env"), filepath.Join(r.Root, ".gitignore"), filepath.Join(r.Root, "build"),
		filepath.Join(r.Root, "src", "key.pem"), filepath.Join(r.Root, "src", "new.go"), filepath.Join(r.Root, "with space")}
	if more || !slices.Equal(got, want) {
		t.Errorf("Untracked = %q, more %v; want %q", got, more, want)
	}
}

// TestIgnoredGlobalExcludes: a user's global excludes file
// (core.excludesFile in ~/.gitconfig, as `git config --global
// core.excludesfile ~/.gitignore_global` sets it) ignores a .env no
// .gitignore of the repository names. planex's git reads no global
// config, but the listing must still count that .env as ignored, or a
// contained agent is shown it as untracked work.
func TestIgnoredGlobalExcludes(t *testing.T) {
	// Not parallel: the user's global config is named by this process's
	// GIT_CONFIG_GLOBAL, as it is for planex.
	r := newRepo(t)
	dir := t.TempDir()
	excludes := filepath.Join(dir, "gitignore_global")
	if err := os.WriteFile(excludes, []byte(".env\n*.pem\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\texcludesFile = "+excludes+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, rel := range []string{".env", "keys/id.pem", "notes.txt"} {
		p := filepath.Join(r.Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, more, err := Ignored(context.Background(), r, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{filepath.Join(r.Root, ".env"), filepath.Join(r.Root, "keys"), filepath.Join(r.Root, "keys", "id.pem")}
	if more || !slices.Equal(got, want) {
		t.Errorf("Ignored = %q, more %v; want %q", got, more, want)
	}
}

// TestIgnoredInSubmodules: git's listing of a checkout leaves out what
// its submodules hold, so a submodule's own ignored .env (and one in a
// submodule of that submodule) was shown to contained agents. Both are
// listed, each under its submodule's folder; a submodule that is not
// checked out adds nothing, and the superproject's list is as before.
func TestIgnoredInSubmodules(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	inner, deeper := t.TempDir(), t.TempDir()
	for _, dir := range []string{inner, deeper} {
		mustGit(t, dir, "init", "-q", "-b", "main")
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".env\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mustGit(t, dir, "add", ".")
		mustGit(t, dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "ignore .env")
	}
	file := []string{"-c", "protocol.file.allow=always"}
	mustGit(t, inner, append(file, "submodule", "add", "-q", deeper, "deep")...)
	mustGit(t, inner, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "a submodule")
	mustGit(t, r.Root, append(file, "submodule", "add", "-q", inner, "vendor/lib")...)
	mustGit(t, r.Root, append(file, "submodule", "add", "-q", deeper, "unchecked")...)
	mustGit(t, r.Root, "commit", "-qm", "submodules")
	mustGit(t, r.Root, append(file, "submodule", "update", "-q", "--init", "--recursive")...)
	mustGit(t, r.Root, "submodule", "deinit", "-q", "-f", "unchecked")
	for _, rel := range []string{"vendor/lib/.env", "vendor/lib/deep/.env", "vendor/lib/notes.txt"} {
		if err := os.WriteFile(filepath.Join(r.Root, rel), []byte("SECRET=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, more, err := Ignored(context.Background(), r, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{filepath.Join(r.Root, "vendor", "lib", ".env"), filepath.Join(r.Root, "vendor", "lib", "deep", ".env")}
	slices.Sort(want)
	if more || !slices.Equal(got, want) {
		t.Errorf("Ignored = %q, more %v; want %q", got, more, want)
	}
	got, _, err = Untracked(context.Background(), r, 100)
	if err != nil || !slices.Contains(got, filepath.Join(r.Root, "vendor", "lib", "notes.txt")) {
		t.Errorf("Untracked = %q (%v): lacks the submodule's untracked notes.txt", got, err)
	}
	if got, more, err := Ignored(context.Background(), r, 1); err != nil || !more || len(got) != 1 {
		t.Errorf("bounded at 1: %q, more %v, %v; want one and more", got, more, err)
	}
}

// TestIgnoredInNestedRepository: an untracked folder holding a
// repository of its own (a project cloned inside the checkout) is listed
// by git as one untracked folder, without its ignored files, and is not
// hidden in a local run (it is untracked work); its own ignored .env is
// listed. An untracked folder without a .git adds nothing.
func TestIgnoredInNestedRepository(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	nested := filepath.Join(r.Root, "clones", "other")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	mustGit(t, nested, "init", "-q", "-b", "main")
	for rel, content := range map[string]string{"clones/other/.gitignore": ".env\n", "clones/other/.env": "SECRET=1\n", "clones/other/main.go": "package main\n", "plain/notes.txt": "n\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(r.Root, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.Root, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, more, err := Ignored(context.Background(), r, 100)
	if want := []string{filepath.Join(nested, ".env")}; err != nil || more || !slices.Equal(got, want) {
		t.Errorf("Ignored = %q, more %v, %v; want %q", got, more, err, want)
	}
}
