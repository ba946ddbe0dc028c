package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGuardDial: a connection planex opens itself (a built-in agent's
// MCP server) takes the proxy's decision where it is dialled. An
// allowed name whose answer holds loopback, the metadata services, a
// NAT64 form of one, or for a wildcard a private address, is refused
// with nothing dialled, even when another address of the answer is
// public; what is dialled is exactly an address the check saw. The
// user's own address rule, and a rule naming localhost, reach loopback.
func TestGuardDial(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		rules   string
		addr    string
		network string
		answer  []string
		want    string // the address dialled; "" for a refusal
	}{
		{"name to loopback", "mcp.example.com:8080", "mcp.example.com:8080", "tcp", []string{"127.0.0.1"}, ""},
		{"name to loopback among public", "mcp.example.com", "mcp.example.com:443", "tcp", []string{"203.0.113.5", "127.0.0.1"}, ""},
		{"name to IPv6 loopback", "mcp.example.com", "mcp.example.com:443", "tcp", []string{"::1"}, ""},
		{"name to the metadata service", "mcp.example.com", "mcp.example.com:80", "tcp", []string{"169.254.169.254"}, ""},
		{"name to AWS metadata over IPv6", "mcp.example.com", "mcp.example.com:80", "tcp", []string{"fd00:ec2::254"}, ""},
		{"name to Azure WireServer", "mcp.example.com", "mcp.example.com:80", "tcp", []string{"168.63.129.16"}, ""},
		{"name to metadata through NAT64", "mcp.example.com", "mcp.example.com:80", "tcp", []string{"64:ff9b::a9fe:a9fe"}, ""},
		{"wildcard name to a private address", "*.example.com", "mcp.example.com:443", "tcp", []string{"10.1.2.3"}, ""},
		{"name off the list", "other.example.com", "mcp.example.com:443", "tcp", []string{"203.0.113.5"}, ""},
		{"port off the list", "mcp.example.com:8080", "mcp.example.com:9090", "tcp", []string{"203.0.113.5"}, ""},
		{"not TCP", "mcp.example.com", "mcp.example.com:443", "udp", []string{"203.0.113.5"}, ""},
		{"localhost to the metadata service", "localhost:8080", "localhost:8080", "tcp", []string{"169.254.169.254"}, ""},
		// Held (red-team review): other spellings of this machine.
		{"name to IPv4-mapped loopback", "mcp.example.com", "mcp.example.com:443", "tcp", []string{"::ffff:127.0.0.1"}, ""},
		{"name to 0.0.0.0", "mcp.example.com", "mcp.example.com:443", "tcp", []string{"0.0.0.0"}, ""},
		{"name to ::", "mcp.example.com", "mcp.example.com:443", "tcp", []string{"::"}, ""},
		{"decimal loopback beside a localhost rule", "localhost:8080", "2130706433:8080", "tcp", []string{"127.0.0.1"}, ""},
		{"octal loopback beside a localhost rule", "localhost:8080", "0177.0.0.1:8080", "tcp", []string{"127.0.0.1"}, ""},
		{"IPv4-mapped loopback beside a localhost rule", "localhost:8080", "[::ffff:127.0.0.1]:8080", "tcp", nil, ""},
		{"unspecified address beside a localhost rule", "localhost:8080", "0.0.0.0:8080", "tcp", nil, ""},
		{"localhost with two dots", "localhost:8080", "localhost..:8080", "tcp", []string{"127.0.0.1"}, ""},
		{"a name below localhost", "localhost:8080", "x.localhost:8080", "tcp", []string{"127.0.0.1"}, ""},
		{"localhost's dot form is localhost", "localhost:8080", "localhost.:8080", "tcp", []string{"127.0.0.1"}, "127.0.0.1:8080"},
		{"allowed name to a public address", "mcp.example.com", "mcp.example.com:443", "tcp", []string{"203.0.113.5"}, "203.0.113.5:443"},
		{"user's address rule to loopback", "127.0.0.1:8080", "127.0.0.1:8080", "tcp", nil, "127.0.0.1:8080"},
		{"user's localhost rule", "localhost:8080", "localhost:8080", "tcp", []string{"127.0.0.1"}, "127.0.0.1:8080"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rules, err := ParseRules(c.rules)
			if err != nil {
				t.Fatal(err)
			}
			var dialed []string
			log := &Log{}
			g := NewGuard(Proxy{Rules: rules, Log: log, Own: []netip.Addr{},
				Resolve: func(context.Context, string) ([]netip.Addr, error) {
					var out []netip.Addr
					for _, a := range c.answer {
						out = append(out, netip.MustParseAddr(a))
					}
					return out, nil
				},
				Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
					dialed = append(dialed, addr)
					a, b := net.Pipe()
					b.Close()
					return a, nil
				}})
			conn, err := g.DialContext(context.Background(), c.network, c.addr)
			if c.want == "" {
				if !errors.Is(err, ErrRefused) || len(dialed) != 0 {
					t.Errorf("err %v, dialled %v: want a refusal and nothing dialled", err, dialed)
				}
				if len(log.Refusals()) != 1 {
					t.Errorf("refusals recorded: %v", log.Refusals())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
			if len(dialed) != 1 || dialed[0] != c.want {
				t.Errorf("dialled %v, want %s", dialed, c.want)
			}
		})
	}
}

