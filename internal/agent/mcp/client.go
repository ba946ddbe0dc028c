package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/proc"
)

// Defaults for StartOptions left at zero.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
	DefaultMaxResult    = 16 << 10
)

// stopGrace is how long a stdio server may take to exit after its input
// closed before it is killed.
const stopGrace = 2 * time.Second

// StartOptions say how the servers of one step run.
type StartOptions struct {
	// Dir is the step's directory: stdio servers start in it and may
	// read it; with Writable set they may write it too.
	Dir      string
	Writable bool
	// Env is the base environment (nil: os.Environ()); Contain removes
	// secrets from it and holds the servers in the step's sandbox.
	Env     []string
	Contain agent.Containment
	// StartTimeout bounds starting a server, initialising it and listing
	// its tools; CallTimeout bounds one tool call.
	StartTimeout time.Duration
	CallTimeout  time.Duration
	// MaxResult caps the text of one tool result given to the model.
	MaxResult int
	// HTTPClient reaches HTTP servers; nil uses a default client.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Tool is one server tool as offered to a model.
type Tool struct {
	// Name is mcp__SERVER__TOOL.
	Name        string
	Server      string
	Tool        string
	Description string
	InputSchema json.RawMessage
}

// Session is the running servers of one step. Call Close when the step
// ends; it stops every server.
type Session struct {
	opts    StartOptions
	servers []*server
	tools   map[string]Tool
	order   []string
	mu      sync.Mutex
	calls   map[string]int
}

type server struct {
	name string
	cs   *sdk.ClientSession
	// stop ends a stdio server's process, or closes the idle
	// connections of an HTTP server's own client (nil for none).
	stop func()
}

// Start starts every server of cfg, initialises it and lists its tools.
// A server that fails or does not answer within StartTimeout fails the
// whole start, naming the server; the servers already running are
// stopped again.
func Start(ctx context.Context, cfg Config, o StartOptions) (*Session, error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxResult <= 0 {
		o.MaxResult = DefaultMaxResult
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Session{opts: o, tools: map[string]Tool{}, calls: map[string]int{}}
	for _, sc := range cfg.Servers {
		srv, tools, err := s.start(ctx, sc)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("MCP server %q: %w", sc.Name, err)
		}
		s.servers = append(s.servers, srv)
		for _, t := range tools {
			if _, dup := s.tools[t.Name]; dup {
				o.Logger.Warn("MCP tool name taken twice; the second is not offered", "server", sc.Name, "tool", t.Tool)
				continue
			}
			s.tools[t.Name] = t
			s.order = append(s.order, t.Name)
		}
	}
	return s, nil
}

func (s *Session) start(ctx context.Context, sc Server) (*server, []Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "planex", Version: "1"}, &sdk.ClientOptions{
		Logger: s.opts.Logger,
	})
	srv := &server{name: sc.Name}
	var transport sdk.Transport
	var exited <-chan struct{}
	var stderr *tailBuffer
	ended := func() error { return nil }
	switch sc.Type {
	case TypeHTTP:
		var hc *http.Client
		hc, srv.stop = s.httpClient(ctx)
		hc = &http.Client{Transport: headers{base: hc.Transport, h: sc.Headers}, Timeout: hc.Timeout, Jar: hc.Jar, CheckRedirect: sameOrigin(hc.CheckRedirect)}
		transport = &sdk.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	default:
		var err error
		var proc *process
		if proc, err = s.spawn(ctx, sc); err != nil {
			return nil, nil, err
		}
		srv.stop, exited, stderr = proc.stop, proc.exited, proc.stderr
		ended = func() error { return proc.err }
		transport = &sdk.IOTransport{Reader: proc.stdout, Writer: proc.stdin}
	}
	fail := func(what string, err error) (*server, []Tool, error) {
		// Whether the server had ended is known before it is stopped.
		gone := exited != nil && isClosed(exited)
		if srv.cs != nil {
			srv.cs.Close()
		}
		if srv.stop != nil {
			srv.stop()
		}
		switch {
		case gone:
			if e := ended(); e != nil {
				err = e
			}
			err = fmt.Errorf("%s: the server ended (%v)%s", what, err, stderr.tail())
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("%s: no answer within %s%s", what, s.opts.StartTimeout, stderr.tail())
		default:
			err = fmt.Errorf("%s: %w%s", what, err, stderr.tail())
		}
		return nil, nil, err
	}
	cs, err := connect(ctx, client, transport)
	if err != nil {
		return fail("starting and initialising", err)
	}
	srv.cs = cs
	var tools []Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fail("listing tools", err)
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tools = append(tools, Tool{Name: ToolName(sc.Name, t.Name), Server: sc.Name, Tool: t.Name, Description: t.Description, InputSchema: schema})
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	s.opts.Logger.Debug("MCP server ready", "server", sc.Name, "tools", len(tools))
	return srv, tools, nil
}

