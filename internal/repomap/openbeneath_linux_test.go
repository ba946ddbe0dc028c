//go:build linux

package repomap

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestRedTeamOpenat2RaceIsBounded: the kernel answers EAGAIN to a scoped
// openat2 lookup through `..` whenever a rename anywhere raced it, so an
// agent renaming without pause could keep an open retrying for ever. Here
// openat2 always races (EAGAIN, or EINTR): each open gives up after
// maxOpenat2Tries calls and answers as the part-by-part walk does, the
// file itself, a link in a part refused, `..` refused. A real race cannot
// be made to last deterministically, so the call is handed in.
func TestRedTeamOpenat2RaceIsBounded(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	repomaptest.WriteFiles(t, dir, map[string]string{"pkg/a.py": "inside\n"})
	repomaptest.WriteFiles(t, outside, map[string]string{"secret.py": "outside\n"})
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := openRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(root)
	for _, raced := range []error{unix.EAGAIN, unix.EINTR} {
		for _, c := range []struct {
			rel, want string
			err       error
		}{
			{"pkg/a.py", "inside\n", nil},
			{"out/secret.py", "", syscall.ELOOP},
			{"pkg/../out/secret.py", "", errOutside},
			{"pkg/../pkg/a.py", "", errOutside},
		} {
			calls := 0
			always := func(int, string, *unix.OpenHow) (int, error) {
				calls++
				return -1, raced
			}
			fd, err := openBeneathWith(always, root, c.rel, syscall.O_RDONLY)
			got := ""
			if err == nil {
				buf := make([]byte, 64)
				n, _ := syscall.Read(fd, buf)
				got = string(buf[:max(n, 0)])
				syscall.Close(fd)
			}
			if calls != maxOpenat2Tries {
				t.Errorf("%v, %q: %d openat2 calls; want %d", raced, c.rel, calls, maxOpenat2Tries)
			}
			if got != c.want || !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Errorf("%v, %q: read %q, %v; want %q, %v", raced, c.rel, got, err, c.want, c.err)
			}
		}
	}
}
