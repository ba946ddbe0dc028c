package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProxyTunnelHostFronting: an agent opens a plain-HTTP tunnel to an
// allowed host and names another site of the same front in a request's
// Host (domain fronting by Host), first or after an allowed request, in
// an absolute URL, or behind an upgrade the server declined, or turns the
// tunnel to TLS late (an upgrade to TLS, a handshake after a request),
// whose server name the proxy would not see. Each is
// answered 403, recorded, and never reaches the upstream; the tunnel's
// own host however spelled passes, a body sent after the server's 100
// Continue arrives, and a WebSocket the server accepts flows unread both
// ways.
func TestProxyTunnelHostFronting(t *testing.T) {
	var mu sync.Mutex
	var seen []string // every Host the upstream served
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Host)
		mu.Unlock()
		if r.URL.Path == "/ws" && r.Header.Get("Upgrade") == "websocket" {
			c, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			io.Copy(c, brw.Reader)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "host=%s body=%s", r.Host, b)
	})
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, &Proxy{Rules: rules}, up)
	get := func(host string) string { return "GET /x HTTP/1.1\r\nHost: " + host + "\r\n\r\n" }
	type exchange struct {
		send   string
		status int
		body   string // in the answer
	}
	rows := []struct {
		name    string
		steps   []exchange
		refused string // recorded; "" for none
	}{
		{"a second request naming another host", []exchange{{get("allowed.test"), 200, "host=allowed.test"}, {get("evil.test"), 403, "names another host"}}, "evil.test:80"},
		{"a first request naming another host", []exchange{{get("evil.test"), 403, "names another host"}}, "evil.test:80"},
		{"an absolute URL naming another host", []exchange{{"GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 403, "names another host"}}, "evil.test:80"},
		{"another port", []exchange{{get("allowed.test:8080"), 403, "names another host"}}, "allowed.test:8080"},
		{"a CONNECT inside the tunnel", []exchange{{"CONNECT allowed.test:80 HTTP/1.1\r\nHost: allowed.test:80\r\n\r\n", 403, "CONNECT"}}, "allowed.test:80"},
		{"an upgrade the server declined, then another host", []exchange{
			{"GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", 200, "host=allowed.test"},
			{get("evil.test"), 403, "names another host"}}, "evil.test:80"},
		{"no Host at all", []exchange{{"GET / HTTP/1.1\r\n\r\n", 403, "names no host"}}, `"(no Host header)":80`},
		{"user information naming another host", []exchange{{"GET http://evil.test@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 403, "user information"}}, "allowed.test:80"},
		{"two Host headers", []exchange{{"GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: evil.test\r\n\r\n", 403, "could not be read"}}, `"(unreadable HTTP request)":80`},
		{"a blank line before the request", []exchange{{"\r\n" + get("evil.test"), 403, "could not be read"}}, `"(unreadable HTTP request)":80`},
		{"an upgrade to HTTP/2, whose streams name their own hosts", []exchange{{"GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", 403, "only a WebSocket"}}, "allowed.test:80"},
		{"an upgrade to TLS in place (RFC 2817, HTTP's STARTTLS)", []exchange{{"GET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: TLS/1.0\r\n\r\n", 403, "only a WebSocket"}}, "allowed.test:80"},
		{"a TLS handshake after an allowed request (a late STARTTLS)", []exchange{{get("allowed.test"), 200, "host=allowed.test"},
			{"\x16\x03\x01\x00\x2a\x01\x00\x00\x26\x03\x03\r\n\r\n", 403, "could not be read"}}, `"(unreadable HTTP request)":80`},
		{"HTTP/2 with prior knowledge", []exchange{{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 403, "not HTTP/1.x"}}, `"(unreadable HTTP request)":80`},
		{"upper case", []exchange{{get("ALLOWED.Test"), 200, "host=ALLOWED.Test"}}, ""},
		{"a trailing dot", []exchange{{get("allowed.test."), 200, "host=allowed.test."}}, ""},
		{"the default port", []exchange{{get("allowed.test:80"), 200, "host=allowed.test:80"}}, ""},
		{"an absolute URL naming the tunnel's host", []exchange{{"GET http://Allowed.Test:80/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", 200, "host=Allowed.Test:80"}}, ""},
	}
	for _, r := range rows {
		mu.Lock()
		seen = nil
		mu.Unlock()
		before := len(w.log.Refusals())
		c, br := openTunnel(t, w.sock)
		for i, s := range r.steps {
			io.WriteString(c, s.send)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: request %d: %v", r.name, i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != s.status || !strings.Contains(string(b), s.body) {
				t.Errorf("%s: request %d answered %d %q, want %d with %q", r.name, i, resp.StatusCode, b, s.status, s.body)
			}
		}
		if r.refused != "" {
			// The refusal closed the tunnel.
			if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("%s: the tunnel stayed open after the refusal", r.name)
			}
		}
		c.Close()
		refused := w.log.Refusals()
		if r.refused == "" && len(refused) != before {
			t.Errorf("%s: recorded a refusal: %v", r.name, refused)
		}
		if r.refused != "" && !hasRefusal(refused, r.refused) {
			t.Errorf("%s: refusal of %s not recorded: %v", r.name, r.refused, refused)
		}
		mu.Lock()
		for _, h := range seen {
			if !strings.HasPrefix(strings.ToLower(h), "allowed.test") {
				t.Errorf("%s: the upstream served Host %q", r.name, h)
			}
		}
		mu.Unlock()
	}

	t.Run("websocket", func(t *testing.T) {
		c, br := openTunnel(t, w.sock)
		defer c.Close()
		io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
		io.WriteString(c, "\x81\x05frame, not HTTP\n")
		if line, err := br.ReadString('\n'); line != "\x81\x05frame, not HTTP\n" {
			t.Errorf("after 101 the echo was %q, %v", line, err)
		}
	})

	t.Run("expect continue", func(t *testing.T) {
		c, br := openTunnel(t, w.sock)
		defer c.Close()
		io.WriteString(c, "POST /x HTTP/1.1\r\nHost: allowed.test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusContinue {
			t.Fatalf("want the server's 100 Continue before the body is sent: %v %v", resp, err)
		}
		io.WriteString(c, "hello")
		resp, err = http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != "host=allowed.test body=hello" {
			t.Errorf("after 100 Continue: %d %q", resp.StatusCode, b)
		}
	})

	t.Run("oversized header", func(t *testing.T) {
		c, br := openTunnel(t, w.sock)
		defer c.Close()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const total = 64 << 20
		sent := make(chan int, 1)
		go func() {
			n := 0
			pad := []byte(strings.Repeat("a", 64<<10))
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: allowed.test\r\nX-Pad: "); err == nil {
				for n < total {
					m, err := c.Write(pad)
					n += m
					if err != nil {
						break
					}
				}
			}
			sent <- n
		}()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		n := <-sent
		runtime.GC()
		runtime.ReadMemStats(&after)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "header larger than") {
			t.Errorf("an endless header was answered %d %q", resp.StatusCode, b)
		}
		if n >= total {
			t.Errorf("the proxy took all %d bytes of a header", n)
		}
		if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 4<<20 {
			t.Errorf("the heap grew by %d bytes reading an endless header", grew)
		}
		if !hasRefusal(w.log.Refusals(), `"(unreadable HTTP request)":80`) {
			t.Errorf("the endless header was not recorded: %v", w.log.Refusals())
		}
	})
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		if !strings.HasPrefix(strings.ToLower(h), "allowed.test") {
			t.Errorf("the upstream served Host %q", h)
		}
	}
}

