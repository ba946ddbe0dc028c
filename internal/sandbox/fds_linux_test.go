//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInheritedDescriptorDoesNotReachTheProgram: planex's caller had a
// secret file open as fd 7 (not close-on-exec); a contained program tries
// to read it through /proc/self/fd/7 and lists what it holds.
func TestInheritedDescriptorDoesNotReachTheProgram(t *testing.T) {
	t.Parallel()
	newSandbox(t)
	const secret = "fd7-sandbox-secret-4711"
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	helper := exec.Command(os.Args[0], "-test.run=^TestSandboxFDHelper$")
	helper.Env = append(os.Environ(), "PLANEX_SANDBOX_FD_HELPER=1")
	helper.ExtraFiles = []*os.File{nil, nil, nil, nil, f}
	out, err := helper.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "helper holds fd 7: "+secret) {
		t.Fatalf("the helper did not get fd 7, so the test shows nothing:\n%s", out)
	}
	if strings.Contains(string(out), "program read: "+secret) {
		t.Errorf("the contained program read the inherited descriptor:\n%s", out)
	}
	if !strings.Contains(string(out), "program fds: 0 1 2 \n") {
		t.Errorf("the contained program has descriptors other than 0, 1 and 2:\n%s", out)
	}
}

// TestSandboxFDHelper is the planex of
// TestInheritedDescriptorDoesNotReachTheProgram.
func TestSandboxFDHelper(t *testing.T) {
	if os.Getenv("PLANEX_SANDBOX_FD_HELPER") == "" {
		t.Skip("a helper process of TestInheritedDescriptorDoesNotReachTheProgram")
	}
	b, err := os.ReadFile("/proc/self/fd/7")
	fmt.Printf("helper holds fd 7: %s (%v)\n", b, err)
	s, err := New(context.Background(), ModeOn)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")},
		`printf 'program read: '; cat /proc/self/fd/7 2>&1; echo; printf 'program fds: '; for f in /proc/self/fd/*; do n=${f##*/}; [ -e "$f" ] && printf '%s ' "$n"; done; echo`)
	fmt.Print(out)
	if err != nil {
		t.Fatal(err)
	}
}

// TestRootsGroupsDoNotReachTheProgram: planex runs as root with
// supplementary groups (a CI image's root in docker or adm, say); the
// contained program lists its groups and reads a file only that group
// may read. It holds no group, so the file stays closed (a non-root
// planex cannot drop its groups: docs/security.md says so).
func TestRootsGroupsDoNotReachTheProgram(t *testing.T) {
	t.Parallel()
	needRoot(t)
	newSandbox(t)
	const secret = "group-only-secret-4711"
	dir, err := os.MkdirTemp("/srv", "planex-groups-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp, which the sandbox replaces: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "group-secret")
	if err := os.WriteFile(file, []byte(secret), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(file, 4242, 4343); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestSandboxGroupsHelper$")
	helper.Env = append(os.Environ(), "PLANEX_SANDBOX_GROUPS_HELPER="+file)
	helper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{4343, 27}}}
	out, err := helper.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "helper groups: 27 4343\n") {
		t.Fatalf("the helper did not hold the groups, so the test shows nothing:\n%s", out)
	}
	if strings.Contains(string(out), secret) {
		t.Errorf("the contained program read a file of planex's group:\n%s", out)
	}
	if !strings.Contains(string(out), "program groups:\n") {
		t.Errorf("the contained program holds groups:\n%s", out)
	}
}

// TestSandboxGroupsHelper is the planex of
// TestRootsGroupsDoNotReachTheProgram.
func TestSandboxGroupsHelper(t *testing.T) {
	file := os.Getenv("PLANEX_SANDBOX_GROUPS_HELPER")
	if file == "" {
		t.Skip("a helper process of TestRootsGroupsDoNotReachTheProgram")
	}
	groups, _ := os.Getgroups()
	fmt.Printf("helper groups: %s\n", strings.Trim(fmt.Sprint(groups), "[]"))
	s, err := New(context.Background(), ModeOn)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(file)}}, "/", []string{"PATH=" + os.Getenv("PATH")},
		`printf 'program groups:'; sed -n 's/^Groups:[[:space:]]*//p' /proc/self/status; cat `+file+` 2>&1; echo`)
	fmt.Print(out)
	if err != nil {
		t.Fatal(err)
	}
}
