package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestIgnoredMasks covers ignored entries but what planex must show:
// granted paths at, above or below an ignored entry, the step's
// writable folders, readable folders only where they lie in an ignored
// place, and links; past the bound it refuses.
func TestIgnoredMasks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, rel := range []string{".env", "secrets/key.pem", "node_modules/a/x.js", "node_modules/b/y.js",
		"node_modules/tool/bin/t", "vendor/cache/.npmrc", "src/main.go", "build/out/o", "build/other/o"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// sh: a link a repository commits under the name of a word of the
	// agent command, leading to the ignored .env; secrets/run: an ignored
	// link to an ignored file, as node_modules/.bin holds.
	for link, to := range map[string]string{"etc-link": "/etc", "sh": ".env", "secrets/run": "key.pem", "src/up": ".."} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	in := func(rels ...string) []string {
		var out []string
		for _, r := range rels {
			out = append(out, filepath.Join(root, r))
		}
		return out
	}
	ignored := in(".env", "secrets", "secrets/key.pem", "node_modules", "vendor/cache/.npmrc", "build", "etc-link", "gone.txt")
	for _, row := range []struct {
		name              string
		keep, write, read []string
		named             []string
		want              []string
	}{
		{name: "everything covered, links and missing entries left",
			want: in(".env", "secrets", "node_modules", "vendor/cache/.npmrc", "build")},
		{name: "a granted ignored folder, a granted folder above an ignored file",
			keep: in("secrets", "vendor"),
			want: in(".env", "node_modules", "build")},
		{name: "a granted program below an ignored folder opens it",
			keep: in("node_modules/tool/bin/t"),
			want: in(".env", "secrets", "node_modules/a", "node_modules/b", "vendor/cache/.npmrc", "build")},
		{name: "the checkout itself and paths outside it grant nothing",
			keep: []string{root, "/usr"}, read: []string{root},
			want: in(".env", "secrets", "node_modules", "vendor/cache/.npmrc", "build")},
		{name: "a writable folder below an ignored one stays; a readable one only there",
			write: in("build/out"), read: in("vendor", "node_modules/a"),
			want: in(".env", "secrets", "node_modules/b", "node_modules/tool", "vendor/cache/.npmrc", "build/other")},
		{name: "a named program below an ignored folder opens it",
			named: in("node_modules/tool/bin/t"),
			want:  in(".env", "secrets", "node_modules/a", "node_modules/b", "vendor/cache/.npmrc", "build")},
		{name: "a named ignored link keeps its ignored target",
			named: in("secrets/run"),
			want:  in(".env", "node_modules", "vendor/cache/.npmrc", "build")},
		{name: "a named tracked link to an ignored file, a tracked folder, a link to the checkout keep nothing",
			named: in("sh", "src", "src/up", "vendor", "src/up/.env"),
			want:  in(".env", "secrets", "node_modules", "vendor/cache/.npmrc", "build")},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			got, err := Ignored{Root: root, Paths: ignored, Keep: row.keep, Named: row.named}.masks(row.write, row.read)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(row.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("masks = %q\nwant    %q", got, want)
			}
		})
	}
}

// TestIgnoredMasksBound refuses a checkout whose ignored entries need
// more masks than MaxIgnoredMasks, also when opening a folder adds them.
func TestIgnoredMasksBound(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var paths []string
	for i := range MaxIgnoredMasks + 1 {
		p := filepath.Join(root, "f"+strconv.Itoa(i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if _, err := (Ignored{Root: root, Paths: paths}).masks(nil, nil); !errors.Is(err, ErrTooManyIgnored) {
		t.Errorf("%d entries: err = %v, want ErrTooManyIgnored", len(paths), err)
	}
	got, err := Ignored{Root: root, Paths: paths[:MaxIgnoredMasks]}.masks(nil, nil)
	if err != nil || len(got) != MaxIgnoredMasks {
		t.Errorf("%d entries: %d masks, %v", MaxIgnoredMasks, len(got), err)
	}
}

// TestIgnoredMasksLinkedOutside: an ignored .env that is a link to a
// file outside the checkout (a secrets folder) would show that file
// through the link's name: the file it leads to is covered, unless
// granted; a link to a folder or to a file in the checkout is not.
func TestIgnoredMasksLinkedOutside(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "app.env")
	if err := os.WriteFile(secret, []byte("TOKEN=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "local.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(outside, "python3")
	for _, f := range []string{python, filepath.Join(root, "venv", "bin", "agent")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// venv/bin/python: a link inside an ignored folder opened for the
	// agent command's program; .passwd: one into the system's folders.
	for link, to := range map[string]string{".env": secret, "shared": outside, "inside": "local.txt", "venv/bin/python": python, ".passwd": "/etc/passwd"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{filepath.Join(root, ".env"), filepath.Join(root, "shared"), filepath.Join(root, "inside"), filepath.Join(root, "venv"), filepath.Join(root, ".passwd")}
	realSecret, err := filepath.EvalSymlinks(secret)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Ignored{Root: root, Paths: paths, Named: []string{filepath.Join(root, "venv", "bin", "agent")}}.masks(nil, nil)
	if err != nil || !slices.Equal(got, []string{realSecret}) {
		t.Errorf("masks = %q, %v; want only %s", got, err, realSecret)
	}
	got, err = Ignored{Root: root, Paths: paths[:3], Keep: []string{outside}}.masks(nil, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("with the secrets folder granted: masks = %q, %v; want none", got, err)
	}
}

// TestIgnoredRelist: with Relist set, each step's masks come from a
// fresh listing (a file that appeared in the checkout after the run
// started is covered), and a listing that fails fails the step rather
// than showing what it could not list.
func TestIgnoredRelist(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, name := range []string{".env", ".env.late"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("K=v\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	listed := []string{filepath.Join(root, ".env")}
	ig := Ignored{Root: root, Paths: listed, Relist: func(context.Context) ([]string, error) {
		return append(append([]string(nil), listed...), filepath.Join(root, ".env.late")), nil
	}}
	now, err := ig.current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	masks, err := now.masks(nil, nil)
	if err != nil || !slices.Contains(masks, filepath.Join(root, ".env.late")) || !slices.Contains(masks, filepath.Join(root, ".env")) {
		t.Errorf("masks = %q, %v: want both .env files", masks, err)
	}
	failing := Ignored{Root: root, Paths: listed, Relist: func(context.Context) ([]string, error) { return nil, ErrTooManyIgnored }}
	if _, err := failing.current(context.Background()); !errors.Is(err, ErrTooManyIgnored) {
		t.Errorf("a failed listing: %v, want ErrTooManyIgnored", err)
	}
}
