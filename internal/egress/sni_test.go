package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// byteRecorder is a TCP server that greets each connection (as an SMTP
// server speaks first) and records every byte it receives.
type byteRecorder struct {
	ln  net.Listener
	mu  sync.Mutex
	got []string
}

func newByteRecorder(t *testing.T) *byteRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &byteRecorder{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "220 greeting\n")
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				b, _ := io.ReadAll(io.LimitReader(c, 1<<20))
				r.mu.Lock()
				r.got = append(r.got, string(b))
				r.mu.Unlock()
			}()
		}
	}()
	return r
}

// received waits for n connections to end and returns what each sent.
func (r *byteRecorder) received(t *testing.T, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		got := append([]string(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
	}
	t.Fatalf("the upstream saw fewer than %d connections end", n)
	return nil
}

// TestProxyTunnelServerName: an agent opens a tunnel to an allowed host
// and names another site in its TLS handshake (domain fronting by SNI,
// which a CDN routes by). Nothing of that handshake reaches the
// upstream, and the name is recorded as refused; a handshake naming the
// allowed host, one naming none, and a protocol whose server speaks
// first pass.
func TestProxyTunnelServerName(t *testing.T) {
	t.Parallel()
	up := newByteRecorder(t)
	rules, err := ParseRules("front.test:443, other.test:443, 203.0.113.20:443")
	if err != nil {
		t.Fatal(err)
	}
	log := &Log{}
	p := &Proxy{Rules: rules, Log: log, HeaderTimeout: time.Second,
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("203.0.113.20")}, nil
		},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, up.ln.Addr().String())
		}}
	sock := filepath.Join(t.TempDir(), "egress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	// open returns a tunnel to target, its greeting read.
	open := func(target string) net.Conn {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\n\r\n")
		br := bufio.NewReader(c)
		if line, _ := br.ReadString('\n'); !strings.Contains(line, " 200 ") {
			t.Fatalf("CONNECT %s: %q", target, line)
		}
		br.ReadString('\n')
		if g, _ := br.ReadString('\n'); g != "220 greeting\n" {
			t.Fatalf("CONNECT %s: the server's greeting did not come first: %q", target, g)
		}
		return c
	}
	hello := func(c net.Conn, sni string) {
		tc := tls.Client(c, &tls.Config{ServerName: sni, InsecureSkipVerify: sni == ""})
		tc.SetDeadline(time.Now().Add(300 * time.Millisecond))
		_ = tc.Handshake() // the recorder answers no TLS: only the hello matters
	}
	rows := []struct {
		name, target string
		send         func(net.Conn)
		want         string // in what the upstream received; "" for nothing at all
		refused      string
	}{
		{"fronting: another site named in the handshake", "front.test:443", func(c net.Conn) { hello(c, "exfil.test") }, "", "exfil.test:443"},
		{"fronting: upper case spelling of a refused name", "front.test:443", func(c net.Conn) { hello(c, "EXFIL.test") }, "", "exfil.test:443"},
		{"fronting through an address allowed by itself", "203.0.113.20:443", func(c net.Conn) { hello(c, "exfil.test") }, "", "exfil.test:443"},
		{"a handshake that is no ClientHello", "front.test:443", func(c net.Conn) { c.Write([]byte{0x16, 3, 1, 0, 4, 2, 0, 0, 0}) }, "", `"(unreadable TLS handshake)":443`},
		{"fronting after a wait longer than the header timeout", "front.test:443", func(c net.Conn) { time.Sleep(1500 * time.Millisecond); hello(c, "exfil.test") }, "", "exfil.test:443"},
		{"a handshake begun and never finished", "front.test:443", func(c net.Conn) { c.Write([]byte{0x16, 3, 1}); time.Sleep(1500 * time.Millisecond) }, "", `"(unreadable TLS handshake)":443`},
		{"the tunnel's own host", "front.test:443", func(c net.Conn) { hello(c, "front.test") }, "front.test", ""},
		{"another allowed host", "front.test:443", func(c net.Conn) { hello(c, "other.test") }, "other.test", ""},
		{"no server name", "front.test:443", func(c net.Conn) { hello(c, "") }, "\x16\x03", ""},
		{"not TLS", "front.test:443", func(c net.Conn) { io.WriteString(c, "EHLO planex\n") }, "EHLO planex\n", ""},
	}
	for i, r := range rows {
		c := open(r.target)
		r.send(c)
		c.Close()
		got := up.received(t, i+1)[i]
		if r.want == "" && got != "" {
			t.Errorf("%s: the upstream received %d bytes: %.60q", r.name, len(got), got)
		}
		if r.want != "" && !strings.Contains(got, r.want) {
			t.Errorf("%s: the upstream received %q, want it to hold %q", r.name, got, r.want)
		}
		found := false
		for _, f := range log.Refusals() {
			found = found || strings.HasPrefix(f.String(), r.refused)
		}
		if r.refused != "" && !found {
			t.Errorf("%s: refusal of %s not recorded: %v", r.name, r.refused, log.Refusals())
		}
	}
	if n := len(log.Refusals()); n != 2 {
		t.Errorf("want the fronted name and the unreadable handshake recorded, got %v", log.Refusals())
	}
}
