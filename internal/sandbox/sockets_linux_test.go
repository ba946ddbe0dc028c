//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// TestHostServiceSocketsOutOfReach: a host service listening on a Unix
// socket under /run, open to every user (as systemd-resolved's varlink
// socket is on GitHub's Ubuntu runners: it resolves any name, so a query
// for <data>.attacker.example carries data out), is a way around a
// contained network, since a path socket is a file, not part of the
// network namespace. With the network contained the program cannot
// connect to it; with --network open it can.
func TestHostServiceSocketsOutOfReach(t *testing.T) {
	s := sandboxWithRun(t)
	dir := openTempDir(t, "/run", "planex-redteam-")
	if err := os.MkdirAll(filepath.Join(dir, "resolve"), 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "resolve", "io.systemd.Resolve")
	l := sandboxtest.Listen(t, "unix", sock)
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	probe := probeBuild.Path(t)
	p := Policy{ReadOnly: []string{filepath.Dir(probe)}}
	for _, row := range []struct {
		network Network
		msg     string
		reach   bool
	}{{NetworkContained, "contained", false}, {NetworkOpen, "open", true}} {
		p.Network = row.network
		out, err := run(t, s, p, "/", nil, probe+" unix "+sock+" "+row.msg)
		if err != nil {
			t.Fatalf("%s: %v\n%s", row.network, err, out)
		}
		arrived := strings.Contains(strings.Join(l.Got(), "\n"), row.msg)
		if arrived != row.reach || strings.HasPrefix(out, "ok:") != row.reach {
			t.Errorf("%s network: want reached=%v; the program said %q, the service got %q", row.network, row.reach, out, l.Got())
		}
	}
}

// TestRunSockets: the walk finds sockets under /var/snap at any depth it
// allows, not files, links or folders, and does not enter covered
// folders; it leaves /run to its cover (runFolders).
func TestRunSockets(t *testing.T) {
	t.Parallel()
	r := t.TempDir()
	deep := "var/snap/" + strings.Repeat("d/", socketWalkDepth+1)
	for _, d := range []string{"run/a", "var/snap/a/b", "var/snap/hidden/x", deep, "var/snap/microk8s/common/run"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(r, "var", "snap", "a", "file"), "x", 0o644)
	if err := os.Symlink("/var/snap/a/b/svc", filepath.Join(r, "var", "snap", "link")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"run/top.sock", "run/a/svc", "var/snap/a/b/svc", "var/snap/hidden/x/bus", deep + "deep",
		"var/snap/microk8s/common/run/containerd.sock"} {
		sandboxtest.Listen(t, "unix", filepath.Join(r, s))
	}
	got := runSockets(r, []string{"/var/snap/hidden"})
	want := []string{"/var/snap/a/b/svc", "/var/snap/microk8s/common/run/containerd.sock"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("runSockets = %q, want %q", got, want)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// TestContainerManagerSocketsOutOfReach: LXD's and Incus's sockets make
// a container with the host's / mounted (root on the host) for their
// group, which a non-root planex's program keeps, and their user
// daemons' sockets, open to every user, make containers with a network
// of their own; libvirt's make a VM with the host's disk, MicroK8s's
// containerd a pod as root. The test plants LXD's user socket, libvirt's
// and MicroK8s's where they keep them (each only when this machine has
// none of its own) and a snap's service socket under /var/snap, all open
// to every user: the program reaches none with the network contained,
// and none but the snap service's with the network open.
func TestContainerManagerSocketsOutOfReach(t *testing.T) {
	needRoot(t) // only root may make folders under /var
	s := newSandbox(t)
	made := func(dir string) {
		t.Helper()
		if _, err := os.Lstat(dir); err == nil {
			return
		}
		top := dir
		for p := filepath.Dir(dir); p != "/"; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); err == nil {
				break
			}
			top = p
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(top) })
	}
	listen := func(sock string) *sandboxtest.Listener {
		t.Helper()
		made(filepath.Dir(sock))
		l := sandboxtest.Listen(t, "unix", sock)
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		return l
	}
	type target struct {
		sock    string
		l       *sandboxtest.Listener
		openWay bool // reachable with the network open
	}
	var targets []target
	for _, m := range []struct{ owner, sock string }{
		{"/var/snap/lxd", "/var/snap/lxd/common/lxd-user/unix.socket"},
		{"/run/libvirt", "/run/libvirt/libvirt-sock"},
		{"/var/snap/microk8s", "/var/snap/microk8s/common/run/containerd.sock"},
		// Reached with the network open before: Tailscale's daemon
		// (its operator user reconfigures it: a Funnel publishing a
		// port), Multipass's (VMs with the host's folders) and pcscd.
		{"/run/tailscale", "/run/tailscale/tailscaled.sock"},
		{"/var/snap/multipass", "/var/snap/multipass/common/multipass_socket"},
		// The smart card daemon: the user's YubiKey.
		{"/run/pcscd", "/run/pcscd/pcscd.comm"},
	} {
		if exists(m.owner) {
			t.Logf("this machine has %s: its socket is not planted (the default masks cover it all the same)", m.owner)
			continue
		}
		targets = append(targets, target{m.sock, listen(m.sock), false})
	}
	made("/var/snap")
	dir := openTempDir(t, "/var/snap", "planex-redteam-")
	svc := filepath.Join(dir, "common", "run", "svc.sock")
	targets = append(targets, target{svc, listen(svc), true})
	probe := probeBuild.Path(t)
	for _, tg := range targets {
		for _, network := range []Network{NetworkContained, NetworkOpen} {
			msg := "loot-" + string(network)
			p := Policy{Network: network, ReadOnly: []string{filepath.Dir(probe)}}
			out, err := run(t, s, p, "/", nil, probe+" unix "+tg.sock+" "+msg)
			if err != nil {
				t.Fatalf("%s, %s network: %v\n%s", tg.sock, network, err, out)
			}
			want := network.Open() && tg.openWay
			arrived := strings.Contains(strings.Join(tg.l.Got(), "\n"), msg)
			if arrived != want || strings.HasPrefix(out, "ok:") != want {
				t.Errorf("%s, %s network: want reached=%v; the program said %q, the socket got %q", tg.sock, network, want, out, tg.l.Got())
			}
		}
	}
}