// TestProxyTunnelSlowHeader: inside a plain-HTTP tunnel an agent sends
// a request's header a piece at a time and never finishes it (slowloris),
// which held the tunnel and one of the proxy's connection slots until the
// 5-minute idle timeout; with every slot so held, the step's other
// programs got no connection. The header must now be whole within the
// header timeout, as outside a tunnel; the tunnel is refused and the
// refusal recorded. A tunnel that idles between requests, or before its
// first, is still served.
func TestProxyTunnelSlowHeader(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("allowed.test")
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	w := newWorld(t, &Proxy{Rules: rules, HeaderTimeout: timeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s", r.Host)
	}))
	get := "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
	answer := func(name string, br *bufio.Reader) (int, string) {
		t.Helper()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	slow := map[string]func(c net.Conn){
		"a header left unfinished": func(c net.Conn) { io.WriteString(c, "GET / HTTP/1.1\r\nHo") },
		"a header sent a byte at a time": func(c net.Conn) {
			for _, b := range []byte(get) {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(timeout / 8)
			}
		},
		"a second request left unfinished": func(c net.Conn) {
			io.WriteString(c, get)
			time.Sleep(timeout / 2)
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: allo")
		},
	}
	for name, send := range slow {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, br := openTunnel(t, w.sock)
			defer c.Close()
			start := time.Now()
			go send(c)
			status, body := answer(name, br)
			if status == http.StatusOK {
				status, body = answer(name, br)
			}
			if status != http.StatusForbidden || !strings.Contains(body, "not whole within") {
				t.Errorf("answered %d %q, want 403 naming the header timeout", status, body)
			}
			if d := time.Since(start); d > 10*timeout+2*time.Second {
				t.Errorf("the slow header held the tunnel %s", d)
			}
			if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Error("the tunnel stayed open after the refusal")
			}
		})
	}
	t.Run("idle between requests", func(t *testing.T) {
		t.Parallel()
		c, br := openTunnel(t, w.sock)
		defer c.Close()
		time.Sleep(2 * timeout)
		for i := 0; i < 2; i++ {
			io.WriteString(c, get)
			if status, body := answer("idle", br); status != http.StatusOK || body != "host=allowed.test" {
				t.Errorf("request %d after an idle while: %d %q", i, status, body)
			}
			time.Sleep(2 * timeout)
		}
	})
}

func hasRefusal(refused []Refusal, prefix string) bool {
	for _, f := range refused {
		if strings.HasPrefix(f.String(), prefix) {
			return true
		}
	}
	return false
}

// openTunnel opens a CONNECT tunnel to allowed.test:80 through the proxy
// listening on sock.
func openTunnel(t *testing.T, sock string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "CONNECT allowed.test:80 HTTP/1.1\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	return c, br
}
