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
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
)

// Defaults for the Proxy's limits.
const (
	DefaultMaxConns    = 64
	DefaultIdleTimeout = 5 * time.Minute
	maxHeaderBytes     = 16 << 10
	headerTimeout      = 10 * time.Second
	dialTimeout        = 15 * time.Second
)

// Proxy is an allow-list HTTP proxy for one step. The zero value refuses
// everything; set Rules to let destinations through.
type Proxy struct {
	Rules []Rule
	// Log receives every refusal; nil records none.
	Log *Log
	// Resolve finds a name's addresses; nil uses the system's resolver.
	Resolve func(ctx context.Context, name string) ([]netip.Addr, error)
	// Dial connects to an address the proxy checked; nil dials TCP.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Own lists the machine's own addresses, which a name may not lead
	// to; nil reads them from the network interfaces when Serve starts.
	Own []netip.Addr
	// MaxConns bounds the connections served at once (DefaultMaxConns).
	MaxConns int
	// IdleTimeout ends a tunnel or forward silent both ways this long
	// (DefaultIdleTimeout).
	IdleTimeout time.Duration
	// HeaderTimeout bounds the time to send a request's header (10 s).
	HeaderTimeout time.Duration
	// Logger receives refusals as log records; nil discards them.
	Logger *slog.Logger
}

// refusal is a destination the policy turns away, and why.
type refusal struct {
	host string
	port int
	why  string
}

func (r *refusal) Error() string {
	return fmt.Sprintf("planex refused to connect to %s: %s", net.JoinHostPort(r.host, strconv.Itoa(r.port)), r.why)
}

// ErrRefused marks a destination refused by the allow-list or by the
// addresses it leads to.
var ErrRefused = errors.New("refused by planex's egress allow-list")

func (r *refusal) Is(target error) bool { return target == ErrRefused }

// Serve answers proxy requests on ln until ctx ends or ln is closed.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	s := *p
	if s.Own == nil {
		s.Own = ownAddrs()
	}
	if s.MaxConns <= 0 {
		s.MaxConns = DefaultMaxConns
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = DefaultIdleTimeout
	}
	if s.HeaderTimeout <= 0 {
		s.HeaderTimeout = headerTimeout
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &handler{p: &s, ctx: ctx}
	h.transport = &http.Transport{
		Proxy:               nil,
		DialContext:         s.dialChecked,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: dialTimeout,
		// An answer's header (interim 1xx answers counted in) is held
		// whole while read: bounded as in a tunnel, not by Go's 10 MiB.
		MaxResponseHeaderBytes: maxAnswerHeaderBytes,
	}
	defer h.transport.CloseIdleConnections()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.HeaderTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       s.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          nil,
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	err := srv.Serve(netutil.LimitListener(ln, s.MaxConns))
	cancel()
	h.tunnels.Wait()
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// ownAddrs lists the addresses of this machine's interfaces.
func ownAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

type handler struct {
	p         *Proxy
	ctx       context.Context
	transport *http.Transport
	tunnels   sync.WaitGroup
}

// ServeHTTP tunnels CONNECT requests and forwards absolute-form ones.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, port, err := target(r)
	if err != nil {
		http.Error(w, "planex egress proxy: "+err.Error(), http.StatusBadRequest)
		return
	}
	addrs, err := h.p.check(r.Context(), host, port)
	if h.failed(w, err) {
		return
	}
	if r.Method == http.MethodConnect {
		h.connect(w, r, addrs, host, port)
		return
	}
	h.forward(w, r)
}

// target is the host and port a request asks for: a CONNECT's authority
// or an absolute URL's. Userinfo, relative URLs and other schemes are
// refused as malformed.
func target(r *http.Request) (string, int, error) {
	if r.URL.User != nil {
		return "", 0, errors.New("user information in the request target is not accepted")
	}
	if r.Method == http.MethodConnect {
		host, p, err := net.SplitHostPort(r.Host)
		if err != nil {
			return "", 0, fmt.Errorf("CONNECT needs host:port, not %q", r.Host)
		}
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return "", 0, fmt.Errorf("CONNECT port %q is not a port number", p)
		}
		return host, port, nil
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		return "", 0, errors.New("this is a proxy: send absolute URLs (http://host/path) or CONNECT")
	}
	port := 80
	switch r.URL.Scheme {
	case "http":
	case "https":
		port = 443
	default:
		return "", 0, fmt.Errorf("scheme %q is not proxied", r.URL.Scheme)
	}
	if p := r.URL.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("port %q is not a port number", p)
		}
		port = n
	}
	return r.URL.Hostname(), port, nil
}

