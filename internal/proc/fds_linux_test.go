package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInheritedDescriptorDoesNotReachTheCommand: planex's caller had a
// secret file open as fd 7 (not close-on-exec, as a shell's `7<file`
// leaves it); a command planex runs without the sandbox tries to read it
// through /proc/self/fd/7 and to list it.
func TestInheritedDescriptorDoesNotReachTheCommand(t *testing.T) {
	t.Parallel()
	// reaper: Run's reaper closes it; direct: CloseInherited, as planex
	// calls it when it starts, closes it for a plain exec too.
	for _, mode := range []string{"reaper", "direct"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			inheritedDescriptor(t, mode)
		})
	}
}

func inheritedDescriptor(t *testing.T, mode string) {
	const secret = "fd7-secret-4711"
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The helper stands in for planex: it starts with the file as fd 7.
	helper := exec.Command(os.Args[0], "-test.run=^TestFDHelper$")
	helper.Env = append(os.Environ(), "PLANEX_FD_HELPER="+mode)
	helper.ExtraFiles = []*os.File{nil, nil, nil, nil, f}
	out, err := helper.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "helper holds fd 7: "+secret) {
		t.Fatalf("the helper did not get fd 7, so the test shows nothing:\n%s", out)
	}
	if strings.Contains(string(out), "command read: "+secret) {
		t.Errorf("the command reached the inherited descriptor:\n%s", out)
	}
	if !strings.Contains(string(out), "command fds: 0 1 2 \n") {
		t.Errorf("the command has descriptors other than 0, 1 and 2:\n%s", out)
	}
}

// TestFDHelper is the planex of TestInheritedDescriptorDoesNotReachTheCommand.
func TestFDHelper(t *testing.T) {
	if os.Getenv("PLANEX_FD_HELPER") == "" {
		t.Skip("a helper process of TestInheritedDescriptorDoesNotReachTheCommand")
	}
	b, err := os.ReadFile("/proc/self/fd/7")
	fmt.Printf("helper holds fd 7: %s (%v)\n", b, err)
	// ls's own descriptor for the directory is the last one it lists.
	cmd := exec.Command("sh", "-c", `printf 'command read: '; cat /proc/self/fd/7 2>&1; echo; printf 'command fds: '; for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -le 2 ] && printf '%s ' "$n"; [ "$n" -gt 2 ] && [ -e "$f" ] && [ "$(readlink "$f")" != "/proc/$$/fd" ] && printf '%s ' "$n"; done; echo`)
	var out string
	if os.Getenv("PLANEX_FD_HELPER") == "direct" {
		if err := CloseInherited(); err != nil {
			t.Fatal(err)
		}
		b, err := cmd.CombinedOutput()
		out = string(b)
		if err != nil {
			t.Fatal(err)
		}
	} else {
		out, err = runOutput(cmd)
	}
	fmt.Print(out)
	if err != nil {
		t.Fatal(err)
	}
}

func runOutput(cmd *exec.Cmd) (string, error) {
	var b strings.Builder
	cmd.Stdout = &b
	cmd.Stderr = &b
	err := Run(context.Background(), cmd)
	return b.String(), err
}
