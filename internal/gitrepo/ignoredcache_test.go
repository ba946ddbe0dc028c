package gitrepo

import (
	"context"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// userGlobalConfig points git's global config at a file of the test's
// own (not parallel: t.Setenv).
func userGlobalConfig(t *testing.T) string {
	t.Helper()
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	return global
}

// TestIgnoredRepeatedListingProcesses: listing a checkout's ignored files
// again while nothing that decides the excludes file or the submodules
// changed runs only the two listings of the work tree (ignored files,
// nested repositories): the user's core.excludesFile and the index's
// gitlinks are remembered. The Action's listing runs one git.
func TestIgnoredRepeatedListingProcesses(t *testing.T) {
	userGlobalConfig(t)
	r := newRepo(t)
	for name, content := range map[string]string{".gitignore": ".env\n", ".env": "K=v\n"} {
		if err := os.WriteFile(filepath.Join(r.Root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	calls := gittest.CountGit(t)
	settle()
	ctx := context.Background()
	for _, list := range []func(context.Context, *Repo, int) ([]string, bool, error){Ignored, Untracked} {
		if _, _, err := list(ctx, r, 100); err != nil {
			t.Fatal(err)
		}
	}
	first := calls()
	if !slices.ContainsFunc(first, func(c string) bool { return strings.HasPrefix(c, "config -z --type=path") }) ||
		!slices.Contains(first, "ls-files -z --stage") {
		t.Fatalf("first listings ran %q: no excludes read or no submodule listing", first)
	}
	for _, tc := range []struct {
		name string
		list func(context.Context, *Repo, int) ([]string, bool, error)
		want []string
	}{
		{"Ignored", Ignored, []string{"ls-files -z --others --directory --ignored --exclude-standard", "ls-files -z --others --exclude-standard"}},
		{"Untracked", Untracked, []string{"ls-files -z --others --directory"}},
	} {
		got, _, err := tc.list(ctx, r, 100)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(got, filepath.Join(r.Root, ".env")) {
			t.Errorf("%s again = %q: lacks .env", tc.name, got)
		}
		if ran := calls(); !slices.Equal(ran, tc.want) {
			t.Errorf("%s again ran %d gits %q; want %q", tc.name, len(ran), ran, tc.want)
		}
	}
}

// TestIgnoredRelistSeesChanges: what the listing remembers is dropped
// when its files change, at once (a file changed within racyWindow is
// read again) or later (the stamp differs): a new global excludes file,
// a new submodule and a new nested repository each show their ignored
// files in the next listing.
func TestIgnoredRelistSeesChanges(t *testing.T) {
	for _, wait := range []bool{false, true} {
		global := userGlobalConfig(t)
		r := newRepo(t)
		ctx := context.Background()
		list := func(step string) []string {
			t.Helper()
			if wait {
				settle()
			}
			got, _, err := Ignored(ctx, r, 100)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			return got
		}
		write := func(path, content string) {
			t.Helper()
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(filepath.Join(r.Root, "secret.key"), "k")
		settle()
		if got := list("before"); len(got) != 0 {
			t.Fatalf("before any change: %q", got)
		}
		list("unchanged") // the remembered answers are used

		excludes := filepath.Join(t.TempDir(), "ignore")
		write(excludes, "*.key\n")
		write(global, "[core]\n\texcludesFile = "+excludes+"\n")
		if got := list("excludes file"); !slices.Contains(got, filepath.Join(r.Root, "secret.key")) {
			t.Errorf("wait %v: after a global excludes file was set, Ignored = %q; lacks secret.key", wait, got)
		}

		sub := t.TempDir()
		mustGit(t, sub, "init", "-q", "-b", "main")
		write(filepath.Join(sub, ".gitignore"), ".env\n")
		mustGit(t, sub, "add", ".")
		mustGit(t, sub, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "ignore .env")
		mustGit(t, r.Root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "vendor/lib")
		write(filepath.Join(r.Root, "vendor", "lib", ".env"), "SECRET=1\n")
		if got := list("submodule"); !slices.Contains(got, filepath.Join(r.Root, "vendor", "lib", ".env")) {
			t.Errorf("wait %v: after a submodule was added, Ignored = %q; lacks its .env", wait, got)
		}

		nested := filepath.Join(r.Root, "clones", "other")
		write(filepath.Join(nested, ".gitignore"), ".env\n")
		write(filepath.Join(nested, ".env"), "SECRET=2\n")
		mustGit(t, nested, "init", "-q", "-b", "main")
		if got := list("nested repository"); !slices.Contains(got, filepath.Join(nested, ".env")) {
			t.Errorf("wait %v: after a repository was cloned inside, Ignored = %q; lacks its .env", wait, got)
		}
	}
}

// TestIgnoredExcludesWithIncludes: a global config that includes another
// file is read again for every listing, since the included file can
// change without the stamped ones changing.
func TestIgnoredExcludesWithIncludes(t *testing.T) {
	global := userGlobalConfig(t)
	r := newRepo(t)
	dir := t.TempDir()
	included := filepath.Join(dir, "more.gitconfig")
	excludes := filepath.Join(dir, "ignore")
	for path, content := range map[string]string{global: "[include]\n\tpath = " + included + "\n", included: "", excludes: "*.key\n", filepath.Join(r.Root, "secret.key"): "k"} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	ctx := context.Background()
	if got, _, err := Ignored(ctx, r, 100); err != nil || len(got) != 0 {
		t.Fatalf("before: %q, %v", got, err)
	}
	if err := os.WriteFile(included, []byte("[core]\n\texcludesFile = "+excludes+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	settle()
	if got, _, err := Ignored(ctx, r, 100); err != nil || !slices.Contains(got, filepath.Join(r.Root, "secret.key")) {
		t.Errorf("after the included file set an excludes file: %q, %v; lacks secret.key", got, err)
	}
}
