package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Guard holds the connections planex opens itself on an agent's behalf
// (a built-in agent's MCP servers) to the proxy's decision: the host on
// the allow-list, every address of a name's answer checked, and only the
// checked addresses dialled, at the moment of dialling. It is the way
// out for clients that run outside the sandbox, where the proxy cannot
// stand between them and the network.
type Guard struct {
	p Proxy
}

// NewGuard returns a Guard deciding as p would (its Rules, Resolve,
// Dial, Own, Log and Logger; Own read from the interfaces when nil).
func NewGuard(p Proxy) *Guard {
	if p.Own == nil {
		p.Own = ownAddrs()
	}
	return &Guard{p: p}
}

// DialContext connects to addr (host:port) when the allow-list lets it
// through and none of its addresses is forbidden, recording a refusal
// as the proxy does. Refusals are ErrRefused.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := g.p.dialChecked(ctx, network, addr)
	var ref *refusal
	if errors.As(err, &ref) {
		g.p.record(ref)
	}
	return c, err
}

// Client returns an HTTP client whose every connection is dialled by g,
// that never goes through a proxy the environment names (it would be
// the one dialled, not the server), and that refuses redirects to
// another origin (SameOrigin).
func (g *Guard) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         g.DialContext,
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     30 * time.Second,
			TLSHandshakeTimeout: dialTimeout,
			// An allowed server (an MCP server the maintainer named) is
			// still not trusted with planex's memory: Go's default would
			// hold 10 MiB of its answer's header per connection.
			MaxResponseHeaderBytes: maxAnswerHeaderBytes,
		},
		CheckRedirect: SameOrigin,
		Timeout:       timeout,
	}
}

// ErrCrossOrigin marks a redirect to another scheme, host or port.
var ErrCrossOrigin = errors.New("a redirect to another origin is not followed")

// SameOrigin is an http.Client's CheckRedirect that follows a redirect
// only to the scheme, host and port of the request it answers (at most
// 10 of them). Another origin is refused: the headers a client adds to
// every request (a server's token) would go there, and a name the
// allow-list lets through would lead to one it never saw.
func SameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	prev := via[len(via)-1].URL
	if origin(req.URL) != origin(prev) {
		return fmt.Errorf("redirect from %s to %s: %w", prev.Redacted(), req.URL.Redacted(), ErrCrossOrigin)
	}
	return nil
}

// origin is a URL's scheme, host and port, a missing port as the
// scheme's own.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[scheme == "https"]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
