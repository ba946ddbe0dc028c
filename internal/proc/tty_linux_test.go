package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// ttyScript is the malicious command of
// TestRedTeamUncontainedCommandHasNoTerminal: it opens the controlling
// terminal and pushes a command line into its input with TIOCSTI, which
// the user's shell runs once planex exits (where the kernel still allows
// TIOCSTI: dev.tty.legacy_tiocsti, 1 on many machines), or could write
// escape sequences to it past planex's output filter. It also tries
// TIOCSTI on its standard streams: a process with CAP_SYS_ADMIN (planex
// run as root) may push into any terminal it holds a descriptor of,
// controlling or not, so none of them may be planex's terminal.
const ttyScript = `(exec 3<>/dev/tty) 2>/dev/null && echo TTY-OPENED
python3 -c 'import fcntl, os, termios
fd = os.open("/dev/tty", os.O_RDWR)
for c in b"echo pwned\n":
    fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
print("TIOCSTI-OK")' 2>/dev/null
python3 -c 'import fcntl, termios
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        print("FD-TIOCSTI-OK", fd)
    except OSError:
        pass' 2>/dev/null
echo done`

// TestRedTeamUncontainedCommandHasNoTerminal: planex runs in the user's
// terminal without the sandbox (--sandbox off, or auto on a machine
// without user namespaces, as an Ubuntu 24.04 desktop is by default).
// The command it runs for a step tries to open that terminal and push a
// command line into it. It runs in a session of its own, with no
// controlling terminal: /dev/tty opens nothing. Before, it ran in its
// own process group but planex's session, and did both.
func TestRedTeamUncontainedCommandHasNoTerminal(t *testing.T) {
	t.Parallel()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to stand for the user's: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	go io.Copy(io.Discard, ptmx)
	// The helper stands in for planex started from the user's shell: the
	// terminal is its controlling terminal.
	helper := exec.Command(os.Args[0], "-test.run=^TestTerminalHelper$")
	helper.Env = append(os.Environ(), "PLANEX_TTY_HELPER=1")
	helper.Stdin = pts
	var out strings.Builder
	helper.Stdout, helper.Stderr = &out, &out
	helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := helper.Run(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "helper has a terminal") {
		t.Fatalf("the helper had no controlling terminal, so the test shows nothing:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "done") {
		t.Fatalf("the command did not run:\n%s", out.String())
	}
	for _, bad := range []string{"TTY-OPENED", "TIOCSTI-OK", "FD-TIOCSTI-OK"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("the command reached planex's terminal (%s):\n%s", bad, out.String())
		}
	}
}

// TestTerminalHelper is the planex of
// TestRedTeamUncontainedCommandHasNoTerminal.
func TestTerminalHelper(t *testing.T) {
	if os.Getenv("PLANEX_TTY_HELPER") == "" {
		t.Skip("a helper process of TestRedTeamUncontainedCommandHasNoTerminal")
	}
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		fmt.Println("helper has a terminal")
		f.Close()
	}
	out, err := runOutput(exec.Command("sh", "-c", ttyScript))
	fmt.Print(out)
	if err != nil {
		t.Fatal(err)
	}
}