// check decides whether host:port may be reached and returns the
// addresses to dial: an address rule's own, or a name's resolved ones
// when none of them is forbidden (a rule naming localhost itself lets
// that name lead to loopback, the one place it means). A refusal is a
// *refusal.
func (p *Proxy) check(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	d, err := ParseDest(host)
	if err != nil {
		return nil, &refusal{host: host, port: port, why: err.Error()}
	}
	shown := d.Name
	if d.Addr.IsValid() {
		shown = d.Addr.String()
	}
	m := Allowed(p.Rules, d, port)
	if !m.OK {
		return nil, &refusal{host: shown, port: port, why: "it is not on this step's allow-list"}
	}
	if d.Addr.IsValid() {
		return []netip.Addr{d.Addr}, nil
	}
	resolve := p.Resolve
	if resolve == nil {
		resolve = func(ctx context.Context, name string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", absolute(name))
		}
	}
	addrs, err := resolve(ctx, d.Name)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", d.Name, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolving %s: no address", d.Name)
	}
	for _, a := range addrs {
		if m.Rule.Host == "localhost" && a.Unmap().IsLoopback() {
			continue // the user named this machine's loopback itself
		}
		if why := forbidden(a, m.Rule.Wildcard, p.Own); why != "" {
			return nil, &refusal{host: shown, port: port,
				why: fmt.Sprintf("the name leads to a %s address (%s); allow that address itself if it is meant", why, a)}
		}
	}
	return addrs, nil
}

// absolute roots a name of more than one label (pypi.org.), so the
// system's resolver looks it up as it is, and never, when it has no
// address, below the machine's search domains (pypi.org.corp.example, a
// host no allow-list named); a single label (localhost, a host of the
// local network the user named) keeps them.
func absolute(name string) string {
	if strings.Contains(name, ".") && !strings.HasSuffix(name, ".") {
		return name + "."
	}
	return name
}

// failed answers a request that err stopped: a refusal with the
// proxy's 403, any other error with 502. It reports whether err stopped it.
func (h *handler) failed(w http.ResponseWriter, err error) bool {
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		h.refuse(w, ref)
	case err != nil:
		http.Error(w, "planex egress proxy: "+err.Error(), http.StatusBadGateway)
	}
	return err != nil
}

// refuse answers 403, naming the destination and how to allow it, and
// records the refusal.
func (h *handler) refuse(w http.ResponseWriter, ref *refusal) {
	h.p.record(ref)
	hp := net.JoinHostPort(ref.host, strconv.Itoa(ref.port))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "%s.\nIf the step needs it, allow it with --allow-host %s (Action input allow-hosts); see docs/security.md.\n", ref.Error(), hp)
}

// record logs a refusal: counted in the Log, warned about once per
// destination (an agent retrying in a loop must not bury planex's
// output in warnings).
func (p *Proxy) record(ref *refusal) {
	first := true
	if p.Log != nil {
		first = p.Log.Add(ref.host, ref.port)
	}
	if p.Logger != nil && first {
		p.Logger.Warn("egress refused", "host", ref.host, "port", ref.port, "why", ref.why)
	}
}

// dial connects to the first address that answers.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	dial := p.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: dialTimeout}
		dial = d.DialContext
	}
	var errs []error
	for _, a := range addrs {
		c, err := dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// dialChecked is the forwarding transport's dialer, and a Guard's: it
// checks the destination again where it is dialled and dials only the
// addresses that check passed, so a name's answer cannot change between
// the check and the connection.
func (p *Proxy) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &refusal{host: addr, why: "not a host and port"}
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return nil, &refusal{host: host, why: fmt.Sprintf("port %q is not a port number", ps)}
	}
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil, &refusal{host: host, port: port, why: fmt.Sprintf("network %q is not TCP", network)}
	}
	addrs, err := p.check(ctx, host, port)
	if err != nil {
		return nil, err
	}
	return p.dial(ctx, addrs, port)
}

// hopHeaders are a single connection's own and never forwarded.
func hopHeaders() []string {
	return []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}
}

func dropHop(hd http.Header) {
	for _, f := range hd.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			hd.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopHeaders() {
		hd.Del(name)
	}
}

// routingHeaders are set by a proxy or front, never by a client: the host
// or target a request reached it for, which a front behind an allowed
// host (a CDN, a reverse proxy configured from them, IIS's URL rewrite)
// may route by instead of Host. From an agent they would name a host the
// allow-list never saw, so no request carries them on.
func routingHeaders() []string {
	return []string{"Forwarded", "X-Forwarded-Host", "X-Forwarded-Server", "X-Forwarded-Prefix",
		"X-Host", "X-Original-Host", "X-Http-Host-Override", "X-Original-Url", "X-Rewrite-Url"}
}

