//go:build linux

package sandbox

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamFileHandleFromOwnNamespaces: since Linux 6.12 a process
// that holds CAP_DAC_READ_SEARCH in its own user namespace may open a
// directory by its file handle (open_by_handle_at) when it is root of
// the mount namespace of the mount it names, and the mount has no locked
// mount below: what unshare -Urm gives any program. The program is given
// the handle of a folder the sandbox hides (planex's host-side temporary
// folder; a handle is a few bytes that name the inode, which a program
// may forge or learn), makes user and mount namespaces of its own, binds
// the folder it may write to a place of its own (a bind it made, with
// nothing locked below), and opens the handle through that bind, through
// the writable folder itself and through its root. None opens: the
// kernel decodes a handle only within the mount it is given (ESTALE
// through the binds) and refuses a mount with locked mounts below it,
// the sandbox's root (EPERM), so a view's hidden places stay out of
// reach. This held before the test was written. (The mount is named by
// a descriptor opened for reading: the kernel answers EBADF to one
// opened with O_PATH, before it looks at the handle at all.)
func TestRedTeamFileHandleFromOwnNamespaces(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("util-linux's unshare is not installed: no namespaces of the program's own")
	}
	hidden := t.TempDir()
	if err := os.WriteFile(filepath.Join(hidden, "token"), []byte("planex-secret-token"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, hidden, 0)
	if err != nil {
		t.Skipf("this file system gives no file handles: %v", err)
	}
	handle := fmt.Sprintf("%d:%s", h.Type(), hex.EncodeToString(h.Bytes()))
	writable := t.TempDir()
	s := newSandbox(t)
	helper := os.Args[0] + " -test.run=^TestMachineCountsProbeHelper$"
	script := "unshare -Urm sh -c 'mkdir -p /tmp/own && mount --bind " + writable + " /tmp/own && " + helper + "'"
	out, err := run(t, s, Policy{Writable: []string{writable}, ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/",
		[]string{"PATH=" + os.Getenv("PATH"), "PLANEX_COUNTS_PROBE=fhandle:" + handle + ":" + writable}, script)
	if !strings.Contains(out, "fhandle probed") {
		t.Fatalf("the probe did not run (%v):\n%s", err, out)
	}
	if strings.Contains(out, "REACHED") {
		t.Errorf("a contained program opened a hidden folder by its file handle:\n%s", out)
	}
}

// openByHandle is the file handle probe: what is "TYPE:HEX:WRITABLE",
// the handle of a hidden folder and the folder the program may write. It
// tries the handle through its own bind (/tmp/own), the writable folder
// and the root, printing REACHED and what it read for each that opens.
func openByHandle(what string) {
	typ, rest, _ := strings.Cut(what, ":")
	hexHandle, writable, _ := strings.Cut(rest, ":")
	b, err := hex.DecodeString(hexHandle)
	var ht int32
	if _, serr := fmt.Sscan(typ, &ht); err != nil || serr != nil {
		fmt.Printf("bad handle %q\n", what)
		return
	}
	h := unix.NewFileHandle(ht, b)
	for _, mnt := range []string{"/tmp/own", writable, "/"} {
		mfd, err := unix.Open(mnt, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Printf("%s: %v\n", mnt, err)
			continue
		}
		fd, err := unix.OpenByHandleAt(mfd, h, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
		unix.Close(mfd)
		if err != nil {
			fmt.Printf("%s: %v\n", mnt, err)
			continue
		}
		data := make([]byte, 64)
		if tf, err := unix.Openat(fd, "token", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			n, _ := unix.Read(tf, data)
			data = data[:max(n, 0)]
			unix.Close(tf)
		}
		fmt.Printf("REACHED the hidden folder through %s: %q\n", mnt, data)
		unix.Close(fd)
	}
	fmt.Println("fhandle probed")
}
