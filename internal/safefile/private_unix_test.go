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
