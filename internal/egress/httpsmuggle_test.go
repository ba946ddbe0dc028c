package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawFront stands for a shared front behind an allowed host: it keeps
// every byte the proxy sends it and reads them as requests the way a
// strict server does, answering each with "ok" (no body to a HEAD).
type rawFront struct {
	mu    sync.Mutex
	wire  bytes.Buffer
	hosts []string
}

func (f *rawFront) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(io.TeeReader(c, frontWire{f}))
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.hosts = append(f.hosts, req.Host)
		f.mu.Unlock()
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		answer := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
		if req.Method == http.MethodHead {
			answer = strings.TrimSuffix(answer, "ok")
		}
		if _, err := io.WriteString(c, answer); err != nil {
			return
		}
	}
}

type frontWire struct{ f *rawFront }

func (w frontWire) Write(p []byte) (int, error) {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	return w.f.wire.Write(p)
}

// newFrontProxy serves a proxy allowing allowed.test, whose tunnels lead
// to a server answering each connection with serve, on a socket it
// returns.
func newFrontProxy(t *testing.T, serve func(net.Conn)) (string, *Log) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	log := &Log{}
	p := &Proxy{Rules: rules, Log: log, Own: []netip.Addr{netip.MustParseAddr("192.0.2.2")},
		Resolve: func(_ context.Context, name string) ([]netip.Addr, error) {
			if name == "allowed.test" {
				return []netip.Addr{netip.MustParseAddr("203.0.113.10")}, nil
			}
			return nil, errors.New("no such host")
		},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, ln.Addr().String())
		},
	}
	sock := filepath.Join(t.TempDir(), "egress.sock")
	pl, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, pl) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return sock, log
}

