//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRedTeamLeaseOnAHostFile: a contained program takes a read lease
// (fcntl F_SETLEASE, F_RDLCK) on a host file it owns and reads through
// its read-only view (run as an ordinary user, the program has the
// user's uid: a reflog of the repository, a module cache's file), and
// holds it for the step. Every host process that opens the file for
// writing (planex's own git, another job) then waits up to the kernel's
// lease-break time, 45 s, each time; a non-blocking open is refused with
// EWOULDBLOCK, which is what this test looks for. The sandbox's system
// call filter now refuses the lease.
func TestRedTeamLeaseOnAHostFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "logs-HEAD")
	writeFile(t, file, "0000 1111 reflog\n", 0o644)
	if os.Getuid() == 0 {
		// The program's own file, as a user's files are to a user's
		// program: a lease needs the caller to own the file.
		id := rootProgramID()
		if err := os.Chown(file, id, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := Policy{Writable: []string{t.TempDir()}, ReadOnly: []string{dir, filepath.Dir(os.Args[0])}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLeaseProbeHelper$")
	cmd.Env = []string{"PLANEX_LEASE_PROBE=" + file}
	// A folder the program sees: the package's folder, the working
	// directory go test gives, may lie under a /tmp the sandbox replaces.
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cleanup, err := s.Wrap(cmd, p)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := bufio.NewScanner(out)
	var said string
	for lines.Scan() {
		if said = lines.Text(); strings.HasPrefix(said, "lease:") {
			break
		}
	}
	if !strings.HasPrefix(said, "lease:") {
		cmd.Wait()
		t.Fatalf("the probe said nothing of its lease (last line %q; its errors: %s)", said, stderr.String())
	}
	// The program holds what it took until its standard input closes.
	fd, err := unix.Open(file, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("a host process opening the file for writing would wait on the program's lease (%s): %v", said, err)
	} else if err != nil {
		t.Fatalf("opening the file for writing: %v", err)
	}
	if said != "lease: refused" {
		t.Errorf("the program's lease was not refused: %s", said)
	}
	stdin.Close()
	io.Copy(io.Discard, out)
}

// TestLeaseProbeHelper is the program of TestRedTeamLeaseOnAHostFile: it
// opens the file PLANEX_LEASE_PROBE names for reading, asks for a read
// lease on it, says whether it got one ("lease: taken", "lease:
// refused") and holds it until its standard input closes.
func TestLeaseProbeHelper(t *testing.T) {
	file := os.Getenv("PLANEX_LEASE_PROBE")
	if file == "" {
		t.Skip("a program of TestRedTeamLeaseOnAHostFile")
	}
	f, err := os.Open(file)
	if err != nil {
		fmt.Printf("lease: cannot open %s: %v\n", file, err)
		return
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		fmt.Println("lease: refused")
	} else {
		fmt.Println("lease: taken")
	}
	io.Copy(io.Discard, os.Stdin)
}
