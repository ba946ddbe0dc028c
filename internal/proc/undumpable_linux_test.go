package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// otherUID is the ordinary user the helpers run as when the test runs as
// root (root's CAP_SYS_PTRACE would read any process).
const otherUID = 2000000077

// TestRedTeamUncontainedCommandReadsNoPlanexEnviron: without the sandbox
// a step runs as planex's user. Its command finds planex as its
// reaper's parent and reads planex's environment (where the GitHub token
// and the model keys planex keeps from agents are) and lists planex's
// descriptors. Once planex has made itself non-dumpable, as it does when
// its agents run uncontained, neither works; without that (the control)
// both did.
func TestRedTeamUncontainedCommandReadsNoPlanexEnviron(t *testing.T) {
	t.Parallel()
	const secret = "ghs-undumpable-4711"
	exe := helperBinary(t)
	for _, mode := range []string{"plain", "hidden"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			helper := exec.Command(exe, "-test.run=^TestUndumpableHelper$")
			helper.Env = []string{"PATH=/usr/bin:/bin", "PLANEX_UNDUMPABLE_HELPER=" + mode, "GITHUB_TOKEN=" + secret}
			helper.Dir = "/"
			if os.Geteuid() == 0 {
				helper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID, Groups: []uint32{}}}
			}
			b, err := helper.CombinedOutput()
			out := string(b)
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			read := strings.Contains(out, secret)
			listed := strings.Contains(out, "fds: 0")
			switch {
			case mode == "plain" && (!read || !listed):
				t.Fatalf("the control read nothing of its planex, so the test shows nothing:\n%s", out)
			case mode == "hidden" && (read || listed):
				t.Errorf("the command read its non-dumpable planex's environment or descriptors:\n%s", out)
			}
		})
	}
}

// helperBinary is a copy of the test binary an ordinary user may run
// (go test's own folder is root's alone).
func helperBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "planex-undumpable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	exe := filepath.Join(dir, "proc.test")
	dst, err := os.OpenFile(exe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestUndumpableHelper is the planex of
// TestRedTeamUncontainedCommandReadsNoPlanexEnviron: it runs the
// attacking command under its reaper, as planex runs a step without the
// sandbox.
func TestUndumpableHelper(t *testing.T) {
	mode := os.Getenv("PLANEX_UNDUMPABLE_HELPER")
	if mode == "" {
		t.Skip("a helper process of TestRedTeamUncontainedCommandReadsNoPlanexEnviron")
	}
	if mode == "hidden" {
		if err := HideFromSameUser(); err != nil {
			t.Fatal(err)
		}
	}
	// The command's parent is the reaper, whose parent is planex.
	cmd := exec.Command("sh", "-c", `pp=$(awk '/^PPid:/{print $2}' /proc/$PPID/status)
printf 'environ: '; tr '\0' ' ' < /proc/$pp/environ 2>&1; echo
printf 'fds: '; ls /proc/$pp/fd 2>&1 | tr '\n' ' '; echo`)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := runOutput(cmd)
	fmt.Print(out)
	if err != nil {
		t.Fatal(err)
	}
}
