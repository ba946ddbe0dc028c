// Package sandboxtest holds what tests of contained processes share.
package sandboxtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Processes lists the host's processes whose command line contains arg,
// as "pid: command line": a test tags what a contained program starts
// with an unusual argument and checks nothing of it is left.
func Processes(t testing.TB, arg string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(arg)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// NetProbe builds the netprobe command (see its package) into a folder of
// its own (or takes $PLANEX_TEST_NETPROBE's) and returns the binary's path; contained programs need that
// folder in their policy's read-only list, since tests' folders lie under
// /tmp. A package with several such tests shares one build through a
// ProbeBuild instead.
func NetProbe(t testing.TB) string {
	t.Helper()
	// A test binary run as another user (no module cache to build from)
	// is handed one built beforehand.
	if bin := os.Getenv("PLANEX_TEST_NETPROBE"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "netprobe")
	if err := buildNetProbe(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildNetProbe builds the netprobe command at bin.
func buildNetProbe(bin string) error {
	cmd := exec.Command("go", "build", "-o", bin, "github.com/planexhq/planex/internal/sandbox/sandboxtest/netprobe")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building netprobe: %w\n%s", err, out)
	}
	return nil
}

// ProbeBuild is the netprobe command built once for all the tests of one
// test binary: each build took the go command about 0.7 CPU-s, and
// twenty-one tests built it (issue 32, item 4). Its zero value is ready;
// the package's TestMain calls Remove after the tests.
type ProbeBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// Path returns the binary's path (or $PLANEX_TEST_NETPROBE's), building
// it on the first call; its folder holds nothing else, for a policy's
// read-only list.
func (b *ProbeBuild) Path(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("PLANEX_TEST_NETPROBE"); bin != "" {
		return bin
	}
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "planex-netprobe-")
		if b.err == nil {
			// Open to every id: a sandbox run as root lends the folders it
			// grants to the program's id, and tests side by side run
			// programs under different ids.
			b.err = os.Chmod(b.dir, 0o755)
		}
		if b.err == nil {
			b.bin = filepath.Join(b.dir, "netprobe")
			b.err = buildNetProbe(b.bin)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// Remove removes what Path built.
func (b *ProbeBuild) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// Listener is a TCP or Unix listener that records what arrives: an
// attack's check is that nothing did.
type Listener struct {
	net.Listener
	mu   sync.Mutex
	got  []string
	done chan struct{}
}

// Listen starts a Listener on network and address ("tcp",
// "127.0.0.1:0"; "unix", "@name" for an abstract socket); it answers
// each connection with "pong" and records its first line.
func Listen(t testing.TB, network, address string) *Listener {
	t.Helper()
	if network == "unix" && strings.HasPrefix(address, "@") {
		address = "\x00" + address[1:]
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	l := &Listener{Listener: ln, done: make(chan struct{})}
	go l.serve()
	t.Cleanup(func() { ln.Close(); <-l.done })
	return l
}

func (l *Listener) serve() {
	defer close(l.done)
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		l.mu.Lock()
		l.got = append(l.got, strings.TrimSpace(line))
		l.mu.Unlock()
		_, _ = io.WriteString(c, "pong")
		c.Close()
	}
}

// Got returns the first lines of the connections that arrived.
func (l *Listener) Got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// MachineAddress is one of this machine's IPv4 addresses other than
// loopback, or "" when it has none: a destination outside a contained
// network that is not the host's loopback.
func MachineAddress(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return ""
}

// UDPListener records the datagrams that arrive on a UDP socket (a DNS
// server's place) and answers each with "pong".
type UDPListener struct {
	conn net.PacketConn
	mu   sync.Mutex
	got  []string
	done chan struct{}
}

// ListenUDP starts a UDPListener on address ("0.0.0.0:0").
func ListenUDP(t testing.TB, address string) *UDPListener {
	t.Helper()
	pc, err := net.ListenPacket("udp", address)
	if err != nil {
		t.Fatal(err)
	}
	l := &UDPListener{conn: pc, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			l.mu.Lock()
			l.got = append(l.got, strings.TrimSpace(string(buf[:n])))
			l.mu.Unlock()
			_, _ = pc.WriteTo([]byte("pong"), from)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-l.done })
	return l
}

// Port is the port the listener's socket is bound to.
func (l *UDPListener) Port() int { return l.conn.LocalAddr().(*net.UDPAddr).Port }

// Got returns the datagrams that arrived.
func (l *UDPListener) Got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}