// TestBoundSocketsOutsideRunOutOfReach: a host service may listen on a
// Unix socket in any folder (a database's under /var/lib, a vendor
// agent's under /opt, one under /srv), open to every user or to the
// user's groups, which a non-root planex's program keeps. A path socket
// is a file, not part of the network namespace, so it was a way around a
// contained network wherever the /run walk did not look: the program
// connected to all three. Now every socket bound in planex's network
// namespace (/proc/net/unix) is covered in a contained one, wherever it
// lies; the step's own forwarded ports still work.
func TestBoundSocketsOutsideRunOutOfReach(t *testing.T) {
	needRoot(t) // only root may make folders under /var/lib, /opt, /srv
	s := newSandbox(t)
	probe := probeBuild.Path(t)
	fwd := filepath.Join(t.TempDir(), "egress.sock")
	egress := sandboxtest.Listen(t, "unix", fwd)
	var socks []string
	var ls []*sandboxtest.Listener
	for _, top := range []string{"/var/lib", "/opt", "/srv"} {
		if err := os.MkdirAll(top, 0o755); err != nil {
			t.Fatal(err)
		}
		dir := openTempDir(t, top, "planex-redteam-")
		sock := filepath.Join(dir, "run", "service.sock")
		if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, sandboxtest.Listen(t, "unix", sock))
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		socks = append(socks, sock)
	}
	script := ""
	for _, sock := range socks {
		script += probe + " unix " + sock + " loot; "
	}
	script += probe + " tcp 127.0.0.1:3128 forwarded"
	p := Policy{ReadOnly: []string{filepath.Dir(probe)}, Forward: []Forward{{Port: 3128, Socket: fwd}}}
	out, err := run(t, s, p, "/", nil, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for i, l := range ls {
		if got := l.Got(); len(got) > 0 {
			t.Errorf("the contained program reached %s: %q\n%s", socks[i], got, out)
		}
	}
	if got := egress.Got(); len(got) != 1 || got[0] != "forwarded" {
		t.Errorf("the step's own forwarded port no longer leads out: %q\n%s", got, out)
	}
}

