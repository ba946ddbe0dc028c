package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A CONNECT tunnel whose first bytes are no TLS handshake carries plain
// HTTP, which a shared front routes by its Host header: CONNECT to an
// allowed host on port 80, then a request naming another site of the
// same front in its Host, reached that site (domain fronting by Host).
// Such a tunnel is therefore relayed request by request: each request's
// header is read (bounded), its Host and any absolute URL's host must be
// the tunnel's own, and only then is it sent on and its answer read and
// passed back. A request the proxy cannot read, or one naming another
// host, is answered 403 and ends the tunnel. After a 101 Switching
// Protocols answer (a WebSocket), the bytes flow unread both ways.

// errHeaderTooLarge ends the read of a tunnelled request's header.
var errHeaderTooLarge = errors.New("header too large")

// headerLimit lets at most n more bytes through (n < 0: any number),
// so a header that never ends cannot fill memory.
type headerLimit struct {
	r io.Reader
	n int64
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.n == 0 {
		return 0, errHeaderTooLarge
	}
	if l.n > 0 && int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	if l.n > 0 {
		l.n -= int64(n)
	}
	return n, err
}

// idleConn gives each read and write of c idle to happen, and no read
// past until, when set (a request's header being read).
type idleConn struct {
	c     net.Conn
	r     io.Reader
	idle  time.Duration
	until time.Time
}

func (c *idleConn) Read(p []byte) (int, error) {
	d := time.Now().Add(c.idle)
	if !c.until.IsZero() && c.until.Before(d) {
		d = c.until
	}
	_ = c.c.SetReadDeadline(d)
	return c.r.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	_ = c.c.SetWriteDeadline(time.Now().Add(c.idle))
	return c.c.Write(p)
}

// relayHTTP carries a plain-HTTP tunnel to host:port request by request
// (src holds the client's bytes, up is the upstream's connection) and
// returns when the tunnel ends; the caller closes both connections.
func (h *handler) relayHTTP(client net.Conn, src io.Reader, up net.Conn, host string, port int) {
	idle := h.p.IdleTimeout
	in := &idleConn{c: client, r: src, idle: idle}
	lim := &headerLimit{r: in, n: -1}
	cr := bufio.NewReader(lim)
	ulim := &headerLimit{r: &idleConn{c: up, r: up, idle: idle}, n: -1}
	ur := bufio.NewReader(ulim)
	toClient := &idleConn{c: client, idle: idle}
	toUp := &idleConn{c: up, idle: idle}
	for {
		// Between requests the tunnel may idle (a client keeps its
		// connection for later); once a request's first byte came, its
		// header must be whole within HeaderTimeout, as outside a tunnel:
		// a header sent a byte a minute held the tunnel, and a slot of the
		// proxy's, until the idle timeout.
		if _, err := cr.Peek(1); err != nil {
			return // the client is done, or silent until the tunnel idled
		}
		in.until = time.Now().Add(h.p.HeaderTimeout)
		lim.n = maxHeaderBytes + 4096
		req, err := http.ReadRequest(cr)
		tooLarge := lim.n == 0
		lim.n = -1
		// A deadline cutting a header short shows as the header's own
		// error ("malformed MIME header"), not as a timeout.
		late := err != nil && !time.Now().Before(in.until)
		in.until = time.Time{}
		if err == nil {
			err = sameHost(req, host, port)
		} else {
			why := "a request in a tunnel could not be read as HTTP (" + err.Error() + ")"
			switch {
			case tooLarge:
				why = fmt.Sprintf("a request in a tunnel has a header larger than %d bytes", maxHeaderBytes)
			case late:
				why = fmt.Sprintf("a request's header in a tunnel was not whole within %s", h.p.HeaderTimeout)
			}
			err = &refusal{host: "(unreadable HTTP request)", port: port, why: why}
		}
		var ref *refusal
		if errors.As(err, &ref) {
			h.p.record(ref)
			writeRefusal(toClient, ref)
			return
		}
		resp, sent, err := roundTrip(req, toUp, ur, ulim, toClient)
		if err != nil {
			return
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			// Only to a WebSocket the request asked for (sameHost let no
			// other upgrade through); anything else ends the tunnel.
			if req.Header.Get("Upgrade") != "" && strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
				passThrough(client, cr, up, ur, idle)
			}
			return
		}
		err = resp.Write(toClient)
		resp.Body.Close()
		// The request's body is read to its end before the next request.
		if err != nil || <-sent != nil || resp.Close || req.Close {
			return
		}
		// Bytes the server sent past its answer (a body to a HEAD or a
		// 204) answer no request: read as the next answer, a "101" among
		// them would switch the relay to passing bytes unread while the
		// server still reads requests. The tunnel ends instead.
		if ur.Buffered() > 0 {
			return
		}
	}
}

