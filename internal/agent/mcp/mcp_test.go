//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/agent/mcp/mcptest"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/sandbox"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParse(t *testing.T) {
	lookup := env(map[string]string{"TRACKER_TOKEN": "s3cret-value", "HOST": "tracker.example", "GITHUB_TOKEN": "ghs_planex_job_token"})
	c, err := mcp.Parse([]byte(`{"mcpServers": {
		"tracker": {"type": "http", "url": "https://tracker.example/mcp", "headers": {"Authorization": "Bearer ${TRACKER_TOKEN}"}},
		"docs": {"command": "npx", "args": ["-y", "docs-server"], "env": {"DOCS_HOST": "${HOST}", "MODE": "${MODE:-fast}", "PLAIN": "x"}, "timeout": 5}
	}}`), ".mcp.json", lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 2 || c.Servers[0].Name != "docs" || c.Servers[1].Name != "tracker" {
		t.Fatalf("servers %+v", c.Servers)
	}
	d, tr := c.Servers[0], c.Servers[1]
	if d.Type != mcp.TypeStdio || d.Command != "npx" || strings.Join(d.Args, " ") != "-y docs-server" ||
		d.Env["DOCS_HOST"] != "tracker.example" || d.Env["MODE"] != "fast" || d.Env["PLAIN"] != "x" {
		t.Errorf("stdio server %+v", d)
	}
	if tr.Type != mcp.TypeHTTP || tr.URL != "https://tracker.example/mcp" || tr.Headers["Authorization"] != "Bearer s3cret-value" {
		t.Errorf("http server %+v", tr)
	}

	bad := []struct{ doc, want string }{
		{`{"mcpServers": {"a": {"command": "x",}}}`, "f.json: line 1, column 39"},
		{`{"servers": {}}`, `no "mcpServers" object`},
		{`{"mcpServers": {"a b": {"command": "x"}}}`, `server "a b": the name may hold only`},
		{`{"mcpServers": {"a__b": {"command": "x"}}}`, `server "a__b": the name`},
		{`{"mcpServers": {"a": {"args": ["x"]}}}`, `server "a": a stdio server needs a "command"`},
		{`{"mcpServers": {"a": {"type": "http"}}}`, `server "a": an HTTP server needs a "url"`},
		{`{"mcpServers": {"a": {"type": "http", "url": "ftp://x"}}}`, `is not an http:// or https:// address`},
		{`{"mcpServers": {"a": {"type": "sse", "url": "https://x"}}}`, `"sse"`},
		{`{"mcpServers": {"a": {"type": "ws", "url": "https://x"}}}`, `unknown type "ws"`},
		{`{"mcpServers": {"a": {"command": "x", "env": {"K": "${MISSING}"}}}}`, `server "a": env.K: ${MISSING} is not set`},
		{`{"mcpServers": {"a": {"type": "http", "url": "https://x", "headers": {"H": "${NOPE}"}}}}`, `headers.H: ${NOPE} is not set`},
		// A configuration (a repository file, say) that tries to hand
		// planex's own token to a server is refused, set or not.
		{`{"mcpServers": {"a": {"command": "x", "env": {"T": "${GITHUB_TOKEN}"}}}}`, `env.T: ${GITHUB_TOKEN} is planex's own GitHub credential`},
		{`{"mcpServers": {"a": {"type": "http", "url": "https://x", "headers": {"Authorization": "Bearer ${INPUT_GITHUB-TOKEN:-x}${GH_TOKEN}"}}}}`, `${GH_TOKEN} is planex's own GitHub credential`},
		{`{"mcpServers": {"a": {"command": "x", "env": {"R": "${ACTIONS_RUNTIME_TOKEN:-none}"}}}}`, `${ACTIONS_RUNTIME_TOKEN} is planex's own`},
	}
	for _, b := range bad {
		_, err := mcp.Parse([]byte(b.doc), "f.json", lookup)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.HasPrefix(err.Error(), "f.json: ") {
			t.Errorf("%s: err %v, want %q", b.doc, err, b.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{"x":{"command":"srv"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	none := env(nil)
	for _, arg := range []string{".mcp.json", filepath.Join(dir, ".mcp.json"), ` {"mcpServers":{"x":{"command":"srv"}}}`} {
		c, err := mcp.Load(arg, dir, none)
		if err != nil || len(c.Servers) != 1 || c.Servers[0].Command != "srv" {
			t.Errorf("%s: %+v %v", arg, c, err)
		}
	}
	if _, err := mcp.Load("missing.json", dir, none); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
	if c, err := mcp.Load("", dir, none); err != nil || !c.Empty() {
		t.Errorf("empty: %+v %v", c, err)
	}
}

// TestLoadRefusesWhatIsNoFile: a configuration file a repository (or
// anyone) replaced with a link to /dev/zero, a FIFO no one writes, or a
// file of gigabytes is refused at once, with an error naming the file and
// told apart by safefile's errors; planex neither blocks nor fills memory.
func TestLoadRefusesWhatIsNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	huge, err := os.Create(filepath.Join(dir, "huge.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 4 GiB that take no disk.
	if err := huge.Truncate(4 << 30); err != nil {
		t.Fatal(err)
	}
	huge.Close()
	for name, want := range map[string]error{"zero.json": safefile.ErrNotRegular, "fifo.json": safefile.ErrNotRegular, "huge.json": safefile.ErrTooLarge} {
		done := make(chan error, 1)
		go func() {
			_, err := mcp.Load(name, dir, env(nil))
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, want) || !strings.Contains(err.Error(), filepath.Join(dir, name)) {
				t.Errorf("%s: %v, want %v naming the file", name, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Load still reading after 10 s", name)
		}
	}
}

func TestToolName(t *testing.T) {
	if n := mcp.ToolName("tickets", "lookup.ticket v2"); n != "mcp__tickets__lookup_ticket_v2" {
		t.Errorf("%s", n)
	}
	if n := mcp.ToolName("s", strings.Repeat("x", 100)); len(n) != 64 {
		t.Errorf("%d", len(n))
	}
}

// alive reports whether a process runs (a zombie waiting to be reaped
// does not count).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestSessionStdio runs the test server uncontained: its tools are listed
// with their schemas, calls are forwarded, its env comes from the
// configuration but planex's secrets do not, and Close ends it and what
// it started.
func TestSessionStdio(t *testing.T) {
	bin := mcptest.BuildServer(t)
	dir := t.TempDir()
	pidfile := filepath.Join(t.TempDir(), "pids")
	cfg, err := mcp.Parse([]byte(mcptest.Config(bin, "-pidfile", pidfile)), "test", env(map[string]string{"PLANEX_TEST_TICKET_PREFIX": "from-env"}))
	if err != nil {
		t.Fatal(err)
	}
	base := append(os.Environ(), "MY_SERVICE_TOKEN=planex-own-secret")
	s, err := mcp.Start(context.Background(), cfg, mcp.StartOptions{Dir: dir, Env: base, Contain: agent.Containment{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools := s.Tools()
	if len(tools) != 2 || tools[0].Name != "mcp__tickets__env" || tools[1].Name != "mcp__tickets__lookup_ticket" {
		t.Fatalf("tools %+v", tools)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(tools[1].InputSchema, &schema); err != nil || schema.Type != "object" || schema.Properties["key"] == nil || fmt.Sprint(schema.Required) != "[key]" {
		t.Errorf("schema %s (%v)", tools[1].InputSchema, err)
	}
	res, err := s.Call(context.Background(), "mcp__tickets__lookup_ticket", json.RawMessage(`{"key":"PX-7"}`))
	if err != nil || res.IsError || res.Text != "PX-7: Widgets must be blue (from-env)" {
		t.Errorf("call: %+v %v", res, err)
	}
	res, err = s.Call(context.Background(), "mcp__tickets__env", json.RawMessage(`{"name":"MY_SERVICE_TOKEN"}`))
	if err != nil || res.Text != "(unset)" {
		t.Errorf("the server saw planex's secret: %+v %v", res, err)
	}
	// A call the server refuses is the model's to correct, not the step's end.
	res, err = s.Call(context.Background(), "mcp__tickets__lookup_ticket", json.RawMessage(`{"key":7}`))
	if err != nil || !res.IsError {
		t.Errorf("bad arguments: %+v %v", res, err)
	}
	if got := strings.Join(s.Called(), ", "); got != "mcp__tickets__env, mcp__tickets__lookup_ticket (2 calls)" {
		t.Errorf("called %q", got)
	}
	var server, child int
	b, err := os.ReadFile(pidfile)
	if _, serr := fmt.Sscan(string(b), &server, &child); err != nil || serr != nil {
		t.Fatalf("pid file %q: %v %v", b, err, serr)
	}
	if !alive(server) || !alive(child) {
		t.Fatal("server not running during the session")
	}
	s.Close()
	if alive(server) || alive(child) {
		t.Errorf("still running after Close: server %v, its child %v", alive(server), alive(child))
	}
}

func TestSessionFailures(t *testing.T) {
	bin := mcptest.BuildServer(t)
	dir := t.TempDir()
	none := env(nil)
	cases := []struct {
		name, doc, want string
	}{
		{"missing command", `{"mcpServers":{"gone":{"command":"/nonexistent/mcp-server"}}}`, `MCP server "gone": `},
		{"exits at once", `{"mcpServers":{"quits":{"command":"sh","args":["-c","echo broken config >&2; exit 3"]}}}`, "broken config"},
		{"never answers", `{"mcpServers":{"mute":{"command":` + fmt.Sprintf("%q", bin) + `,"args":["-hang"]}}}`, "no answer within 500ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := mcp.Parse([]byte(c.doc), "test", none)
			if err != nil {
				t.Fatal(err)
			}
			s, err := mcp.Start(context.Background(), cfg, mcp.StartOptions{Dir: dir, StartTimeout: 500 * time.Millisecond})
			if err == nil {
				s.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "MCP server") {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}

// TestSessionSandboxed runs the server in the sandbox the step's other
// processes run in: it works, and sees the step's directory but not a
// file outside what it was given.
func TestSessionSandboxed(t *testing.T) {
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil || box == nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	bin := mcptest.BuildServer(t)
	dir := t.TempDir()
	cfg, err := mcp.Parse([]byte(mcptest.Config(bin)), "test", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	contain := agent.Containment{Sandbox: box, Read: []string{filepath.Dir(bin)}}
	s, err := mcp.Start(context.Background(), cfg, mcp.StartOptions{Dir: dir, Contain: contain,
		Env: append(os.Environ(), "MY_SERVICE_TOKEN=planex-own-secret")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Call(context.Background(), "mcp__tickets__lookup_ticket", json.RawMessage(`{"key":"PX-1"}`))
	if err != nil || res.Text != "PX-1: Widgets must be blue (tracker)" {
		t.Errorf("call: %+v %v", res, err)
	}
	res, err = s.Call(context.Background(), "mcp__tickets__env", json.RawMessage(`{"name":"MY_SERVICE_TOKEN"}`))
	if err != nil || res.Text != "(unset)" {
		t.Errorf("the contained server saw planex's secret: %+v %v", res, err)
	}
	res, err = s.Call(context.Background(), "mcp__tickets__env", json.RawMessage(`{"name":"HOME"}`))
	if home, _ := os.UserHomeDir(); err != nil || res.Text == home {
		t.Errorf("the contained server has the real home: %+v %v", res, err)
	}
}

// TestSessionHTTP reaches a streamable-HTTP server with the configured
// headers, their ${VAR}s expanded; without them the server refuses and
// the start fails naming it.
func TestSessionHTTP(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "search_docs", Description: "Search the docs."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			Query string `json:"query"`
		}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found: " + in.Query}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer docs-token-123" {
			http.Error(w, "no entry", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	doc := `{"mcpServers":{"docs":{"type":"http","url":"` + srv.URL + `","headers":{"Authorization":"Bearer ${DOCS_TOKEN}"}}}}`
	cfg, err := mcp.Parse([]byte(doc), "test", env(map[string]string{"DOCS_TOKEN": "docs-token-123"}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcp.Start(context.Background(), cfg, mcp.StartOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Call(context.Background(), "mcp__docs__search_docs", json.RawMessage(`{"query":"rate limits"}`))
	if err != nil || res.Text != "found: rate limits" {
		t.Errorf("call: %+v %v", res, err)
	}

	cfg, _ = mcp.Parse([]byte(doc), "test", env(map[string]string{"DOCS_TOKEN": "wrong"}))
	if s, err := mcp.Start(context.Background(), cfg, mcp.StartOptions{Dir: t.TempDir(), StartTimeout: 5 * time.Second}); err == nil {
		s.Close()
		t.Error("started without the right header")
	} else if !strings.Contains(err.Error(), `MCP server "docs"`) {
		t.Errorf("err %v", err)
	}
}
