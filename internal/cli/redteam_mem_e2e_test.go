//go:build linux

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamHostileFilesKeepLocateSmall: a repository that commits links
// to /dev/zero and /dev/urandom where project files are read (Makefile,
// go.mod, package.json, a source file), and holds a FIFO, a 3 GiB sparse
// source file and (as root) a device node: `planex locate` and `planex
// explore` finish promptly, rank the real file, and their peak RSS (the
// child's rusage) stays under 512 MiB.
func TestRedTeamHostileFilesKeepLocateSmall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write(f.repo, "limits.py", "def rate_limit(key):\n    return True\n")
	for name, target := range map[string]string{"Makefile": "/dev/zero", "go.mod": "/dev/zero", "package.json": "/dev/urandom", "rate.py": "/dev/zero"} {
		if err := os.Symlink(target, filepath.Join(f.repo, name)); err != nil {
			t.Fatal(err)
		}
	}
	f.git("add", ".")
	f.git("commit", "-qm", "hostile files")
	if err := syscall.Mkfifo(filepath.Join(f.repo, "pipe.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(f.repo, "rate_limit_big.py")
	if err := os.WriteFile(big, []byte("def rate_limit(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 3<<30); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		// /dev/zero's device numbers; only root may make a node.
		if err := syscall.Mknod(filepath.Join(f.repo, "zero.py"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
			t.Logf("no device node (%v)", err)
		}
	}
	for _, args := range [][]string{{"locate", "rate_limit is broken"}, {"explore", "rate_limit is broken"}} {
		cmd := f.command(args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		err := cmd.Wait()
		timer.Stop()
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out.String())
		}
		if !strings.Contains(out.String(), "limits.py") {
			t.Errorf("%s does not name limits.py:\n%s", args[0], out.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); !ok {
			t.Errorf("%s: no rusage", args[0])
		} else if peak := ru.Maxrss << 10; peak > 512<<20 {
			t.Errorf("%s: peak RSS %d MiB, want under 512 MiB", args[0], peak>>20)
		}
	}
}