// TestProxyTunnelSmuggling: an agent in a plain-HTTP tunnel to an allowed
// host tries to have the front behind it read a request naming another
// host that the relay did not check: framing the relay and the front
// could read apart (Content-Length with Transfer-Encoding, "chunked,
// identity", folded and bare-LF header lines, a NUL or a lone CR in a
// header), requests sent together before any answer, a Host the front
// may read otherwise (userinfo, a bracketed name, an IPv6 literal,
// percent-encoding, another scheme) and a trailer naming another host.
// Each either is refused with 403 or reaches the front as one request,
// in plain CRLF framing, naming allowed.test and nothing else.
func TestProxyTunnelSmuggling(t *testing.T) {
	t.Parallel()
	type answer struct {
		status int
		body   string // in the answer
	}
	get := func(host string) string { return "GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n" }
	ok := answer{200, "ok"}
	unreadable := answer{403, "could not be read"}
	another := answer{403, "names another host"}
	brackets := answer{403, "brackets that hold no IPv6 address"}
	rows := []struct {
		name    string
		send    string
		head    bool // the first request is a HEAD
		answers []answer
		// requests the front read, all naming allowed.test
		reached int
		// the front's bytes may hold "evil" only inside a body the
		// front read as one
		evilInBody bool
	}{
		{name: "Content-Length and chunked, a request after the chunked end",
			send:    "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 42\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + get("evil.test"),
			answers: []answer{ok, another}, reached: 1},
		{name: "chunked and a short Content-Length, a request inside the chunks",
			send:    "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n" + fmt.Sprintf("%x", len(get("evil.test"))) + "\r\n" + get("evil.test") + "\r\n0\r\n\r\n",
			answers: []answer{ok}, reached: 1, evilInBody: true},
		{name: "chunked, identity", send: "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + get("evil.test"),
			answers: []answer{unreadable}},
		{name: "a folded Transfer-Encoding", send: "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + get("evil.test"),
			answers: []answer{ok, another}, reached: 1},
		{name: "a folded Host", send: "GET / HTTP/1.1\r\nHost: allowed.test\r\n evil.test\r\n\r\n", answers: []answer{another}},
		{name: "bare LF line ends", send: "GET / HTTP/1.1\nHost: allowed.test\nX-A: b\n\n" + "GET / HTTP/1.1\nHost: evil.test\n\n",
			answers: []answer{ok, another}, reached: 1},
		{name: "a NUL in a header", send: "GET / HTTP/1.1\r\nHost: allowed.test\r\nX-A: a\x00\r\nHost: evil.test\r\n\r\n", answers: []answer{unreadable}},
		{name: "a lone CR hiding a Host", send: "GET / HTTP/1.1\r\nHost: allowed.test\r\nX-A: a\rHost: evil.test\r\n\r\n", answers: []answer{unreadable}},
		{name: "two requests before any answer", send: get("allowed.test") + get("evil.test"), answers: []answer{ok, another}, reached: 1},
		{name: "a HEAD and another host before any answer", send: "HEAD / HTTP/1.1\r\nHost: allowed.test\r\n\r\n" + get("evil.test"), head: true,
			answers: []answer{{200, ""}, another}, reached: 1},
		{name: "userinfo in Host", send: get("allowed.test@evil.test"), answers: []answer{another}},
		{name: "a port and userinfo in Host", send: get("allowed.test:80@evil.test"), answers: []answer{another}},
		{name: "a name in brackets", send: get("[allowed.test]"), answers: []answer{brackets}},
		{name: "a name in brackets with a port", send: get("[allowed.test]:80"), answers: []answer{brackets}},
		{name: "an unclosed bracket", send: get("allowed.test]"), answers: []answer{brackets}},
		{name: "an IPv6 literal", send: get("[::1]"), answers: []answer{another}},
		{name: "a percent-encoded Host", send: get("%61llowed.test"), answers: []answer{another}},
		{name: "two Host headers, the second another host", send: "GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: evil.test\r\n\r\n", answers: []answer{unreadable}},
		{name: "two Host headers, the first another host", send: "GET / HTTP/1.1\r\nHost: evil.test\r\nHost: allowed.test\r\n\r\n", answers: []answer{unreadable}},
		{name: "two trailing dots", send: get("allowed.test.."), answers: []answer{another}},
		{name: "two trailing dots and a port", send: get("allowed.test..:80"), answers: []answer{another}},
		{name: "an absolute URL with two trailing dots", send: "GET http://allowed.test../ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", answers: []answer{another}},
		{name: "a percent-encoded absolute URL", send: "GET http://%61llowed.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", answers: []answer{unreadable}},
		{name: "an absolute URL of another scheme naming another host", send: "GET ftp://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", answers: []answer{another}},
		{name: "an https absolute URL naming the tunnel's host", send: "GET https://allowed.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", answers: []answer{ok}, reached: 1},
		{name: "a declared trailer naming another host",
			send:    "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n0\r\nX-T: a\r\nHost: evil.test\r\n\r\n",
			answers: []answer{ok}, reached: 1},
		{name: "two different lengths", send: "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 1\r\nContent-Length: 30\r\n\r\nx" + get("evil.test"), answers: []answer{unreadable}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			front := &rawFront{}
			sock, _ := newFrontProxy(t, front.serve)
			c, br := openTunnel(t, sock)
			defer c.Close()
			io.WriteString(c, r.send)
			for i, want := range r.answers {
				var req *http.Request
				if i == 0 && r.head {
					req = &http.Request{Method: http.MethodHead}
				}
				resp, err := http.ReadResponse(br, req)
				if err != nil {
					t.Fatalf("answer %d: %v", i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != want.status || !strings.Contains(string(b), want.body) {
					t.Errorf("answer %d: %d %q, want %d with %q", i, resp.StatusCode, b, want.status, want.body)
				}
			}
			c.Close()
			// Let the proxy's relay end before reading what the front got.
			time.Sleep(50 * time.Millisecond)
			front.mu.Lock()
			defer front.mu.Unlock()
			wire := front.wire.String()
			if len(front.hosts) != r.reached {
				t.Errorf("the front read %d requests (%q), want %d; it got %q", len(front.hosts), front.hosts, r.reached, wire)
			}
			for _, h := range front.hosts {
				if h != "allowed.test" {
					t.Errorf("the front read a request for %q; it got %q", h, wire)
				}
			}
			if strings.Contains(wire, "evil") && !r.evilInBody {
				t.Errorf("another host reached the front: %q", wire)
			}
			if strings.Contains(strings.ReplaceAll(wire, "\r\n", ""), "\n") || strings.Contains(wire, "\r\n ") || strings.Contains(wire, "\r\n\t") {
				t.Errorf("the front got a bare LF or a folded line: %q", wire)
			}
		})
	}
}

// TestBracketsFit: brackets pass only around an IPv6 address at a Host's
// start, as an IPv6 literal is written, with or without a port.
func TestBracketsFit(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"allowed.test": true, "allowed.test:80": true, "[2001:db8::1]": true, "[2001:db8::1]:80": true, "[::ffff:192.0.2.1]": true,
		"[allowed.test]": false, "[allowed.test]:80": false, "allowed.test]": false, "[allowed.test": false,
		"[192.0.2.1]": false, "[2001:db8::1]]": false, "x[2001:db8::1]": false, "[2001:db8::1]:[80]": false,
	} {
		if got := bracketsFit(host); got != want {
			t.Errorf("bracketsFit(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestProxyTunnelEndlessAnswerHeader: the server behind a plain-HTTP
// tunnel answers with a header that never ends (or interim 1xx answers
// without end, each with a long header). The relay stops reading at its
// bound and ends the tunnel; it never holds the header whole.
func TestProxyTunnelEndlessAnswerHeader(t *testing.T) {
	const total = 64 << 20
	for _, first := range []string{"HTTP/1.1 200 OK\r\nX-Pad: ", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 103 Early Hints\r\nX-Pad: "} {
		sentc := make(chan int, 1)
		sock, _ := newFrontProxy(t, func(c net.Conn) {
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
				sentc <- 0
				return
			}
			n := 0
			pad := []byte(strings.Repeat("a", 64<<10))
			if _, err := io.WriteString(c, first); err == nil {
				for n < total {
					m, err := c.Write(pad)
					n += m
					if err != nil {
						break
					}
				}
			}
			sentc <- n
		})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, br := openTunnel(t, sock)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
		// The client sees at most the interim answer, then the end.
		for {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				break
			}
			if resp.StatusCode != http.StatusEarlyHints {
				t.Errorf("%q...: the client got a %d", first, resp.StatusCode)
				break
			}
		}
		n := <-sentc
		c.Close()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n >= total {
			t.Errorf("%q...: the relay took all %d bytes of an answer's header", first, n)
		}
		if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 8<<20 {
			t.Errorf("%q...: the heap grew by %d bytes reading an endless answer header", first, grew)
		}
	}
}

// TestProxyTunnelAnswerPastItsEnd: the server behind a plain-HTTP tunnel
// sends bytes past an answer's end (a body to a HEAD, whose content the
// agent chose: a "101 Switching Protocols"). Read as the answer to the
// agent's next request, an upgrade, they switched the relay to passing
// bytes unread while the server still read requests, and the agent's
// next one named another host. The tunnel ends at the stray bytes and
// no request after them reaches the server.
func TestProxyTunnelAnswerPastItsEnd(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hosts []string
	sock, _ := newFrontProxy(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			mu.Lock()
			hosts = append(hosts, req.Host)
			mu.Unlock()
			io.Copy(io.Discard, req.Body)
			answer := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
			if req.Method == http.MethodHead {
				// A misframing server: a body to a HEAD, whose bytes
				// (a file the agent put there) look like an answer.
				fake := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
				answer = "HTTP/1.1 200 OK\r\nContent-Length: " + fmt.Sprint(len(fake)) + "\r\n\r\n" + fake
			}
			if _, err := io.WriteString(c, answer); err != nil {
				return
			}
		}
	})
	c, br := openTunnel(t, sock)
	defer c.Close()
	io.WriteString(c, "HEAD /planted HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodHead})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD: %v %v", resp, err)
	}
	// Once the relay read the HEAD's answer, the rest is in its buffer.
	time.Sleep(50 * time.Millisecond)
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet}); err == nil {
		t.Logf("the upgrade was answered %d", resp.StatusCode)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for _, h := range hosts {
		if h != "allowed.test" {
			t.Errorf("the server read a request for %q after the stray answer (all: %q)", h, hosts)
		}
	}
	if len(hosts) != 1 {
		t.Errorf("the server read %d requests (%q), want only the HEAD", len(hosts), hosts)
	}
}