// dropRouting removes the routing headers from hd, under any spelling
// a server may read as one of them: in any case, and with underscores
// for dashes (X_Forwarded_Host, which Go keeps as a name of its own,
// and which CGI, PHP-FPM and WSGI servers read as HTTP_X_FORWARDED_HOST,
// the variable X-Forwarded-Host fills).
func dropRouting(hd http.Header) {
	dropHeaders(hd, routingHeaders())
}

// dropHeaders removes the named headers from hd, in any case and with
// underscores for dashes, as dropRouting does.
func dropHeaders(hd http.Header, names []string) {
	routing := map[string]bool{}
	for _, name := range names {
		routing[strings.ToLower(name)] = true
	}
	for name := range hd {
		if routing[strings.ToLower(strings.ReplaceAll(name, "_", "-"))] {
			delete(hd, name)
		}
	}
}

// forward sends an absolute-form request on and streams the answer back,
// flushing each chunk. The Host the server sees is the URL's, whatever
// Host header the client sent.
func (h *handler) forward(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Host = r.URL.Host
	dropHop(out.Header)
	dropRouting(out.Header)
	// A chunked body's trailer is not sent on, as in a tunnel: the clone
	// declared the client's trailer fields (a routing header among them)
	// to the upstream.
	out.Trailer = nil
	resp, err := h.transport.RoundTrip(out)
	if h.failed(w, err) {
		return
	}
	defer resp.Body.Close()
	streamResponse(w, resp, nil, nil)
}

// connect opens the tunnel: dials the checked addresses, answers 200 and
// copies both ways until both sides end or the tunnel idles.
func (h *handler) connect(w http.ResponseWriter, r *http.Request, addrs []netip.Addr, host string, port int) {
	up, err := h.p.dial(r.Context(), addrs, port)
	if err != nil {
		http.Error(w, "planex egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		up.Close()
		return
	}
	h.tunnels.Add(1)
	go func() {
		defer h.tunnels.Done()
		h.tunnel(conn, rw.Reader, up, host, port)
	}()
}

// tunnel copies the client's bytes (br, once firstFlight checked them) to
// up and up's to the client until both directions end, the tunnel is
// idle both ways, or the proxy stops. The answer starts flowing at once
// (a protocol where the server speaks first works); first bytes that
// fail the check close both sides before a byte of the client's is
// sent, and plain HTTP is relayed request by request (relayHTTP).
func (h *handler) tunnel(client net.Conn, br *bufio.Reader, up net.Conn, host string, port int) {
	idle := h.p.IdleTimeout
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	stop := context.AfterFunc(h.ctx, func() { client.Close(); up.Close() })
	defer stop()
	var halt atomic.Bool
	down := make(chan struct{})
	go func() { defer close(down); pipe(client, up, up, idle, &last, &halt) }()
	src, kind, err := h.firstFlight(client, br, port)
	plain := kind == flightPlain
	switch {
	case err != nil:
	case plain:
		// The relay reads the answers itself: the raw copy stops first.
		halt.Store(true)
		_ = up.SetReadDeadline(time.Now())
		<-down
		h.relayHTTP(client, src, up, host, port)
	case kind == flightTLS:
		// Nothing has come back before the ClientHello goes: the raw copy
		// makes way for one that reads the ServerHello first.
		halt.Store(true)
		_ = up.SetReadDeadline(time.Now())
		<-down
		down = make(chan struct{})
		answered := down
		go func() { defer close(answered); h.answerHello(client, up, idle, &last, port) }()
		pipe(up, src, client, idle, &last, nil)
	default:
		pipe(up, src, client, idle, &last, nil)
	}
	if err != nil || plain {
		client.Close()
		up.Close()
	}
	<-down
	client.Close()
	up.Close()
}

// pipe copies src (whose connection is srcConn) to dst through one
// fixed buffer; a read that times out ends the copy only when neither
// direction moved for idle. Once halt (if any) is set and srcConn's
// read deadline passed, pipe returns leaving dst open.
func pipe(dst net.Conn, src io.Reader, srcConn net.Conn, idle time.Duration, last *atomic.Int64, halt *atomic.Bool) {
	halted := func() bool { return halt != nil && halt.Load() }
	buf := make([]byte, 32<<10)
	for {
		_ = srcConn.SetReadDeadline(time.Now().Add(idle))
		if halted() {
			return
		}
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			_ = dst.SetWriteDeadline(time.Now().Add(idle))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && halted() {
				return
			}
			if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < idle {
				continue
			}
			break
		}
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		dst.Close()
	}
}
