//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// view is what a thread that entered a built root found there.
type view struct {
	cwd        string
	dev        []string
	devNull    bool // /dev/null is a character device
	tmp        []string
	hidden     []string
	hiddenErr  error // writing into the hidden folder
	masked     string
	maskedDir  []string
	roRead     string
	roWrite    error
	rootWrite  error
	wrote      error // writing into the writable folder
	procSelf   bool
	hostMarker error
	runLink    string // a link at the top of the host's /run, read inside
	runDir     error  // a folder of the host's /run, looked at inside
}

// TestBuildRoot: the init's file system view, built in this process: the
// host's files read-only, a fresh /tmp without the host's files, hidden
// folders empty and sealed, masked files empty, a masked folder under a
// read-only bind still covered (masks come last), the writable folder
// writable and its writes seen outside, a /dev of the few devices, a
// /proc, and the root the thread's own, leaving the host's mounts alone.
func TestBuildRoot(t *testing.T) {
	needHostRoot(t)
	// Not parallel: see inThread (a thread it ends SIGKILLs what was started from it).
	base := visibleDir(t)
	mk := func(parts ...string) string {
		p := filepath.Join(append([]string{base}, parts...)...)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(p, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, ro, hidden := mk("work"), mk("repo"), mk("home")
	mk("repo", "planex")
	write(filepath.Join(ro, "README"), "readable\n")
	write(filepath.Join(ro, "planex", "key"), "session key\n")
	write(filepath.Join(hidden, ".netrc"), "machine github.com password p\n")
	sock := filepath.Join(base, "agent.sock")
	write(sock, "a socket stands here\n")
	marker, err := os.CreateTemp("", "planex-host-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	marker.Close()
	t.Cleanup(func() { os.Remove(marker.Name()) })
	root, err := os.MkdirTemp("", "planex-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(root) })
	// /run is the step's own (empty) with the network contained, but for
	// the links at its top, kept; a folder there is not.
	runLink := filepath.Join("/run", "planex-test-link-"+filepath.Base(root))
	if err := os.Symlink(ro, runLink); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(runLink) })
	runDir, err := os.MkdirTemp("/run", "planex-test-dir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runDir) })

	c := config{Root: root, Writable: []string{w}, ReadOnly: []string{ro}, Hide: []string{hidden, filepath.Join(base, "absent")},
		Mask: []string{sock, filepath.Join(ro, "planex"), filepath.Join(base, "absent.sock")}, Net: netConfig{Contained: true}}
	var v view
	err = inThread(t, unix.CLONE_NEWNS, func() error {
		if err := buildRoot(c); err != nil {
			return err
		}
		v.cwd, _ = os.Getwd()
		v.dev = names("/dev")
		if fi, err := os.Stat("/dev/null"); err == nil {
			v.devNull = fi.Mode()&os.ModeCharDevice != 0
		}
		v.tmp = names("/tmp")
		v.hidden = names(hidden)
		v.hiddenErr = os.WriteFile(filepath.Join(hidden, "planted"), nil, 0o644)
		b, _ := os.ReadFile(sock)
		v.masked = string(b)
		v.maskedDir = names(filepath.Join(ro, "planex"))
		b, _ = os.ReadFile(filepath.Join(ro, "README"))
		v.roRead = string(b)
		v.roWrite = os.WriteFile(filepath.Join(ro, "planted"), nil, 0o644)
		v.rootWrite = os.WriteFile("/etc/planex-planted", nil, 0o644)
		v.wrote = os.WriteFile(filepath.Join(w, "out.txt"), []byte("from inside\n"), 0o644)
		_, err := os.Stat("/proc/self/status")
		v.procSelf = err == nil
		_, v.hostMarker = os.Stat(marker.Name())
		v.runLink, _ = os.Readlink(runLink)
		_, v.runDir = os.Lstat(runDir)
		return nil
	})
	if err != nil {
		t.Fatalf("buildRoot: %v", err)
	}
	if v.cwd != "/" {
		t.Errorf("the thread is in %q after entering its root, want /", v.cwd)
	}
	if got, want := strings.Join(v.dev, " "), strings.Join(DevEntries(), " "); got != want || !v.devNull {
		t.Errorf("/dev holds %q (null a device: %v), want %q", got, v.devNull, want)
	}
	if !errors.Is(v.hostMarker, os.ErrNotExist) {
		t.Errorf("the host's /tmp shows through (%v); /tmp holds %v", v.hostMarker, v.tmp)
	}
	if len(v.hidden) != 0 || !errors.Is(v.hiddenErr, unix.EROFS) {
		t.Errorf("the hidden folder holds %v and writing there gave %v; want it empty and read-only", v.hidden, v.hiddenErr)
	}
	if v.masked != "" || len(v.maskedDir) != 0 {
		t.Errorf("masked: the socket reads %q and the folder under the read-only bind holds %v; want both empty", v.masked, v.maskedDir)
	}
	if v.roRead != "readable\n" || !errors.Is(v.roWrite, unix.EROFS) || !errors.Is(v.rootWrite, unix.EROFS) {
		t.Errorf("read-only: read %q, write %v, write to /etc %v", v.roRead, v.roWrite, v.rootWrite)
	}
	if v.wrote != nil || !v.procSelf {
		t.Errorf("writing the writable folder: %v; /proc mounted: %v", v.wrote, v.procSelf)
	}
	if v.runLink != ro || !errors.Is(v.runDir, os.ErrNotExist) {
		t.Errorf("/run: the link at its top reads %q (want %q), its folder %s gave %v (want none)", v.runLink, ro, runDir, v.runDir)
	}
	if b, err := os.ReadFile(filepath.Join(w, "out.txt")); err != nil || string(b) != "from inside\n" {
		t.Errorf("the write inside is not seen outside: %q, %v", b, err)
	}
	for _, p := range []string{filepath.Join(ro, "planted"), "/etc/planex-planted", filepath.Join(hidden, "planted")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists on the host: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ro, "planex", "key")); string(b) != "session key\n" {
		t.Errorf("the masked file changed on the host: %q", b)
	}
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), root) {
		t.Errorf("the built root's mounts reached the host's mount namespace:\n%s", mi)
	}
}