// TestProxyTunnelEndlessBodyFraming: an agent streams a chunked body
// whose framing never ends (a chunk extension, a trailer, a chunk size
// of endless digits). The relay stops at a line it cannot hold and ends
// the tunnel at once (the server, still waiting for the body's end, kept
// it open until it idled); it neither takes the whole stream nor holds
// it.
func TestProxyTunnelEndlessBodyFraming(t *testing.T) {
	const total = 64 << 20
	front := &rawFront{}
	sock, _ := newFrontProxy(t, front.serve)
	head := "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, r := range []struct{ name, start, fill string }{
		{"a chunk extension", "5;ext=", "a"},
		{"a trailer", "5\r\nhello\r\n0\r\nX-Trailer: ", "a"},
		{"a chunk size", "1", "0"},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		c, _ := openTunnel(t, sock)
		c.SetDeadline(time.Now().Add(30 * time.Second))
		n := 0
		pad := []byte(strings.Repeat(r.fill, 64<<10))
		if _, err := io.WriteString(c, head+r.start); err == nil {
			for n < total {
				m, err := c.Write(pad)
				n += m
				if err != nil {
					break
				}
			}
		}
		c.Close()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n >= total {
			t.Errorf("%s: the relay took all %d bytes of endless framing", r.name, n)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s: the tunnel stayed open %v after the relay stopped reading", r.name, took)
		}
		if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 8<<20 {
			t.Errorf("%s: the heap grew by %d bytes", r.name, grew)
		}
	}
	time.Sleep(50 * time.Millisecond)
	front.mu.Lock()
	defer front.mu.Unlock()
	// Each request's header reached the server, never the framing whole.
	if front.wire.Len() > 1<<20 {
		t.Errorf("the server got %d bytes of endless framing", front.wire.Len())
	}
}

// TestProxyTunnelHostCaseMapping: in a plain-HTTP tunnel to an allowed
// name holding an i or a k, an agent writes the Host with a letter
// Unicode lower-cases to that ASCII letter (a dotted capital I, the Kelvin
// sign), or with two trailing dots. Compared lower-cased, it was the
// tunnel's own host and went on as written, to a front that reads those
// bytes its own way (its default site, say). Each is refused.
func TestProxyTunnelHostCaseMapping(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tunnel, host string
		ok           bool
	}{
		{"api.example.com", "api.example.com", true},
		{"api.example.com", "API.Example.COM.", true},
		{"api.example.com", "ap\u0130.example.com", false},
		{"api.example.com", "AP\u0130.EXAMPLE.COM:80", false},
		{"pkg.example.org", "p\u212ag.example.org", false},
		{"pkg.example.org", "pkg.example.org..", false},
	} {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: " + c.host + "\r\n\r\n")))
		if err != nil {
			t.Fatalf("%q: %v", c.host, err)
		}
		err = sameHost(req, c.tunnel, 80)
		if (err == nil) != c.ok {
			t.Errorf("a request for %q in a tunnel to %s: %v, want passed = %v", c.host, c.tunnel, err, c.ok)
		}
	}
}
