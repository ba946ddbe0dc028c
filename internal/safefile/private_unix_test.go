//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestPrivateDir(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		root    bool
		make    func(t *testing.T, p string)
		private bool
	}{
		{"missing: made 0700", false, func(*testing.T, string) {}, true},
		{"our own 0700 folder", false, func(t *testing.T, p string) { mustOK(t, os.Mkdir(p, 0o700)) }, true},
		{"a link to our folder", false, func(t *testing.T, p string) { mustOK(t, os.Symlink(t.TempDir(), p)) }, false},
		{"a file", false, func(t *testing.T, p string) { mustOK(t, os.WriteFile(p, nil, 0o600)) }, false},
		{"group-writable", false, func(t *testing.T, p string) { mustOK(t, os.Mkdir(p, 0o700)); mustOK(t, os.Chmod(p, 0o770)) }, false},
		{"another user's 0700 folder", true, func(t *testing.T, p string) { mustOK(t, os.Mkdir(p, 0o700)); mustOK(t, os.Chown(p, 65534, 65534)) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.root && os.Getuid() != 0 {
				t.Skip("giving a folder to another user needs root")
			}
			p := filepath.Join(t.TempDir(), "cache")
			c.make(t, p)
			err := PrivateDir(p)
			if c.private {
				if err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Lstat(p); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Errorf("after PrivateDir: %v %v, want a 0700 folder", fi, err)
				}
				return
			}
			if !errors.Is(err, ErrNotPrivate) {
				t.Errorf("PrivateDir = %v, want ErrNotPrivate", err)
			}
		})
	}
	dir := t.TempDir()
	mustOK(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600))
	mustOK(t, os.Symlink(filepath.Join(dir, "f"), filepath.Join(dir, "l")))
	if f, err := OpenNoFollow(filepath.Join(dir, "l")); err == nil {
		f.Close()
		t.Error("OpenNoFollow opened a link")
	}
	f, err := OpenNoFollow(filepath.Join(dir, "f"))
	mustOK(t, err)
	f.Close()
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenNoFollowRefusesFIFO(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opening a FIFO without a writer would wait forever; it is refused.
	f, err := OpenNoFollow(p)
	if err == nil {
		f.Close()
		t.Fatal("OpenNoFollow opened a FIFO")
	}
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("OpenNoFollow(FIFO) = %v, want ErrNotRegular", err)
	}
}

// TestOpenBeneathNoFollow: a regular file beneath the folder opens, also
// through a folder link that stays inside it; a last part that is a link
// (inside the folder or out of it), a folder linked out of it, and a FIFO
// are refused, the FIFO at once.
func TestOpenBeneathNoFollow(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir, outside := filepath.Join(parent, "in"), filepath.Join(parent, "out")
	for _, d := range []string{filepath.Join(dir, "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "real", "f"), filepath.Join(outside, "f")} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"inlink": "real/f", "outlink": "../out/f", "alias": "real", "outdir": outside}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, c := range []struct {
		rel string
		ok  bool
	}{
		{"real/f", true},
		{"alias/f", true},
		{"inlink", false},
		{"outlink", false},
		{"outdir/f", false},
		{"fifo", false},
		{"missing", false},
	} {
		f, err := OpenBeneathNoFollow(root, c.rel)
		if f != nil {
			f.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("OpenBeneathNoFollow(%s) = %v, want opened: %v", c.rel, err, c.ok)
		}
	}
}