// TestBoundSockets: the paths of /proc/net/unix's lines are read whole
// (spaces too), once each; unnamed, abstract and relative ones are left
// out, and of the paths only sockets, not a skipped one, are covered.
func TestBoundSockets(t *testing.T) {
	t.Parallel()
	r := t.TempDir()
	table := `Num       RefCount Protocol Flags    Type St Inode Path
00000000be0708d9: 00000003 00000000 00000000 0001 03  1074
0000000032c7a463: 00000002 00000000 00010000 0001 01 24781025 /srv/a b.sock
0000000032c7a464: 00000002 00000000 00010000 0001 01 24781026 /srv/a b.sock
000000001595c9ef: 00000002 00000000 00010000 0001 01 24773779 @abstract
000000001595c9f0: 00000002 00000000 00010000 0001 01 24773780 relative.sock
000000001595c9f1: 00000002 00000000 00010000 0001 01 24773781 /srv/file
000000001595c9f2: 00000002 00000000 00010000 0001 01 24773782 /srv/fwd.sock
000000001595c9f3: 00000002 00000000 00010000 0001 01 24773783 /srv/gone.sock
`
	writeFile(t, filepath.Join(r, "unix"), table, 0o644)
	got := boundSockets(filepath.Join(r, "unix"))
	want := []string{"/srv/a b.sock", "/srv/file", "/srv/fwd.sock", "/srv/gone.sock"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("boundSockets = %q, want %q", got, want)
	}
	if err := os.MkdirAll(filepath.Join(r, "srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	sandboxtest.Listen(t, "unix", filepath.Join(r, "srv", "a b.sock"))
	sandboxtest.Listen(t, "unix", filepath.Join(r, "srv", "fwd.sock"))
	writeFile(t, filepath.Join(r, "srv", "file"), "x", 0o644)
	if got := boundIn(r, got, []string{"/srv/fwd.sock"}); strings.Join(got, "|") != "/srv/a b.sock" {
		t.Errorf("boundIn = %q, want only the socket not skipped", got)
	}
	if got := boundSockets(filepath.Join(r, "missing")); got != nil {
		t.Errorf("boundSockets of no file = %q", got)
	}
}

// TestRedTeamLateSocketUnderRunOutOfReach: a host service that binds its
// socket under /run only after a step started (a service started by
// socket activation, a database restarted, a job's helper daemon) was
// within reach: the sandbox covered the sockets it found when it was
// built, and the rest of /run was the host's, bound read-only, where a
// new socket appears at once and connect() works on a read-only mount.
// The malicious program waits until the service is up (the test tells
// it when the socket is bound) and connects. With the
// network contained /run is an empty folder of the step's own, so the
// socket never appears there; with the network open (the host's, by
// choice) it does.
func TestRedTeamLateSocketUnderRunOutOfReach(t *testing.T) {
	s := sandboxWithRun(t)
	probe := probeBuild.Path(t)
	for _, row := range []struct {
		network Network
		reach   bool
	}{{NetworkContained, false}, {NetworkOpen, true}} {
		t.Run(row.network.String(), func(t *testing.T) {
			dir := openTempDir(t, "/run", "planex-redteam-late-")
			sock := filepath.Join(dir, "late.sock")
			work := t.TempDir()
			script := `touch ` + work + `/started
i=0; while [ ! -e ` + work + `/bound ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
` + probe + ` unix ` + sock + ` late-` + row.network.String()
			type result struct {
				out string
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := run(t, s, Policy{Network: row.network, Writable: []string{work}, ReadOnly: []string{filepath.Dir(probe)}}, work, nil, script)
				done <- result{out, err}
			}()
			for i := 0; i < 200 && !exists(filepath.Join(work, "started")); i++ {
				time.Sleep(50 * time.Millisecond)
			}
			l := sandboxtest.Listen(t, "unix", sock)
			if err := os.Chmod(sock, 0o666); err != nil {
				t.Fatal(err)
			}
			// The socket is bound now: the program may look. (It used to
			// wait for the socket itself, five seconds where it never
			// appears.)
			if err := os.WriteFile(filepath.Join(work, "bound"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r := <-done
			arrived := strings.Contains(strings.Join(l.Got(), "\n"), "late-")
			if arrived != row.reach || strings.HasPrefix(r.out, "ok:") != row.reach {
				t.Errorf("%s network: want reached=%v; the program said %q (%v), the service got %q", row.network, row.reach, r.out, r.err, l.Got())
			}
		})
	}
}

// TestRedTeamSessionSocketsOutOfReach: services of a user's desktop or
// terminal keep sockets where the sandbox showed them, and act for
// whoever of the user's uid connects, outside the sandbox: GNU screen's
// sessions under /run/screen/S-<user> (Debian's and Ubuntu's build;
// screen -X stuff types a command line into a session's shell), WSLg's X
// server, PulseAudio and Wayland sockets under /mnt/wslg (Windows'
// Linux GUI support; X's "localuser" rule lets the user's programs type
// into any window), WSL's interop sockets under /run/WSL (whoever
// connects starts a Windows program, outside every Linux namespace).
// With the network open a program of planex run as
// that user reached them (with it contained, those bound in another
// network namespace too). Now both folders are covered whatever the
// network. The test plants each socket, open to every user, where this
// machine has none.
func TestRedTeamSessionSocketsOutOfReach(t *testing.T) {
	needRoot(t) // only root may make folders under /run and /mnt
	s := newSandbox(t)
	probe := probeBuild.Path(t)
	for _, row := range []struct{ top, sub, name string }{
		{"/run/screen", "S-planex-redteam-", "4711.pts-0.host"},
		{"/mnt/wslg", ".X11-unix-planex-redteam-", "X0"},
		{"/run/WSL", "planex-redteam-", "1_interop"},
	} {
		if !isDir(filepath.Dir(row.top)) {
			t.Logf("no %s on this machine", filepath.Dir(row.top))
			continue
		}
		if !exists(row.top) {
			if err := os.Mkdir(row.top, 0o775); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(row.top) })
		}
		dir := openTempDir(t, row.top, row.sub)
		sock := filepath.Join(dir, row.name)
		l := sandboxtest.Listen(t, "unix", sock)
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		for _, network := range []Network{NetworkOpen, NetworkContained} {
			p := Policy{Network: network, ReadOnly: []string{filepath.Dir(probe)}}
			msg := "stuff-" + network.String()
			out, err := run(t, s, p, "/", nil, probe+" unix "+sock+" "+msg)
			if err != nil {
				t.Fatalf("%s, %s network: %v\n%s", sock, network, err, out)
			}
			if strings.HasPrefix(out, "ok:") || strings.Contains(strings.Join(l.Got(), "\n"), msg) {
				t.Errorf("%s network: the program reached %s: it said %q, the socket got %q", network, sock, out, l.Got())
			}
		}
	}
}

// TestRedTeamKerberosCacheSocketOutOfReach: on Fedora and RHEL the
// default Kerberos cache is KCM (sssd-kcm), a socket at
// /run/.heim_org.h5l.kcm-socket, open to every uid, that hands each
// caller the tickets of its own uid: the login ticket of the user whose
// uid an ordinary user's program shares. With the host's network
// (--network open) the program connected, outside the step's view of
// /run; it is covered now, whatever the network. Needs root to plant the
// socket; skips where a KCM daemon already listens.
func TestRedTeamKerberosCacheSocketOutOfReach(t *testing.T) {
	needRoot(t) // only root may make the socket under /run
	s := newSandbox(t)
	sock := "/run/.heim_org.h5l.kcm-socket"
	if exists(sock) {
		t.Skipf("a Kerberos cache daemon listens at %s on this machine", sock)
	}
	probe := probeBuild.Path(t)
	l := sandboxtest.Listen(t, "unix", sock)
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, network := range []Network{NetworkOpen, NetworkContained} {
		p := Policy{Network: network, ReadOnly: []string{filepath.Dir(probe)}}
		msg := "kcm-" + network.String()
		out, err := run(t, s, p, "/", nil, probe+" unix "+sock+" "+msg)
		if err != nil {
			t.Fatalf("%s network: %v\n%s", network, err, out)
		}
		if strings.HasPrefix(out, "ok:") || strings.Contains(strings.Join(l.Got(), "\n"), msg) {
			t.Errorf("%s network: the program reached the Kerberos cache daemon: it said %q, the socket got %q", network, out, l.Got())
		}
	}
}

// sandboxWithRun is a sandbox for a test that plants a host service's
// socket under /run: it needs root (only root may make a folder there),
// network namespaces and a /run.
func sandboxWithRun(t *testing.T) *Sandbox {
	t.Helper()
	needRoot(t) // only root may make a folder under /run
	s := newSandbox(t)
	if err := s.ProbeNetwork(context.Background()); err != nil {
		t.Fatalf("this machine makes network namespaces (CI too), yet: %v", err)
	}
	if !isDir("/run") {
		t.Skip("no /run on this machine")
	}
	return s
}

// openTempDir makes a folder under parent, named from prefix, that every
// user may enter (as a host service's socket folder is), and removes it
// when the test ends.
func openTempDir(t *testing.T, parent, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
