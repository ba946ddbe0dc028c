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
// an absolute URL, or behind an upgrade the server declined. Each is
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
