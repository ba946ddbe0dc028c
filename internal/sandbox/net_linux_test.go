//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// TestNetworkContainment: a contained program tries every way out of its
// network namespace that a host process has; only the forwarded port
// leads out, and with the network open the direct connection works, but
// not one to an abstract Unix socket of the host (where the kernel has
// Landlock's scopes, 6.12 and later).
func TestNetworkContainment(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if err := s.ProbeNetwork(context.Background()); err != nil {
		t.Fatalf("this machine makes network namespaces (CI too), yet: %v", err)
	}
	probe := probeBuild.Path(t)
	loop := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	all := sandboxtest.Listen(t, "tcp", "0.0.0.0:0")
	abstract := sandboxtest.Listen(t, "unix", fmt.Sprintf("@planex-test-%d", loop.Addr().(*net.TCPAddr).Port))
	sockDir := t.TempDir() // under /tmp, which the sandbox replaces
	forwarded := sandboxtest.Listen(t, "unix", filepath.Join(sockDir, "egress.sock"))
	allPort := all.Addr().(*net.TCPAddr).Port
	other := sandboxtest.MachineAddress(t)
	if other == "" {
		t.Log("no address besides loopback on this machine; the other-address row dials loopback instead")
		other = "127.0.0.1"
	}
	if !landlockScopes() {
		t.Log("this kernel has no Landlock scopes (Linux 6.12): with the network open the host's abstract sockets are reached")
	}
	base := Policy{ReadOnly: []string{filepath.Dir(probe)}}
	rows := []struct {
		name    string
		network Network
		forward []Forward
		args    string
		l       *sandboxtest.Listener
		reach   bool
	}{
		{"host loopback", NetworkContained, nil, "tcp " + loop.Addr().String() + " loopback", loop, false},
		{"machine's own address", "", nil, fmt.Sprintf("tcp %s:%d other", other, allPort), all, false},
		{"host abstract socket", NetworkContained, nil, "unix " + strings.Replace(abstract.Addr().String(), "\x00", "@", 1) + " abstract", abstract, false},
		{"forwarded port leads to its socket", NetworkContained, []Forward{{Port: 3128, Socket: filepath.Join(sockDir, "egress.sock")}}, "tcp 127.0.0.1:3128 forwarded", forwarded, true},
		{"open network reaches host loopback", NetworkOpen, nil, "tcp " + loop.Addr().String() + " open", loop, true},
		// The host's abstract sockets are no network: an X server there
		// takes keystrokes for the user's terminal from any process of
		// the user's uid, a session bus starts commands outside.
		{"open network, host abstract socket", NetworkOpen, nil, "unix " + strings.Replace(abstract.Addr().String(), "\x00", "@", 1) + " abstract-open", abstract, !landlockScopes()},
	}
	for _, row := range rows {
		p := base
		p.Network, p.Forward = row.network, row.forward
		out, err := run(t, s, p, "/", nil, probe+" "+row.args)
		if err != nil {
			t.Fatalf("%s: %v\n%s", row.name, err, out)
		}
		msg := row.args[strings.LastIndex(row.args, " ")+1:]
		arrived := strings.Contains(strings.Join(row.l.Got(), "\n"), msg)
		if row.reach != arrived || row.reach != strings.HasPrefix(out, "ok: pong") {
			t.Errorf("%s: want reached=%v; the program said %q, the listener got %q", row.name, row.reach, out, row.l.Got())
		}
	}
}

