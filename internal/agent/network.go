package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
)

// ProxyPort is the loopback port, inside a contained step's own network,
// where planex's egress proxy answers; GatewayPort is where a named CLI
// finds planex's model gateway.
const (
	ProxyPort   = 3128
	GatewayPort = 3129
)

// Egress is the way out of a contained network: planex's allow-list
// proxy, one per process it prepares, so a refusal is recorded for the
// step that made it.
type Egress struct {
	// Rules are the destinations allowed: the model endpoint a named CLI
	// needs, its MCP HTTP servers and what the user allowed.
	Rules []egress.Rule
	// Log receives the refusals of processes whose context carries no
	// log of its own (see WithEgressLog).
	Log *egress.Log
	// Logger receives a record of each refusal; nil discards them.
	Logger *slog.Logger
	// ClientRules are more destinations only planex's own clients may
	// reach for the agent, never its sandboxed programs: the HTTP
	// servers of the user's own MCP configuration for a built-in agent.
	ClientRules []egress.Rule
	// Resolve and Dial replace the system's resolver and TCP dialer of
	// the proxy and of Client's connections (tests); nil uses them.
	Resolve func(ctx context.Context, name string) ([]netip.Addr, error)
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Client returns the HTTP client for connections planex makes itself on
// the agent's behalf from outside the sandbox (a built-in agent's MCP
// servers): each is held to the proxy's decision over Rules and
// ClientRules where it is dialled, a refusal recorded in ctx's log, and
// a redirect to another origin is not followed (egress.Guard).
func (e *Egress) Client(ctx context.Context, timeout time.Duration) *http.Client {
	rules := append(slices.Clone(e.Rules), e.ClientRules...)
	g := egress.NewGuard(egress.Proxy{Rules: rules, Log: e.egressLog(ctx), Logger: e.Logger, Resolve: e.Resolve, Dial: e.Dial})
	return g.Client(timeout)
}

type egressLogKey struct{}

// WithEgressLog returns ctx carrying log: processes prepared with it
// record their refusals there (the engine gives each task its own).
func WithEgressLog(ctx context.Context, log *egress.Log) context.Context {
	return context.WithValue(ctx, egressLogKey{}, log)
}

// egressLog is ctx's refusal log, else the Egress's own.
func (e *Egress) egressLog(ctx context.Context) *egress.Log {
	if l, ok := ctx.Value(egressLogKey{}).(*egress.Log); ok && l != nil {
		return l
	}
	return e.Log
}

// network sets the network part of p for cmd: the host's network when
// the containment opens it, else a network of its own whose only way out
// is a proxy planex starts here, outside the sandbox, and the proxy
// variables pointing at it. stop ends the proxy once the command ended.
func (c Containment) network(ctx context.Context, cmd *exec.Cmd, p *sandbox.Policy) (stop func(), err error) {
	p.Network = c.Network
	if !c.Network.Open() {
		p.Forward = append(p.Forward, c.Forward...)
	}
	if c.Network.Open() || c.Egress == nil {
		cmd.Env = withoutProxy(cmd.Env, c.Network.Open())
		return func() {}, nil
	}
	dir, err := SocketDir("planex-egress-", "proxy.sock")
	if err != nil {
		return func() {}, fmt.Errorf("creating the egress proxy's folder: %w", err)
	}
	sock := filepath.Join(dir, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return func() {}, fmt.Errorf("starting the egress proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	proxy := &egress.Proxy{Rules: c.Egress.Rules, Log: c.Egress.egressLog(ctx), Logger: c.Egress.Logger, Resolve: c.Egress.Resolve, Dial: c.Egress.Dial}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := proxy.Serve(ctx, ln); err != nil && c.Egress.Logger != nil {
			c.Egress.Logger.Warn("egress proxy stopped", "err", err)
		}
	}()
	p.Forward = append(p.Forward, sandbox.Forward{Port: ProxyPort, Socket: sock})
	cmd.Env = withProxy(cmd.Env, ProxyPort)
	return func() {
		cancel()
		ln.Close()
		<-done
		os.RemoveAll(dir)
	}, nil
}

// maxSocketPath bounds the path of a Unix socket planex listens on: the
// kernel takes at most 108 bytes with the closing NUL (104 on macOS).
const maxSocketPath = 100

// SocketDir makes a fresh folder, planex's alone (0700), for a socket
// named file: in the temporary folder, unless the socket's path there
// would be longer than a Unix socket's may be (a deep $TMPDIR, where
// every contained step failed to start its proxy), then in /tmp, which
// the sandbox replaces like the temporary folder.
func SocketDir(prefix, file string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if len(filepath.Join(dir, file)) <= maxSocketPath {
		return dir, nil
	}
	os.Remove(dir)
	return os.MkdirTemp("/tmp", prefix)
}

// proxyVars are the variables programs read their proxy from.
func proxyVars() []string {
	return []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"}
}

// withoutProxy drops the host's proxy settings from env when the network
// is contained (they lead nowhere from inside); an open network keeps
// them.
func withoutProxy(env []string, open bool) []string {
	if open {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isProxyVar(name) {
			out = append(out, kv)
		}
	}
	return out
}

// hostProxy returns base's proxy variables, for a step that keeps the
// host's network (no sandbox, or --network open) and so its proxy too;
// not one that carries a user name or password, which is a credential
// like any other (name it in --allow-env to pass it knowingly).
func hostProxy(base []string) []string {
	var out []string
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		if !isProxyVar(name) {
			continue
		}
		if u, err := url.Parse(value); err == nil && u.User != nil {
			continue
		}
		if strings.Contains(value, "@") && !strings.HasPrefix(strings.ToUpper(name), "NO_PROXY") {
			continue // a value url.Parse could not read but that may hold one
		}
		out = append(out, kv)
	}
	return out
}

func isProxyVar(name string) bool {
	for _, v := range proxyVars() {
		if name == v {
			return true
		}
	}
	return false
}

// withProxy points every proxy variable, in both cases, at the proxy on
// port inside the step's network; loopback goes direct.
func withProxy(env []string, port int) []string {
	env = withoutProxy(env, false)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, v := range proxyVars() {
		val := url
		if strings.EqualFold(v, "NO_PROXY") {
			val = "127.0.0.1,localhost,::1"
		}
		env = append(env, v+"="+val)
	}
	return env
}
