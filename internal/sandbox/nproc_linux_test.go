//go:build linux

package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// nprocAttackUID is the uid TestRedTeamUserProcessesShared runs as: an
// id of its own, since the kernel counts a user's processes for the
// whole machine and no other test's may count with it.
const nprocAttackUID = 61234

// TestRedTeamUserProcessesShared: an ordinary user's program counts its
// processes and threads against planex's user's RLIMIT_NPROC on the
// host as well as its own (the kernel checks every user namespace up to
// the host's, each against the limit its creator had), and the step's
// limit was 4096 whatever planex's was: where the user's limit is low
// (RHEL's limits.d gives every user a soft 4096), a program that forked
// until refused left planex's user, the runner and planex among them,
// unable to start a process or a thread while it ran (Go's runtime ends
// a program that cannot make a thread). Here planex's user may run 256;
// the program forks up to 400 sleepers and holds them, and planex then
// starts eight processes.
func TestRedTeamUserProcessesShared(t *testing.T) {
	t.Parallel()
	if os.Getenv("PLANEX_NPROC_ATTACK") != "" {
		nprocAttack(t)
		return
	}
	needRoot(t)
	dir, err := os.MkdirTemp("/srv", "planex-nproc-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp for the copied test binary: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestRedTeamUserProcessesShared$", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=/tmp", "PLANEX_NPROC_ATTACK=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nprocAttackUID, Gid: nprocAttackUID}}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "sandbox unavailable") {
		t.Skipf("an ordinary user cannot make a sandbox on this machine:\n%s", out)
	}
	if err != nil {
		t.Errorf("as an ordinary user with a process limit of 256: %v\n%s", err, out)
	}
}

// nprocAttack is TestRedTeamUserProcessesShared as the ordinary user.
func nprocAttack(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 256
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t)
	// A fork refused ends the subshell, not the program, which then holds
	// the sleepers without another fork.
	cmd := exec.Command("sh", "-c", `(n=0; while [ $n -lt 400 ]; do sleep 30 & n=$((n+1)); done) 2>/dev/null; echo forked; exec sleep 30`)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cleanup, err := s.Wrap(cmd, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var seen strings.Builder
	for br := bufio.NewReader(r); !strings.HasSuffix(seen.String(), "forked\n"); {
		line, err := br.ReadString('\n')
		seen.WriteString(line)
		if err != nil {
			t.Fatalf("the program did not fork its sleepers:\n%s", seen.String())
		}
	}
	// planex's next git commands, a few at once.
	out, err := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8; do true & done; wait").CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("planex's user could not start eight processes while the step held its processes (%v):\n%s", err, out)
	}
}