// TestGuardRebinding: a name whose answer changes from one lookup to the
// next (public, then loopback) is checked at every connection, and the
// address dialled is always one of the answer just checked: loopback is
// never dialled.
func TestGuardRebinding(t *testing.T) {
	t.Parallel()
	rules, _ := ParseRules("rebind.example.com")
	var lookups atomic.Int32
	var mu sync.Mutex
	var dialed []string
	g := NewGuard(Proxy{Rules: rules, Own: []netip.Addr{},
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			if lookups.Add(1)%2 == 1 {
				return []netip.Addr{netip.MustParseAddr("203.0.113.7")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			a, b := net.Pipe()
			b.Close()
			return a, nil
		}})
	refused := 0
	for range 4 {
		c, err := g.DialContext(context.Background(), "tcp", "rebind.example.com:443")
		if errors.Is(err, ErrRefused) {
			refused++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if refused != 2 {
		t.Errorf("refused %d of 4, want 2", refused)
	}
	for _, d := range dialed {
		if d != "203.0.113.7:443" {
			t.Errorf("dialled %s", d)
		}
	}
}

// TestGuardClientRedirect: an allowed server that answers with a
// redirect to another origin (a service on this machine, with the
// client's token in tow) is not followed: the target sees no request.
// A redirect within the server's own origin is followed.
func TestGuardClientRedirect(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	defer target.Close()
	var allowed *httptest.Server
	allowed = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, target.URL+"/steal", http.StatusTemporaryRedirect)
		case "/away-by-name":
			http.Redirect(w, r, strings.Replace(target.URL, "127.0.0.1", "localhost", 1), http.StatusFound)
		case "/moved":
			http.Redirect(w, r, allowed.URL+"/here", http.StatusTemporaryRedirect)
		default:
			io.WriteString(w, "here")
		}
	}))
	defer allowed.Close()
	// The maintainer allowed the server's address, and, for this test,
	// loopback by name too: the redirect is refused as a redirect.
	rules, err := ParseRules(strings.TrimPrefix(allowed.URL, "http://"), "localhost:"+target.URL[strings.LastIndex(target.URL, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	c := NewGuard(Proxy{Rules: rules}).Client(0)
	for _, path := range []string{"/away", "/away-by-name"} {
		resp, err := c.Post(allowed.URL+path, "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrCrossOrigin) {
			t.Errorf("%s: err %v, want a refused redirect", path, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
	resp, err := c.Post(allowed.URL+"/moved", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "here" {
		t.Errorf("same-origin redirect: %q", b)
	}
}

// TestGuardClientAnswerHeaderBounded: an allowed server (an MCP server a
// maintainer named, since taken over) answers with a 3 MiB header; the
// guarded client refuses it rather than holding it, as the proxy does
// (Go's default would keep up to 10 MiB a connection).
func TestGuardClientAnswerHeaderBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Pad", strings.Repeat("a", 3<<20))
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rules, err := ParseRules(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := NewGuard(Proxy{Rules: rules}).Client(10 * time.Second).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a 3 MiB answer header was read whole (status %d)", resp.StatusCode)
	}
	t.Logf("refused: %v", err)
}
