package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
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
// allowed host, one naming none, plain HTTP naming the tunnel's host, and
// a protocol whose server speaks first pass; bytes neither TLS nor HTTP
// are not sent on.
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
		{"neither TLS nor HTTP", "front.test:443", func(c net.Conn) { io.WriteString(c, "EHLO planex\n") }, "", `"(unreadable HTTP request)":443`},
		{"plain HTTP naming the tunnel's host", "front.test:443", func(c net.Conn) {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: front.test:443\r\n\r\n")
			time.Sleep(100 * time.Millisecond) // sent on before the close ends the relay
		}, "Host: front.test:443\r\n", ""},
		{"fronting by Encrypted Client Hello: the allowed host outside, another site inside", "front.test:443", func(c net.Conn) { echHello(t, c, "front.test", "exfil.test") }, "", `"(encrypted client hello)":443`},
		{"fronting in a ClientHello split over three TLS records", "front.test:443", func(c net.Conn) { c.Write(splitRecords(t, clientHello(t, "exfil.test"), 3)) }, "", "exfil.test:443"},
		{"fronting in a ClientHello sent a byte at a time", "front.test:443", func(c net.Conn) {
			for _, b := range clientHello(t, "exfil.test") {
				c.Write([]byte{b})
			}
		}, "", "exfil.test:443"},
		{"a trailing dot on a refused name", "front.test:443", func(c net.Conn) {
			c.Write(bytes.Replace(clientHello(t, "exfil.testx"), []byte("exfil.testx"), []byte("exfil.test."), 1))
		}, "", `"(unreadable TLS handshake)":443`},
		{"a record longer than TLS allows", "front.test:443", func(c net.Conn) {
			c.Write(append([]byte{0x16, 3, 1, 0xff, 0xff}, make([]byte, 1<<16-1)...))
		}, "", `"(unreadable TLS handshake)":443`},
		{"the tunnel's own host in records split three ways", "front.test:443", func(c net.Conn) { c.Write(splitRecords(t, clientHello(t, "front.test"), 3)) }, "front.test", ""},
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
	if n := len(log.Refusals()); n != 4 {
		t.Errorf("want the fronted name, the unreadable handshake, the encrypted hello and the unreadable HTTP request recorded, got %v", log.Refusals())
	}
}

// clientHello is the first flight of Go's TLS client naming sni: one
// handshake record.
func clientHello(t *testing.T, sni string) []byte {
	t.Helper()
	return captureHello(t, &tls.Config{ServerName: sni})
}

func captureHello(t *testing.T, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		defer b.Close()
		_ = tls.Client(b, cfg).Handshake()
	}()
	a.SetReadDeadline(time.Now().Add(5 * time.Second))
	head := make([]byte, 5)
	if _, err := io.ReadFull(a, head); err != nil {
		t.Fatalf("capturing a ClientHello: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint16(head[3:]))
	if _, err := io.ReadFull(a, body); err != nil {
		t.Fatalf("capturing a ClientHello: %v", err)
	}
	return append(head, body...)
}

// splitRecords carries one handshake record's message in n records.
func splitRecords(t *testing.T, record []byte, n int) []byte {
	t.Helper()
	msg := record[5:]
	var out []byte
	for i := 0; i < n; i++ {
		part := msg[i*len(msg)/n : (i+1)*len(msg)/n]
		out = append(out, record[0], record[1], record[2], byte(len(part)>>8), byte(len(part)))
		out = append(out, part...)
	}
	return out
}

// echHello sends the ClientHello of a client using Encrypted Client
// Hello: the outer server name is outer (the config's public name), the
// encrypted inner one inner, as a CDN that holds the config's key would
// route it.
func echHello(t *testing.T, c net.Conn, outer, inner string) {
	t.Helper()
	key, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	u16 := func(b []byte, v int) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
	var body []byte
	body = append(body, 7)   // config_id
	body = u16(body, 0x0020) // DHKEM(X25519, HKDF-SHA256)
	body = u16(body, 32)     // public key
	body = append(body, key.PublicKey().Bytes()...)
	body = u16(body, 4)      // cipher suites
	body = u16(body, 0x0001) // HKDF-SHA256
	body = u16(body, 0x0001) // AES-128-GCM
	body = append(body, 0)   // maximum name length
	body = append(body, byte(len(outer)))
	body = append(body, outer...)
	body = u16(body, 0) // extensions
	cfg := u16(u16(nil, 0xfe0d), len(body))
	cfg = append(cfg, body...)
	list := append(u16(nil, len(cfg)), cfg...)
	hello := captureHello(t, &tls.Config{ServerName: inner, MinVersion: tls.VersionTLS13, EncryptedClientHelloConfigList: list})
	if bytes.Contains(hello, []byte(inner)) || !bytes.Contains(hello, []byte(outer)) {
		t.Fatalf("the ECH ClientHello does not hide %q behind %q", inner, outer)
	}
	c.Write(hello)
}
