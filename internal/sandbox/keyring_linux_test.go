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
	runKeyringProbe(t, s, "1", "probe:", "planex's session keyring")
}

// runKeyringProbe runs TestKeyringProbeHelper in the sandbox with
// PLANEX_KEYRING_PROBE set to mode and checks that it ran (its output
// holds ran) and printed no key of whose (the keyring the test filled).
func runKeyringProbe(t *testing.T, s *Sandbox, mode, ran, whose string) {
	t.Helper()
	p := Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}
	out, err := run(t, s, p, "/", []string{"PLANEX_KEYRING_PROBE=" + mode}, os.Args[0]+` -test.run=^TestKeyringProbeHelper$`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, keyringSecret) {
		t.Errorf("the program read a key of %s:\n%s", whose, out)
	}
	if !strings.Contains(out, ran) {
		t.Errorf("the probe did not run:\n%s", out)
	}
}

// readSessionKey finds the test's key in the session keyring and reads
// it, or says why it could not.
func readSessionKey() string {
	return readKeyIn(unix.KEY_SPEC_SESSION_KEYRING, "planex-redteam-key")
}

// TestUserKeyringsOutOfReach: the keys a user keeps in the keyrings of
// their uid rather than a session (the user keyring, where fscrypt and
// eCryptfs keep file system keys and systemd caches passwords; the
// persistent keyring, where Kerberos keeps KEYRING:persistent tickets)
// are reached by any process of that uid by asking for its own. The
// program, of planex's uid when planex is not root, asks for both and
// reads what it finds: the key planex's user holds is not among it (the
// kernel keeps those keyrings per user namespace).
func TestUserKeyringsOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	plantUserKey(t, "planex-redteam-user", "planex-redteam-user-key")
	if got := readKeyIn(unix.KEY_SPEC_USER_KEYRING, "planex-redteam-user-key"); got != keyringSecret {
		t.Fatalf("the test cannot read its own key back: %q", got)
	}
	persistent, perr := unix.KeyctlInt(unix.KEYCTL_GET_PERSISTENT, -1, unix.KEY_SPEC_USER_KEYRING, 0, 0)
	if perr == nil {
		pid, err := unix.AddKey("user", "planex-redteam-persistent-key", []byte(keyringSecret), persistent)
		if err != nil {
			t.Fatalf("adding a key to the persistent keyring: %v", err)
		}
		if _, err := unix.KeyctlInt(unix.KEYCTL_SETPERM, pid, userCanRead, 0, 0); err != nil {
			t.Fatal(err)
		}
		defer unix.KeyctlInt(unix.KEYCTL_UNLINK, pid, persistent, 0, 0)
	} else {
		t.Logf("no persistent keyring here (%v): that row shows nothing", perr)
	}
	runKeyringProbe(t, s, "user", "probe: user:", "planex's user")
}

// readKeyIn finds the key named desc in keyring (and what it links) and
// reads it, or says why it could not.
func readKeyIn(keyring int, desc string) string {
	id, err := unix.KeyctlSearch(keyring, "user", desc, 0)
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

// TestKeyringProbeHelper is the program of TestSessionKeyringOutOfReach
// and TestUserKeyringsOutOfReach.
func TestKeyringProbeHelper(t *testing.T) {
	switch os.Getenv("PLANEX_KEYRING_PROBE") {
	case "":
		t.Skip("the probe of TestSessionKeyringOutOfReach and TestUserKeyringsOutOfReach")
	case "byid":
		fmt.Printf("probe: byid: %s\n", readKeysByID())
		return
	case "user":
		persistent := "no persistent keyring"
		if id, err := unix.KeyctlInt(unix.KEYCTL_GET_PERSISTENT, -1, unix.KEY_SPEC_USER_KEYRING, 0, 0); err == nil {
			persistent = readKeyIn(id, "planex-redteam-persistent-key")
		}
		fmt.Printf("probe: user: %s; persistent: %s; session-linked: %s\n",
			readKeyIn(unix.KEY_SPEC_USER_KEYRING, "planex-redteam-user-key"), persistent,
			readKeyIn(unix.KEY_SPEC_USER_SESSION_KEYRING, "planex-redteam-user-key"))
		return
	}
	keys, _ := os.ReadFile("/proc/keys")
	fmt.Printf("probe: %s\n%s\n", readSessionKey(), keys)
}

// TestUserKeysReadByID: a key is reached by its serial number as well
// as by a search, and /proc/keys lists the serial of every key of a uid
// the reader's user namespace maps, with the permission to view it (a
// user key's default). When planex runs as an ordinary user, the
// program has planex's uid, so it found the keys of planex's user there
// (in the keyrings of the user's login, outside its namespace) and read
// each whose permissions let the user read it (a Kerberos ticket cache,
// a key a tool stored for its user) by the number listed. The test
// keeps such a key in its user keyring and has the program read every
// key /proc/keys lists, and this one by its number (which a program
// could otherwise find by trying numbers).
func TestUserKeysReadByID(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	id := plantUserKey(t, "planex-redteam-byid", "planex-redteam-byid-key")
	p := Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}
	out, err := run(t, s, p, "/", []string{"PLANEX_KEYRING_PROBE=byid", fmt.Sprintf("PLANEX_KEYRING_ID=%d", id)}, os.Args[0]+` -test.run=^TestKeyringProbeHelper$`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, keyringSecret) {
		t.Errorf("the program read a key of planex's user by its number:\n%s", out)
	}
	if !strings.Contains(out, "probe: byid:") {
		t.Errorf("the probe did not run:\n%s", out)
	}
}

// readKeysByID reads the key numbered PLANEX_KEYRING_ID and each key
// /proc/keys lists, and says what it got.
func readKeysByID() string {
	ids := []string{os.Getenv("PLANEX_KEYRING_ID")}
	if b, err := os.ReadFile("/proc/keys"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				ids = append(ids, f[0])
			}
		}
	}
	var got []string
	for _, s := range ids {
		var id int
		if _, err := fmt.Sscanf(s, "%x", &id); err != nil {
			continue
		}
		if s == os.Getenv("PLANEX_KEYRING_ID") {
			fmt.Sscanf(s, "%d", &id)
		}
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err != nil {
			got = append(got, s+": "+err.Error())
			continue
		}
		got = append(got, s+": "+string(buf[:min(n, len(buf))]))
	}
	return strings.Join(got, "; ")
}

// userCanRead is a key's permission mask that lets its uid (and whoever
// possesses it) read it.
const userCanRead = 0x3f3f0000

// plantUserKey puts a key holding keyringSecret into the user keyring,
// readable by its uid (not only by who possesses it), and returns its
// id. The test possesses it, to set its permissions, through a session
// keyring of its own linking the user keyring, as a login does: the
// session keyring is the thread's until exec, so the test stays on its
// thread. It skips where no keyring can be made.
func plantUserKey(t *testing.T, session, name string) int {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if _, err := unix.KeyctlJoinSessionKeyring(session); err != nil {
		t.Skipf("no session keyring can be made here: %v", err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_LINK, unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_SESSION_KEYRING, 0, 0); err != nil {
		t.Fatalf("linking the user keyring: %v", err)
	}
	id, err := unix.AddKey("user", name, []byte(keyringSecret), unix.KEY_SPEC_USER_KEYRING)
	if err != nil {
		t.Skipf("no user keyring here: %v", err)
	}
	t.Cleanup(func() { unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_USER_KEYRING, 0, 0) })
	if _, err := unix.KeyctlInt(unix.KEYCTL_SETPERM, id, userCanRead, 0, 0); err != nil {
		t.Fatal(err)
	}
	return id
}