// TestSocketFamiliesStayInTheNamespace: a contained program makes a
// socket of every address family and type, as itself and as root of a
// user and network namespace of its own (unshare -Urn, where it holds
// CAP_NET_RAW and the rest over that network). Every family it gets is
// one a network namespace holds, or no network at all: none that the
// kernel shares across namespaces (vsock, which the filter refuses). A
// family this list does not know (one a kernel with more modules makes)
// fails the test, naming it, to be judged.
func TestSocketFamiliesStayInTheNamespace(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if err := s.ProbeNetwork(context.Background()); err != nil {
		t.Fatalf("this machine makes network namespaces (CI too), yet: %v", err)
	}
	namespaced := map[int]string{
		1: "unix (abstract names per namespace)", 2: "inet", 10: "inet6", 16: "netlink", 17: "packet", 44: "xdp",
		15: "key", 21: "rds", 24: "pppox", 29: "can", 30: "tipc", 33: "rxrpc", 41: "kcm", 43: "smc", 45: "mctp",
		38: "alg (the kernel's ciphers, no network)",
	}
	probe := probeBuild.Path(t)
	p := Policy{ReadOnly: []string{filepath.Dir(probe)}, Network: NetworkContained}
	ways := map[string]string{"as itself": probe + " families x"}
	if _, err := exec.LookPath("unshare"); err == nil {
		ways["as root of namespaces of its own"] = "unshare -Urn " + probe + " families x"
	} else {
		t.Log("no unshare here: the program tries as itself only")
	}
	for name, cmd := range ways {
		out, err := run(t, s, p, "/", []string{"PATH=" + os.Getenv("PATH")}, cmd)
		if err != nil || !strings.HasPrefix(out, "ok: ") {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		t.Logf("%s: %s", name, strings.TrimSpace(out))
		for _, f := range strings.Fields(strings.TrimPrefix(out, "ok: ")) {
			fam, _, _ := strings.Cut(f, "/")
			n, err := strconv.Atoi(fam)
			if err != nil {
				t.Fatalf("%s: %q in %q", name, f, out)
			}
			if _, ok := namespaced[n]; !ok {
				t.Errorf("%s: the program made a socket of family %d (type %s), which this test does not know to stay in a network namespace", name, n, f)
			}
		}
	}
}

func TestForwardNeedsContainedNetwork(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	sock := filepath.Join(t.TempDir(), "x.sock")
	for name, p := range map[string]Policy{
		"open network":  {Network: NetworkOpen, Forward: []Forward{{Port: 80, Socket: sock}}},
		"port zero":     {Forward: []Forward{{Port: 0, Socket: sock}}},
		"port too high": {Forward: []Forward{{Port: 70000, Socket: sock}}},
		"twice":         {Forward: []Forward{{Port: 80, Socket: sock}, {Port: 80, Socket: sock}}},
	} {
		cleanup, err := s.Wrap(exec.Command("true"), p)
		cleanup()
		if err == nil {
			t.Errorf("%s: Wrap accepted %+v", name, p.Forward)
		}
	}
}

func TestParseNetwork(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Network{"": NetworkContained, "contained": NetworkContained, " OPEN ": NetworkOpen} {
		if got, err := ParseNetwork(in); err != nil || got != want {
			t.Errorf("ParseNetwork(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseNetwork("host"); err == nil || !strings.Contains(err.Error(), `"host"`) {
		t.Errorf("ParseNetwork(host) error = %v, want one naming the value", err)
	}
	var zero Policy
	if zero.Network.Open() || zero.Network.String() != "contained" {
		t.Errorf("the zero policy's network is %q, want contained", zero.Network)
	}
}

// TestSysShowsOwnNetwork: a contained program lists the network
// interfaces in /sys/class/net and /proc/net/dev, where the host's sysfs shows the host's
// (names, hardware addresses, traffic counters of the machine's other
// jobs). With its own network it finds only lo, and the host's cgroup
// tree still below /sys/fs/cgroup, read-only; with the network open it
// sees the host's interfaces, as the host does.
func TestSysShowsOwnNetwork(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if err := s.ProbeNetwork(context.Background()); err != nil {
		t.Fatalf("this machine makes network namespaces (CI too), yet: %v", err)
	}
	list := func(dir string) string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return ""
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}
	hostNet, hostCgroup := list("/sys/class/net"), list("/sys/fs/cgroup")
	if hostNet == "lo" || hostNet == "" {
		t.Logf("this machine shows %q in /sys/class/net: the contained row shows nothing here", hostNet)
	}
	script := `echo $(ls /sys/class/net); echo $(ls /sys/fs/cgroup); cat /sys/class/net/*/address | grep -vc '^00:00:00:00:00:00$'; touch /sys/fs/cgroup/planex-x 2>/dev/null && echo WROTE; echo $(tail -n +3 /proc/net/dev | cut -d: -f1); true`
	for _, row := range []struct {
		network Network
		net     string
		macs    string
	}{{NetworkContained, "lo", "0"}, {NetworkOpen, hostNet, ""}} {
		out, err := run(t, s, Policy{Network: row.network}, "/", nil, script)
		if err != nil {
			t.Fatalf("%s: %v\n%s", row.network, err, out)
		}
		lines := strings.Split(out, "\n")
		if len(lines) < 3 {
			t.Fatalf("%s: %q", row.network, out)
		}
		if lines[0] != row.net {
			t.Errorf("%s network: /sys/class/net lists %q, want %q", row.network, lines[0], row.net)
		}
		if lines[1] != hostCgroup {
			t.Errorf("%s network: /sys/fs/cgroup lists %q, the host's %q", row.network, lines[1], hostCgroup)
		}
		if row.macs != "" && lines[2] != row.macs {
			t.Errorf("%s network: %s hardware addresses besides loopback's", row.network, lines[2])
		}
		if strings.Contains(out, "WROTE") {
			t.Errorf("%s network: the program wrote into /sys/fs/cgroup", row.network)
		}
		if procNet := strings.Join(strings.Fields(lines[len(lines)-2]), " "); row.network != NetworkOpen && procNet != "lo" {
			t.Errorf("%s network: /proc/net/dev lists %q, want lo alone", row.network, procNet)
		}
	}
}

// TestUDPOutOfReach: a contained program sends a datagram (a DNS query
// for <data>.attacker.example would be one) to a UDP server on the
// host's loopback, where a local resolver listens, and on the machine's
// own address: neither arrives; with the network open the loopback one
// does.
func TestUDPOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if err := s.ProbeNetwork(context.Background()); err != nil {
		t.Fatalf("this machine makes network namespaces (CI too), yet: %v", err)
	}
	probe := probeBuild.Path(t)
	l := sandboxtest.ListenUDP(t, "0.0.0.0:0")
	port := strconv.Itoa(l.Port())
	other := sandboxtest.MachineAddress(t)
	if other == "" {
		other = "127.0.0.1"
	}
	for _, row := range []struct {
		network Network
		addr    string
		msg     string
		reach   bool
	}{
		{NetworkContained, "127.0.0.1:" + port, "loot-udp-loopback", false},
		{NetworkContained, other + ":" + port, "loot-udp-other", false},
		{NetworkOpen, "127.0.0.1:" + port, "loot-udp-open", true},
	} {
		out, err := run(t, s, Policy{Network: row.network, ReadOnly: []string{filepath.Dir(probe)}}, "/", nil, probe+" udp "+row.addr+" "+row.msg)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", row.network, row.addr, err, out)
		}
		time.Sleep(100 * time.Millisecond) // a datagram in flight
		arrived := strings.Contains(strings.Join(l.Got(), " "), row.msg)
		if arrived != row.reach || strings.HasPrefix(out, "ok: pong") != row.reach {
			t.Errorf("%s network, %s: want reached=%v; the program said %q, the server got %q", row.network, row.addr, row.reach, out, l.Got())
		}
	}
}