// maxAnswerHeaderBytes bounds each answer's header in a tunnel (ulim
// lets that much through ur, its reading buffer included), so a server
// whose header never ends cannot fill the proxy's memory.
const maxAnswerHeaderBytes = 1 << 20

// roundTrip sends req upstream (its body as the client sends it, while
// the answer is awaited) and returns the final answer, passing any
// interim 1xx answer but 101 back to the client first, and what sending
// the request ends with. ur reads the answers through ulim.
func roundTrip(req *http.Request, up io.Writer, ur *bufio.Reader, ulim *headerLimit, client io.Writer) (*http.Response, <-chan error, error) {
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // Write adds Go's otherwise
	}
	dropRouting(req.Header)
	// A chunked body's trailer is not sent on: Write would pass every
	// field of it once one is declared, a Host naming another site too.
	req.Trailer = nil
	// A body the client cannot finish (framing the relay cannot read)
	// leaves the server waiting for the rest and the relay for its
	// answer: the upstream is closed, which ends the wait and the tunnel.
	body := &bodyReadErr{r: req.Body}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = body
	}
	sent := make(chan error, 1)
	go func() {
		err := req.Write(up)
		if body.err != nil {
			closeConn(up)
		}
		sent <- err
	}()
	for {
		ulim.n = maxAnswerHeaderBytes + 4096
		resp, err := http.ReadResponse(ur, req)
		ulim.n = -1
		if err != nil {
			return nil, nil, fmt.Errorf("reading the answer to a tunnelled request: %w", err)
		}
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols:
			if err := <-sent; err != nil {
				return nil, nil, fmt.Errorf("sending a tunnelled request: %w", err)
			}
			return resp, nil, writeHead(client, resp)
		case resp.StatusCode >= 200:
			return resp, sent, nil // the request's body may still be on its way
		}
		if err := writeHead(client, resp); err != nil {
			return nil, nil, err
		}
	}
}

// bodyReadErr keeps the error, other than the end, that reading r ended
// with.
type bodyReadErr struct {
	r   io.ReadCloser
	err error
}

func (b *bodyReadErr) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

func (b *bodyReadErr) Close() error { return b.r.Close() }

// closeConn closes the connection behind w, when w is one.
func closeConn(w io.Writer) {
	if c, ok := w.(*idleConn); ok {
		c.c.Close()
	}
}

// writeHead writes an answer's status line and header, and no body.
func writeHead(w io.Writer, resp *http.Response) error {
	if _, err := fmt.Fprintf(w, "HTTP/%d.%d %s\r\n", resp.ProtoMajor, resp.ProtoMinor, resp.Status); err != nil {
		return err
	}
	if err := resp.Header.Write(w); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\r\n")
	return err
}

