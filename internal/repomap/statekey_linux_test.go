package repomap

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestStateKeyHostileFiles: an agent leaves, just before the key, a FIFO,
// links to /dev/zero, a 3 GiB sparse file and (as root) a device node
// among the files git lists. Their stamps are recent, so the key looks at
// contents, but only of regular files the map would read: it returns
// promptly instead of waiting on the pipe or reading without end, and
// changes when the planted files change.
func TestStateKeyHostileFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, map[string]string{"app.py": "def main():\n    pass\n"})
	for _, name := range []string{"zero.py", "Makefile"} {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.py")
	writeFile(t, dir, "big.py", "x = 1\n")
	if err := os.Truncate(big, 3<<30); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := syscall.Mknod(filepath.Join(dir, "dev.py"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
			t.Logf("no device node (%v)", err)
		}
	}
	ctx := context.Background()
	k := newStateKeyer(ctx, t, dir)
	type result struct {
		key string
		err error
	}
	keyWithin := func() string {
		t.Helper()
		done := make(chan result, 1)
		go func() {
			key, err := k.key(ctx)
			done <- result{key, err}
		}()
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r.key
		case <-time.After(30 * time.Second):
			t.Fatal("the key did not return within 30 s")
			return ""
		}
	}
	first := keyWithin()
	if err := os.Truncate(big, 2<<30); err != nil {
		t.Fatal(err)
	}
	if second := keyWithin(); second == first {
		t.Errorf("key %s did not change when the sparse file shrank", first)
	}
}
