//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
)

// countingMCP is a real streamable-HTTP MCP server with one tool that
// counts the requests it was sent.
func countingMCP(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "svc", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "ping", Description: "Ping."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		// The SDK refuses a Host other than localhost on a loopback
		// listener; here the listener stands for a public server.
		r.Host = "localhost"
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestSessionHTTPEgress: with the network contained, a built-in agent's
// MCP client (planex, outside the sandbox) reaches HTTP servers only as
// the egress proxy would let it. A configuration naming an allowed host
// whose DNS answer is loopback (a Docker API, a local admin port), the
// metadata services, or a host off the list, gets a refusal and the
// service on that address sees no request; an allowed host with a
// public address, the user's own address rule and a rule naming
// localhost itself are reached. The resolver and dialer stand in for
// DNS and the network: every dial lands on the test server, so a dial
// the check let through would show as a request there.
func TestSessionHTTPEgress(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		host        string // the URL's host; the server's port is added
		rules       string // the allow-list (--allow-host)
		clientRules string // the user's own MCP configuration's servers
		answer      string // the resolver's answer for any name
		reach       bool
	}{
		{"allowed name to loopback", "mcp.example.com", "mcp.example.com:PORT", "", "127.0.0.1", false},
		{"allowed name to IPv6 loopback", "mcp.example.com", "mcp.example.com:PORT", "", "::1", false},
		{"allowed name to the metadata service", "mcp.example.com", "mcp.example.com:PORT", "", "169.254.169.254", false},
		{"allowed name to AWS metadata over IPv6", "mcp.example.com", "mcp.example.com:PORT", "", "fd00:ec2::254", false},
		{"allowed name to Azure WireServer", "mcp.example.com", "mcp.example.com:PORT", "", "168.63.129.16", false},
		{"name off the list", "evil.example.net", "mcp.example.com:PORT", "", "203.0.113.9", false},
		{"address off the list", "127.0.0.1", "mcp.example.com:PORT", "", "", false},
		{"allowed name to a public address", "mcp.example.com", "mcp.example.com:PORT", "", "203.0.113.9", true},
		{"user's own server by address", "127.0.0.1", "", "127.0.0.1:PORT", "", true},
		{"user's own server on localhost", "localhost", "", "localhost:PORT", "127.0.0.1", true},
		{"user's own server by name to loopback", "mcp.internal.example", "", "mcp.internal.example:PORT", "127.0.0.1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, hits := countingMCP(t)
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
			parse := func(s string) []egress.Rule {
				r, err := egress.ParseRules(strings.ReplaceAll(s, "PORT", port))
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			var mu sync.Mutex
			var dialed []string
			eg := &agent.Egress{Rules: parse(c.rules), ClientRules: parse(c.clientRules), Log: &egress.Log{},
				Resolve: func(context.Context, string) ([]netip.Addr, error) {
					return []netip.Addr{netip.MustParseAddr(c.answer)}, nil
				},
				Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
					mu.Lock()
					dialed = append(dialed, addr)
					mu.Unlock()
					var d net.Dialer
					return d.DialContext(ctx, network, srv.Listener.Addr().String())
				}}
			doc := `{"mcpServers":{"svc":{"type":"http","url":"http://` + net.JoinHostPort(c.host, port) + `/mcp"}}}`
			cfg, err := mcp.Parse([]byte(doc), "test", env(nil))
			if err != nil {
				t.Fatal(err)
			}
			s, err := mcp.Start(context.Background(), cfg, mcp.StartOptions{Dir: t.TempDir(), StartTimeout: 10 * time.Second,
				Contain: agent.Containment{Network: sandbox.NetworkContained, Egress: eg}})
			if !c.reach {
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, egress.ErrRefused) || hits.Load() != 0 || len(dialed) != 0 {
					t.Errorf("err %v; %d requests reached the service, dialled %v: want a refusal and none", err, hits.Load(), dialed)
				}
				if len(eg.Log.Refusals()) == 0 {
					t.Error("the refusal was not recorded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if res, err := s.Call(context.Background(), "mcp__svc__ping", json.RawMessage(`{}`)); err != nil || res.Text != "pong" {
				t.Errorf("call: %+v %v", res, err)
			}
		})
	}
}

// TestSessionHTTPRedirect: an MCP server that answers the handshake
// with a redirect to another origin (here a service on this machine's
// loopback) is not followed, with the network contained or open: the
// target sees no request, and with it not the token the configuration
// gives the server.
func TestSessionHTTPRedirect(t *testing.T) {
	t.Parallel()
	for _, network := range []sandbox.Network{sandbox.NetworkContained, sandbox.NetworkOpen} {
		t.Run(string(network), func(t *testing.T) {
			t.Parallel()
			target, hits := countingMCP(t)
			hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/mcp", http.StatusTemporaryRedirect)
			}))
			defer hop.Close()
			hopAddr := strings.TrimPrefix(hop.URL, "http://")
			contain := agent.Containment{Network: network}
			if network == sandbox.NetworkContained {
				rules, err := egress.ParseRules(hopAddr)
				if err != nil {
					t.Fatal(err)
				}
				contain.Egress = &agent.Egress{ClientRules: rules, Log: &egress.Log{}}
			}
			doc := `{"mcpServers":{"svc":{"type":"http","url":"` + hop.URL + `/mcp","headers":{"Authorization":"Bearer svc-token"}}}}`
			cfg, err := mcp.Parse([]byte(doc), "test", env(nil))
			if err != nil {
				t.Fatal(err)
			}
			s, err := mcp.Start(context.Background(), cfg, mcp.StartOptions{Dir: t.TempDir(), StartTimeout: 10 * time.Second, Contain: contain})
			if err == nil {
				s.Close()
			}
			if !errors.Is(err, egress.ErrCrossOrigin) || hits.Load() != 0 {
				t.Errorf("err %v; the redirect's target got %d requests: want a refused redirect and none", err, hits.Load())
			}
		})
	}
}