// sameHost refuses a tunnelled request whose Host, or absolute URL's
// host, is not the tunnel's (compared as the allow-list compares names:
// case, a trailing dot; a port, when given, must be the tunnel's), one
// naming no host, a CONNECT inside a tunnel, and an upgrade to anything
// but a WebSocket.
func sameHost(req *http.Request, host string, port int) error {
	want, err := ParseDest(host)
	if err != nil {
		return &refusal{host: host, port: port, why: err.Error()}
	}
	if req.ProtoMajor != 1 {
		return &refusal{host: "(unreadable HTTP request)", port: port, why: "a request in a tunnel is not HTTP/1.x (" + req.Proto + ")"}
	}
	if u := req.Header.Values("Upgrade"); len(u) > 0 && (len(u) > 1 || !strings.EqualFold(strings.TrimSpace(u[0]), "websocket")) {
		// After a switch to another protocol (h2c's HTTP/2) its requests
		// would name their own hosts unread.
		return &refusal{host: shownDest(want), port: port, why: fmt.Sprintf("a request in a tunnel asks to switch to %q; only a WebSocket is passed on", strings.Join(u, ", "))}
	}
	if req.Host == "" {
		return &refusal{host: "(no Host header)", port: port, why: "a request in a tunnel names no host"}
	}
	named := []string{req.Host}
	if req.URL.Host != "" {
		named = append(named, req.URL.Host) // an absolute-form target
	}
	for _, named := range named {
		if !bracketsFit(named) {
			return &refusal{host: "(bracketed host)", port: port,
				why: fmt.Sprintf("a request in a tunnel to %s names %q, brackets that hold no IPv6 address, which a front may read as another host", net.JoinHostPort(host, strconv.Itoa(port)), named)}
		}
		name, p := named, port
		if hn, ps, err := net.SplitHostPort(named); err == nil {
			n, err := strconv.Atoi(ps)
			if err != nil {
				n = -1
			}
			name, p = hn, n
		}
		d, err := ParseDest(name)
		switch {
		case err == nil && d == want && p == port && req.Method == http.MethodConnect:
			return &refusal{host: name, port: p, why: "a CONNECT request inside a tunnel is not passed on"}
		case err != nil || d != want || p != port:
			return &refusal{host: name, port: p,
				why: fmt.Sprintf("a request in a tunnel to %s names another host (%q), which a shared front would route it to", net.JoinHostPort(host, strconv.Itoa(port)), named)}
		}
	}
	if req.URL.User != nil {
		return &refusal{host: shownDest(want), port: port, why: "a request in a tunnel carries user information in its URL"}
	}
	return nil
}

// bracketsFit reports whether a Host (or URL host) has no brackets, or
// brackets around an IPv6 address at its start, as an IPv6 literal is
// written. ParseDest drops brackets around any name, and a front reads
// "[allowed.test]" its own way, not as allowed.test.
func bracketsFit(hostport string) bool {
	if !strings.ContainsAny(hostport, "[]") {
		return true
	}
	inner, rest, ok := strings.Cut(strings.TrimPrefix(hostport, "["), "]")
	if !ok || !strings.HasPrefix(hostport, "[") || strings.ContainsAny(rest, "[]") {
		return false
	}
	a, err := netip.ParseAddr(inner)
	return err == nil && a.Is6()
}

// shownDest is how a refusal shows d.
func shownDest(d Dest) string {
	if d.Addr.IsValid() {
		return d.Addr.String()
	}
	return d.Name
}

// writeRefusal answers a tunnelled request with the proxy's 403.
func writeRefusal(w io.Writer, ref *refusal) {
	body := ref.Error() + ".\nA plain-HTTP request in a CONNECT tunnel must name the tunnel's host; see docs/security.md.\n"
	fmt.Fprintf(w, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// passThrough copies both ways, unread, after a protocol switch, until
// both directions end or neither moves for idle.
func passThrough(client net.Conn, cr io.Reader, up net.Conn, ur io.Reader, idle time.Duration) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pipe(up, cr, client, idle, &last, nil) }()
	go func() { defer wg.Done(); pipe(client, ur, up, idle, &last, nil) }()
	wg.Wait()
}
