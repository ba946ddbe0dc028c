package egress

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestProxyDNSRebinding: a name whose DNS answer changes between lookups
// (the public address a check sees, then loopback or the metadata
// service, as a rebinding name server answers with a zero TTL). The
// proxy dials only addresses a check of its own saw and passed (a
// forwarded request is checked again where it is dialled): whatever the
// order of answers, loopback and the metadata service are never
// dialled, through a tunnel or a forwarded request, on a new connection
// or a kept one, and a request whose answer changed is refused.
func TestProxyDNSRebinding(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("rebind.test")
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: echoHost()}
	go srv.Serve(upstream)
	t.Cleanup(func() { srv.Close() })
	p := &Proxy{Rules: rules, Log: &Log{}}
	var mu sync.Mutex
	lookups := 0
	answers := []string{"203.0.113.10", "127.0.0.1", "203.0.113.10", "169.254.169.254"}
	p.Resolve = func(context.Context, string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		a := answers[lookups%len(answers)]
		lookups++
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	var dialed []string
	p.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		if strings.HasPrefix(addr, "203.0.113.10:") {
			addr = upstream.Addr().String()
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	w := &world{sock: filepath.Join(t.TempDir(), "egress.sock"), log: p.Log}
	ln, err := net.Listen("unix", w.sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	var statuses []string
	for _, req := range []string{
		"GET http://rebind.test/1 HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n",
		"GET http://rebind.test/2 HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n",
		"CONNECT rebind.test:80 HTTP/1.1\r\n\r\n",
		"CONNECT rebind.test:80 HTTP/1.1\r\n\r\n",
		"GET http://rebind.test/5 HTTP/1.1\r\nHost: rebind.test\r\n\r\n",
		"GET http://rebind.test/6 HTTP/1.1\r\nHost: rebind.test\r\n\r\n",
	} {
		status, _ := w.raw(t, req)
		statuses = append(statuses, status)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, d := range dialed {
		if d != "203.0.113.10:80" {
			t.Errorf("the proxy dialed %s, an address its check refused", d)
		}
	}
	ok, refused := 0, 0
	for _, s := range statuses {
		switch {
		case strings.Contains(s, " 200 "):
			ok++
		case strings.Contains(s, " 403 "):
			refused++
		}
	}
	if ok == 0 || refused == 0 || ok+refused != len(statuses) {
		t.Errorf("statuses %q: want the public answers served and the rebound ones refused", statuses)
	}
	if len(dialed) > ok {
		t.Errorf("%d dials for %d requests served: %v", len(dialed), ok, dialed)
	}
}