// names lists a folder's entries, sorted (nil when it cannot be read).
func names(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestBuildRootErrors: each step of building the view fails with an
// error naming the step and the path, and the init gives up there.
func TestBuildRootErrors(t *testing.T) {
	needHostRoot(t)
	// Not parallel: see inThread (a thread it ends SIGKILLs what was started from it).
	missing := "/nonexistent-planex-" + fmt.Sprint(time.Now().UnixNano())
	tests := []struct {
		name string
		fn   func(r string) error
		want string
	}{
		{"read-only folder missing", func(r string) error { return bindReadOnly(r, []string{missing}) }, "binding read-only " + missing + ": "},
		{"writable folder missing", func(r string) error { return bindWritable(r, []string{missing}) }, "binding writable " + missing + ": "},
		{"read-only folder not creatable", func(r string) error {
			os.WriteFile(filepath.Join(r, "file"), nil, 0o644)
			return bindReadOnly(r, []string{"/file/sub"})
		}, "preparing read-only /file/sub: "},
		{"writable folder not creatable", func(r string) error {
			os.WriteFile(filepath.Join(r, "file"), nil, 0o644)
			return bindWritable(r, []string{"/file/sub"})
		}, "preparing writable /file/sub: "},
		{"tmpfs on nothing", func(r string) error { return tmpfs(filepath.Join(r, "none"), "0755", 0) }, "mounting an empty "},
		{"root without /proc", func(r string) error { return enterRoot(r) }, "mounting /proc: "},
		{"dev without a /dev", func(r string) error { return minimalDev(r) }, "mounting an empty " + "/"},
		{"a whole build on a missing root", func(r string) error { return buildRoot(config{Root: filepath.Join(r, "none")}) }, "binding the file system: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := t.TempDir()
			err := inThread(t, unix.CLONE_NEWNS, func() error {
				// Private first, as the init's first step makes them, so
				// that nothing mounted here propagates to the host.
				if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
					return fmt.Errorf("setup: %w", err)
				}
				return tc.fn(r)
			})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want one starting %q", err, tc.want)
			}
		})
	}
}

