//go:build linux

package repomap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/proc/proctest"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// hostileRepo is a repository whose files try to make whoever maps it
// read without end: committed links to /dev/zero and /dev/urandom where
// the project files are read (Makefile, go.mod, package.json), a link to
// a source-looking device, a FIFO, a sparse file of 3 GiB and, as root, a
// device node of its own.
func hostileRepo(t *testing.T, git bool) string {
	t.Helper()
	d := t.TempDir()
	main := map[string]string{"main.go": "package main\n\nfunc Serve() {}\n"}
	if git {
		repomaptest.InitRepo(t, d, main)
	} else {
		repomaptest.WriteFiles(t, d, main)
	}
	for name, target := range map[string]string{"Makefile": "/dev/zero", "go.mod": "/dev/zero", "package.json": "/dev/urandom", "dev.go": "/dev/zero"} {
		if err := os.Symlink(target, filepath.Join(d, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(d, "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "huge.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(d, "huge.go"), 3<<30); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		// /dev/zero's numbers (1, 5); only root may make a device node.
		if err := syscall.Mknod(filepath.Join(d, "node.go"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
			t.Logf("no device node (%v): that row is left out", err)
		}
	}
	if git {
		repomaptest.Git(t, d, "add", "Makefile", "go.mod", "package.json", "dev.go")
		repomaptest.Git(t, d, "commit", "-q", "-m", "links")
	}
	return d
}

// TestRedTeamMapReadsNoLinkDeviceOrHugeFile: mapping a hostile repository
// ends promptly, maps its one real file, reads no link, FIFO or device
// and no file past the per-file cap, and planex's peak RSS stays under
// 512 MiB.
// (git does not list a FIFO or device node; the walk of a folder that is
// no repository does.)
func TestRedTeamMapReadsNoLinkDeviceOrHugeFile(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(fmt.Sprintf("git=%v", git), func(t *testing.T) {
			d := hostileRepo(t, git)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			m, err := Build(ctx, d, Options{NoCache: true})
			if err != nil {
				t.Fatal(err)
			}
			var mapped []string
			for _, f := range m.Files() {
				mapped = append(mapped, f.Path)
			}
			if strings.Join(mapped, " ") != "main.go" {
				t.Errorf("mapped %v, want only main.go", mapped)
			}
			if m.Skipped["symlink"] != 4 || m.Skipped["too large"] != 1 || !git && m.Skipped["not a regular file"] < 1 {
				t.Errorf("skipped %v", m.Skipped)
			}
			proctest.CheckPeakRSS(t)
		})
	}
}

// TestRedTeamMapFollowsNoFolderLink: an agent (or a tarball unpacked into
// the work tree) commits pkg/secret.py, then replaces the folder pkg with
// a link to a folder outside the repository holding a secret.py of its
// own (a user's home, a runner's credentials). git still lists
// pkg/secret.py; the map read it through the folder link (O_NOFOLLOW
// guarded only the last part) and put the outside file's names in the map
// planex sends to the model. It must skip it as a link.
func TestRedTeamMapFollowsNoFolderLink(t *testing.T) {
	d := t.TempDir()
	repomaptest.InitRepo(t, d, map[string]string{
		"main.go":       "package main\n\nfunc Serve() {}\n",
		"pkg/secret.py": "def harmless():\n    pass\n",
		"pkg/Makefile":  "all:\n\techo hi\n",
	})
	outside := t.TempDir()
	repomaptest.WriteFiles(t, outside, map[string]string{
		"secret.py": "def outside_credential_marker():\n    pass\n",
		"Makefile":  "outside_target_marker:\n\techo x\n",
	})
	if err := os.RemoveAll(filepath.Join(d, "pkg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(d, "pkg")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := Build(ctx, d, Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files() {
		if strings.HasPrefix(f.Path, "pkg/") {
			t.Errorf("mapped %s through the folder link (symbols %v)", f.Path, f.Symbols)
		}
	}
	if m.Skipped["symlink"] < 1 {
		t.Errorf("skipped %v, want pkg/secret.py skipped as a link", m.Skipped)
	}
	// Every reader of the map's files takes the same way.
	for _, rel := range []string{"pkg/secret.py", "pkg/Makefile", "../" + filepath.Base(outside) + "/secret.py"} {
		data, _, skip, _ := ReadRegular(nil, d, rel, 1<<20)
		if skip == "" || len(data) != 0 {
			t.Errorf("ReadRegular(%s) read %q (skip %q), want it refused", rel, data, skip)
		}
	}
}