// TestRelayFloodBounded: the program opens thousands of connections to
// the forwarded port and holds them. Each one the sandbox's first
// process relays costs it a goroutine, a connection to planex's socket
// and buffers, outside every limit the program has (its own memory
// limit included); planex's proxy serves 64 at once, so the rest only
// pile up. The first process keeps at most maxRelays open at once (the
// rest are closed at once), so its memory stays small.
func TestRelayFloodBounded(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	probe := probeBuild.Path(t)
	sockDir := t.TempDir()
	sandboxtest.Listen(t, "unix", filepath.Join(sockDir, "egress.sock"))
	p := Policy{ReadOnly: []string{filepath.Dir(probe)}, Forward: []Forward{{Port: 3128, Socket: filepath.Join(sockDir, "egress.sock")}}}
	const flood = 2000
	cmd := exec.Command(probe, "hold", "127.0.0.1:3128", strconv.Itoa(flood), "1")
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cleanup, err := s.Wrap(cmd, p)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var peak int
	for waiting := true; waiting; {
		peak = max(peak, socketsOf(cmd.Process.Pid))
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			waiting = false
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("%s; the first process held at most %d sockets", strings.TrimSpace(out.String()), peak)
	// Two sockets a relay (and the listeners); the pipes Go splices the
	// copies through come and go with them.
	if bound := 2*maxRelays + 16; peak > bound {
		t.Errorf("the sandbox's first process held %d sockets for a flood of %d connections; want at most %d", peak, flood, bound)
	}
}

// socketsOf counts the sockets process pid holds.
func socketsOf(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	n := 0
	for _, f := range fds {
		if l, _ := os.Readlink(filepath.Join(dir, f.Name())); strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