// TestMaskKinds: a masked folder gets an empty cover to seal, a file
// /dev/null, a dangling link and a missing path nothing.
func TestMaskKinds(t *testing.T) {
	needHostRoot(t)
	// Not parallel: see inThread (a thread it ends SIGKILLs what was started from it).
	r := t.TempDir()
	dir, file, link := filepath.Join(r, "d"), filepath.Join(r, "f"), filepath.Join(r, "l")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("s"), 0o644)
	os.WriteFile(file, []byte("secret"), 0o644)
	os.Symlink(filepath.Join(r, "gone"), link)
	type got struct {
		sealed           []bool
		dirNames         []string
		fileText, linkTo string
	}
	var g got
	err := inThread(t, unix.CLONE_NEWNS, func() error {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return err
		}
		for _, p := range []string{dir, file, link, filepath.Join(r, "missing")} {
			s, err := mask(p)
			if err != nil {
				return err
			}
			g.sealed = append(g.sealed, s)
		}
		g.dirNames = names(dir)
		b, _ := os.ReadFile(file)
		g.fileText = string(b)
		g.linkTo, _ = os.Readlink(link)
		sealed, err := maskPlaces("/", []string{dir, file})
		if err != nil || len(sealed) != 1 || sealed[0] != dir {
			return fmt.Errorf("maskPlaces = %v, %v; want only the folder to seal", sealed, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(g.sealed) != "[true false false false]" || len(g.dirNames) != 0 || g.fileText != "" || g.linkTo != filepath.Join(r, "gone") {
		t.Errorf("masked: sealed %v, folder %v, file %q, link %q", g.sealed, g.dirNames, g.fileText, g.linkTo)
	}
	if b, _ := os.ReadFile(file); string(b) != "secret" {
		t.Errorf("masking changed the host's file: %q", b)
	}
}

// TestStartNetwork: in a network namespace of its own, loopback comes up
// (a new namespace's is down, and nothing connects over it), a forwarded
// port that is taken is an error naming it, and an open network needs
// nothing.
func TestStartNetwork(t *testing.T) {
	needHostRoot(t)
	// Not parallel: see inThread (a thread it ends SIGKILLs what was started from it).
	if err := startNetwork(netConfig{}); err != nil {
		t.Errorf("an open network: %v", err)
	}
	var before, after net.Flags
	var dialBefore, dialAfter error
	err := inThread(t, unix.CLONE_NEWNET, func() error {
		lo, err := net.InterfaceByName("lo")
		if err != nil {
			return err
		}
		before = lo.Flags
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		dial := func() error {
			c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
			if err == nil {
				c.Close()
			}
			return err
		}
		dialBefore = dial()
		if err := startNetwork(netConfig{Contained: true}); err != nil {
			return err
		}
		if lo, err = net.InterfaceByName("lo"); err != nil {
			return err
		}
		after = lo.Flags
		dialAfter = dial()
		port := ln.Addr().(*net.TCPAddr).Port
		err = startNetwork(netConfig{Contained: true, Forward: []Forward{{Port: port, Socket: "/nonexistent.sock"}}})
		if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("listening on forwarded port %d: ", port)) {
			return fmt.Errorf("a taken port gave %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if before&net.FlagUp != 0 || after&net.FlagUp == 0 {
		t.Errorf("loopback flags before %v, after %v; want down, then up", before, after)
	}
	if dialBefore == nil || dialAfter != nil {
		t.Errorf("connecting over loopback: before %v, after %v; want a failure, then success", dialBefore, dialAfter)
	}
}

// TestRelay: a forwarded connection carries bytes both ways, passes on
// each side's end of writing (a request read to its end still gets its
// answer), and one whose socket is not there is closed at once; closing
// the listener ends the relay.
func TestRelay(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "svc.sock")
	svc, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	go func() {
		for {
			c, err := svc.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, _ := io.ReadAll(c) // to the client's end of writing
				fmt.Fprintf(c, "got %d bytes: %s", len(req), strings.ToUpper(string(req)))
			}()
		}
	}()
	for _, target := range []string{sock, sock + ".gone"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ended := make(chan struct{})
		go func() { relayAll(ln, target); close(ended) }()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprint(c, "ping\nping")
		c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(bufio.NewReader(c))
		c.Close()
		want := "got 9 bytes: PING\nPING"
		if target != sock {
			want = "" // closed without an answer
			if errors.Is(err, syscall.ECONNRESET) {
				err = nil // closed before it read the request: the kernel resets
			}
		}
		if err != nil || string(got) != want {
			t.Errorf("through %s: %q, %v; want %q", filepath.Base(target), got, err, want)
		}
		ln.Close()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Error("the relay outlived its listener")
		}
	}
}

// TestLeaveSessionKeyring: a key in the caller's session keyring is out
// of reach once the thread left it for a new, empty one.
func TestLeaveSessionKeyring(t *testing.T) {
	// Not parallel: see inThread (a thread it ends SIGKILLs what was started from it).
	var before, after string
	err := inThread(t, 0, func() error {
		// A session keyring of this thread's own, so that nothing of the
		// test process's (or its login's) is touched.
		if _, err := unix.KeyctlJoinSessionKeyring("planex-leave-test"); err != nil {
			return fmt.Errorf("%w: %v", errNoKeyring, err)
		}
		if _, err := unix.AddKey("user", "planex-leave-key", []byte("kerberos ticket"), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			return fmt.Errorf("%w: %v", errNoKeyring, err)
		}
		before = readKey("planex-leave-key")
		if err := leaveSessionKeyring(); err != nil {
			return err
		}
		after = readKey("planex-leave-key")
		return nil
	})
	if errors.Is(err, errNoKeyring) {
		t.Skipf("no keyrings here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if before != "kerberos ticket" || !strings.HasPrefix(after, "search: ") {
		t.Errorf("the key read %q before and %q after leaving the keyring; want it found, then not", before, after)
	}
}

var errNoKeyring = errors.New("keyrings unavailable")

func readKey(desc string) string {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", desc, 0)
	if err != nil {
		return "search: " + err.Error()
	}
	buf := make([]byte, 64)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		return "read: " + err.Error()
	}
	return string(buf[:min(n, len(buf))])
}

// TestInitAndLimitsRefuseBadConfiguration: the init and the limit setter
// read their configuration from planex; one they cannot read stops them
// with the setup status and a message, before anything is built or run.
func TestInitAndLimitsRefuseBadConfiguration(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	if code := limitsMain(&stderr, "{not json", "/bin/true", []string{"true"}); code != exitSetup ||
		!strings.HasPrefix(stderr.String(), "planex sandbox: reading the limits: ") {
		t.Errorf("limitsMain = %d, %q", code, stderr.String())
	}
	// initMain writes to the process's stderr; its status is what the
	// caller sees.
	bad := filepath.Join(t.TempDir(), configFile)
	writeFile(t, bad, "{not json", 0o600)
	for _, p := range []string{bad, filepath.Join(t.TempDir(), "missing.json")} {
		if code := initMain(p); code != exitSetup {
			t.Errorf("initMain(%s) = %d, want %d", p, code, exitSetup)
		}
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("the init left its configuration file behind")
	}
	c := config{}
	if err := lendStdio(c); err != nil {
		t.Errorf("lendStdio with no outer id: %v", err)
	}
}

// visibleDir makes a folder for a test's files where the sandbox's view
// shows the host's files: not under /tmp, /var/tmp or /dev/shm, which it
// replaces, nor /run, which a contained network's view replaces, so that
// what a test sees there is what the view does to it.
func visibleDir(t *testing.T) string {
	t.Helper()
	for _, parent := range []string{"/srv", "/mnt"} {
		if d, err := os.MkdirTemp(parent, "planex-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	t.Skip("no folder outside /tmp to make test files in")
	return ""
}