// httpClient is the client that reaches HTTP servers: the caller's, or
// with the network contained planex's own held to the egress proxy's
// decision (agent.Egress.Client), since planex reaches the servers from
// outside the sandbox, or else the default client on the host's network
// (--network open). stop closes the idle connections of a client made
// here.
func (s *Session) httpClient(ctx context.Context) (hc *http.Client, stop func()) {
	c := s.opts.Contain
	switch {
	case s.opts.HTTPClient != nil:
		return s.opts.HTTPClient, nil
	case c.Egress != nil && !c.Network.Open():
		hc = c.Egress.Client(ctx, 0)
		return hc, hc.CloseIdleConnections
	}
	return http.DefaultClient, nil
}

// sameOrigin refuses a redirect to another origin, where the headers
// the configuration gives a server (its token) would go along, before
// asking next (the caller's own CheckRedirect, if any).
func sameOrigin(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if err := egress.SameOrigin(req, via); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// connect runs the SDK's connect (initialise) so that ctx ending stops
// the wait even when the transport blocks.
func connect(ctx context.Context, c *sdk.Client, t sdk.Transport) (*sdk.ClientSession, error) {
	type res struct {
		cs  *sdk.ClientSession
		err error
	}
	ch := make(chan res, 1)
	go func() {
		cs, err := c.Connect(ctx, t, nil)
		ch <- res{cs, err}
	}()
	select {
	case r := <-ch:
		return r.cs, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.cs != nil {
				r.cs.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// process is a running stdio server.
type process struct {
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tailBuffer
	exited chan struct{}
	// err is how the process ended, once exited is closed.
	err  error
	stop func()
}

// spawn starts a stdio server contained like the step's other processes:
// its environment without planex's secrets plus its own env, in the
// step's sandbox, killed with everything it started when stopped.
func (s *Session) spawn(ctx context.Context, sc Server) (*process, error) {
	cmd := exec.Command(sc.Command, sc.Args...)
	cmd.Dir = s.opts.Dir
	var writable []string
	if s.opts.Writable {
		writable = []string{s.opts.Dir}
	}
	cleanup, err := s.opts.Contain.PrepareContext(ctx, cmd, s.opts.Env, writable, []string{s.opts.Dir})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(sc.Env))
	for k := range sc.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		cmd.Env = append(cmd.Env, k+"="+sc.Env[k])
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("making its input pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		cleanup()
		return nil, fmt.Errorf("making its output pipe: %w", err)
	}
	p := &process{stdin: inW, stdout: outR, stderr: &tailBuffer{limit: 2000}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	runCtx, kill := context.WithCancel(context.Background())
	go func() {
		p.err = proc.Run(runCtx, cmd)
		// The child's ends close with it, so a read of its output sees
		// the end instead of waiting.
		inR.Close()
		outW.Close()
		cleanup()
		close(p.exited)
	}()
	var once sync.Once
	p.stop = func() {
		once.Do(func() {
			inW.Close()
			t := time.NewTimer(stopGrace)
			select {
			case <-p.exited:
			case <-t.C:
			}
			t.Stop()
			kill()
			<-p.exited
			outR.Close()
		})
	}
	return p, nil
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Tools lists the tools of every server, in a stable order.
func (s *Session) Tools() []Tool {
	out := make([]Tool, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.tools[n])
	}
	return out
}

// Has reports whether name is one of the session's tools.
func (s *Session) Has(name string) bool {
	_, ok := s.tools[name]
	return ok
}

// Result is a tool call's outcome as the model sees it.
type Result struct {
	Text    string
	IsError bool
}

// Call forwards one call to its server. A tool's own failure comes back
// as a Result with IsError; the error return means the server failed or
// did not answer within CallTimeout, which ends the step.
func (s *Session) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	t, ok := s.tools[name]
	if !ok {
		return Result{Text: fmt.Sprintf("error: no MCP tool %q", name), IsError: true}, nil
	}
	var srv *server
	for _, v := range s.servers {
		if v.name == t.Server {
			srv = v
		}
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if !json.Valid(args) {
		return Result{Text: "error: the arguments are not valid JSON", IsError: true}, nil
	}
	s.mu.Lock()
	s.calls[name]++
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	res, err := srv.cs.CallTool(cctx, &sdk.CallToolParams{Name: t.Tool, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return Result{}, fmt.Errorf("MCP server %q did not answer a call of %s within %s", t.Server, t.Tool, s.opts.CallTimeout)
		}
		if srv.alive() {
			// A protocol-level refusal (unknown tool, bad arguments) is
			// something the model can correct.
			return Result{Text: "error: " + agent.CleanText(err.Error()), IsError: true}, nil
		}
		return Result{}, fmt.Errorf("MCP server %q failed during a call of %s: %w", t.Server, t.Tool, err)
	}
	return Result{Text: capText(render(res), s.opts.MaxResult), IsError: res.IsError}, nil
}

// alive reports whether the server's connection still stands.
func (v *server) alive() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return v.cs.Ping(ctx, nil) == nil
}

// Called lists the tools called so far (see FormatCalls).
func (s *Session) Called() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return FormatCalls(s.calls)
}

// FormatCalls lists tool calls by name, with how often when more than
// once: "mcp__a__x (2 calls)".
func FormatCalls(calls map[string]int) []string {
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		if c := calls[n]; c > 1 {
			out = append(out, fmt.Sprintf("%s (%d calls)", n, c))
		} else {
			out = append(out, n)
		}
	}
	return out
}

// Close stops every server: the session ends and a stdio server's
// process, with everything it started, is ended.
func (s *Session) Close() error {
	for _, v := range s.servers {
		if v.cs != nil {
			v.cs.Close()
		}
		if v.stop != nil {
			v.stop()
		}
	}
	s.servers = nil
	return nil
}

// toolChars are the characters model APIs accept in tool names.
var toolChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ToolName is the name a server's tool is offered under: mcp__SERVER__TOOL,
// other characters replaced by '_' and cut to the 64 characters model
// APIs accept.
func ToolName(server, tool string) string {
	n := "mcp__" + server + "__" + toolChars.ReplaceAllString(tool, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// render turns a tool result into text for the model. Media is named,
// not inlined.
func render(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, v.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", v.MIMEType, len(v.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", v.MIMEType, len(v.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", v.Name, v.URI))
		case *sdk.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				parts = append(parts, v.Resource.Text)
			} else if v.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes, not shown]", v.Resource.URI, len(v.Resource.Blob)))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		return "(no output)"
	}
	return agent.CleanText(strings.Join(parts, "\n"))
}

// capText keeps the start and end of a long result.
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	half := limit / 2
	head, tail := s[:half], s[len(s)-half:]
	return fmt.Sprintf("%s\n… [%d bytes of the result left out] …\n%s", strings.ToValidUTF8(head, ""), len(s)-2*half, strings.ToValidUTF8(tail, ""))
}

// headers adds a server's configured headers to every request.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	return base.RoundTrip(r)
}

// tailBuffer keeps the end of a server's stderr for error messages.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	b     []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.limit; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) tail() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(agent.CleanText(string(t.b)))
	if s == "" {
		return ""
	}
	return "; its stderr: " + s
}
