//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const keyringSecret = "keyring-secret-9321"

// TestSessionKeyringOutOfReach: planex's session keyring (where Kerberos
// tickets, AFS tokens and other credentials of the user's login live) is
// inherited by every process it starts, and a process possesses the keys
// of its session keyring whatever its uid. The program searches its
// session keyring for a key planex's session holds and reads it: it
// finds nothing.
func TestSessionKeyringOutOfReach(t *testing.T) {
	s := newSandbox(t)
	runtime.LockOSThread() // a session keyring is per thread until exec
	defer runtime.UnlockOSThread()
	if _, err := unix.KeyctlJoinSessionKeyring("planex-redteam"); err != nil {
		t.Skipf("no session keyring can be made here: %v", err)
	}
	id, err := unix.AddKey("user", "planex-redteam-key", []byte(keyringSecret), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Fatalf("adding a key: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
	// The key as planex's own children see it, without the sandbox.
	if got := readSessionKey(); got != keyringSecret {
		t.Fatalf("the test's own thread cannot read its key back: %q", got)
	}
	p := Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}
	out, err := run(t, s, p, "/", []string{"PLANEX_KEYRING_PROBE=1"}, os.Args[0]+` -test.run=^TestKeyringProbeHelper$`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, keyringSecret) {
		t.Errorf("the program read a key of planex's session keyring:\n%s", out)
	}
	if !strings.Contains(out, "probe:") {
		t.Errorf("the probe did not run:\n%s", out)
	}
}

// readSessionKey finds the test's key in the session keyring and reads
// it, or says why it could not.
func readSessionKey() string {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", "planex-redteam-key", 0)
	if err != nil {
		return "search: " + err.Error()
	}
	buf := make([]byte, 256)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		return "read: " + err.Error()
	}
	return string(buf[:min(n, len(buf))])
}

// TestKeyringProbeHelper is the program of TestSessionKeyringOutOfReach.
func TestKeyringProbeHelper(t *testing.T) {
	if os.Getenv("PLANEX_KEYRING_PROBE") == "" {
		t.Skip("the probe of TestSessionKeyringOutOfReach")
	}
	keys, _ := os.ReadFile("/proc/keys")
	fmt.Printf("probe: %s\n%s\n", readSessionKey(), keys)
}
