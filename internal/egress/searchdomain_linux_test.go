//go:build linux

package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
)

// searchDomainChildEnv marks the test binary run again inside namespaces
// of its own by TestProxyNameNotBelowSearchDomains.
const searchDomainChildEnv = "PLANEX_EGRESS_TEST_SEARCH_DOMAIN_CHILD"

// TestProxyNameNotBelowSearchDomains: the step allows allowed.test, a
// name with no address of its own; the machine's resolver has a search
// domain, corp.test, under which allowed.test.corp.test is an internal
// host. The proxy looks the allowed name up as it is, absolute, and
// refuses it for want of an address, never dialling the host the search
// domain makes of it, which no allow-list named. It runs in a mount and
// network namespace of its own, with an /etc/resolv.conf naming the
// search domain and a name server the test runs on its own loopback.
func TestProxyNameNotBelowSearchDomains(t *testing.T) {
	if os.Getenv(searchDomainChildEnv) == "1" {
		searchDomainChild(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: it puts its own /etc/resolv.conf and name server in a mount and network namespace of its own")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyNameNotBelowSearchDomains$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), searchDomainChildEnv+"=1", "GODEBUG=netdns=go")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("this machine lets no process make a mount and network namespace (%v), where the test puts its resolv.conf and name server", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestProxyNameNotBelowSearchDomains") {
		t.Fatalf("in its own namespaces (%v):\n%s", err, out)
	}
}

// searchDomainChild is the test inside its namespaces.
func searchDomainChild(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Fatalf("bringing the loopback up: %v", err)
	}
	unix.Close(fd)
	pc, err := net.ListenPacket("udp", "127.0.0.1:53")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var mu sync.Mutex
	var asked []string
	go serveSearchDomainDNS(pc, func(name string) {
		mu.Lock()
		asked = append(asked, name)
		mu.Unlock()
	})
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(conf, []byte("nameserver 127.0.0.1\nsearch corp.test\noptions ndots:1 timeout:1 attempts:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(conf, "/etc/resolv.conf", "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("putting the test's resolv.conf in place: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The search domain is in effect here: the system's resolver, asked
	// for the name as it is, finds the internal host (else this test
	// could not fail).
	if addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", "allowed.test"); err != nil || len(addrs) != 1 || addrs[0] != internalHost {
		t.Fatalf("the search domain is not in effect in the test's namespace: %v, %v", addrs, err)
	}
	mu.Lock()
	asked = nil
	mu.Unlock()
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Rules: rules, Own: []netip.Addr{}}
	addrs, err := p.check(ctx, "allowed.test", 443)
	if err == nil {
		t.Errorf("allowed.test led to %v, the search domain's host", addrs)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range asked {
		if strings.Contains(name, "corp.test") {
			t.Errorf("the proxy asked for %s: %q", name, asked)
		}
	}
	if len(asked) == 0 {
		t.Errorf("the proxy asked the name server nothing")
	}
}

// internalHost is the address the search domain's name leads to.
var internalHost = netip.MustParseAddr("10.9.8.7")

// serveSearchDomainDNS answers on pc until it is closed: allowed.test.corp.test
// has internalHost, every other name no record (NXDOMAIN).
func serveSearchDomainDNS(pc net.PacketConn, asked func(string)) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var m dnsmessage.Message
		if m.Unpack(buf[:n]) != nil || len(m.Questions) != 1 {
			continue
		}
		q := m.Questions[0]
		asked(q.Name.String())
		m.Header.Response, m.Header.Authoritative = true, true
		switch {
		case strings.EqualFold(q.Name.String(), "allowed.test.corp.test.") && q.Type == dnsmessage.TypeA:
			m.Answers = []dnsmessage.Resource{{
				Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60},
				Body:   &dnsmessage.AResource{A: internalHost.As4()},
			}}
		case strings.EqualFold(q.Name.String(), "allowed.test.corp.test."):
		default:
			m.Header.RCode = dnsmessage.RCodeNameError
		}
		if out, err := m.Pack(); err == nil {
			pc.WriteTo(out, from)
		}
	}
}
