package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/agent/mcp/mcptest"
)

// scriptedModel is a Chat Completions server that plays a model through
// every phase: it answers by tool calls in OpenAI's wire format, choosing
// them from the phase named in the prompt.
type scriptedModel struct {
	t *testing.T
	// mcp: the execute step looks ticket PX-7 up with the MCP test
	// server's tool and writes what it returned.
	mcp      bool
	mu       sync.Mutex
	requests int
	keys     []string
	bodies   []string
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.requests++
	m.keys = append(m.keys, r.Header.Get("Authorization"))
	m.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		m.t.Errorf("path %s", r.URL.Path)
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	b, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.bodies = append(m.bodies, string(b))
	m.mu.Unlock()
	if err := json.Unmarshal(b, &req); err != nil {
		m.t.Errorf("request: %v", err)
	}
	text := string(b)
	toolTurns := 0
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			toolTurns++
		}
	}
	offered := map[string]bool{}
	for _, tl := range req.Tools {
		offered[tl.Function.Name] = true
	}
	call := func(name string, args any) {
		a, _ := json.Marshal(args)
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":%q,"arguments":%q}}]}}],"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100,"prompt_tokens_details":{"cached_tokens":600}}}`, toolTurns, name, string(a))
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.Contains(text, "Step: analyze"):
		call("report_result", map[string]any{"type": "feature", "complexity": "Low", "angles": []any{
			map[string]any{"id": "E1", "angle": "patterns", "description": "where greetings live", "focus": "strings"}}})
	case strings.Contains(text, "Step: explore"):
		if offered["write_file"] || offered["run_command"] {
			m.t.Errorf("a read-only phase was offered write tools: %v", offered)
		}
		call("report_result", map[string]any{"id": "E1", "status": "completed", "findings": "greetings belong in a/", "key_files": []string{"a/keep.txt"}})
	case strings.Contains(text, "Step: plan"):
		call("report_result", map[string]any{"summary": "add a greeting", "approach": "one file", "tasks": []any{
			map[string]any{"id": "T1", "title": "Add hello.txt", "description": "write a/hello.txt", "scope": "a/**",
				"test": "file exists", "acceptance_criteria": "says hello", "execution_directives": "grep -q hello a/hello.txt",
				"deps": []string{}, "context_from": []string{"E1"}}}})
	case strings.Contains(text, "carry out task T1") && m.mcp:
		switch toolTurns {
		case 0:
			if !offered["mcp__tickets__lookup_ticket"] {
				m.t.Errorf("the MCP tool was not offered: %v", offered)
			}
			call("mcp__tickets__lookup_ticket", map[string]any{"key": "PX-7"})
		case 1:
			last := req.Messages[len(req.Messages)-1]
			got, _ := last.Content.(string)
			call("write_file", map[string]any{"path": "a/hello.txt", "content": "hello\n" + got + "\n"})
		default:
			call("report_result", map[string]any{"id": "T1", "status": "completed", "findings": "wrote a/hello.txt", "files_modified": []string{"a/hello.txt"}, "tests_passed": true, "acceptance_met": "yes"})
		}
	case strings.Contains(text, "carry out task T1"):
		switch toolTurns {
		case 0:
			// First try outside the scope: the tool refuses before writing.
			call("write_file", map[string]any{"path": "README.md", "content": "taken over\n"})
		case 1:
			if !strings.Contains(text, "scope") {
				m.t.Errorf("the out-of-scope write was not refused with a reason")
			}
			call("write_file", map[string]any{"path": "a/hello.txt", "content": "hello\n"})
		default:
			call("report_result", map[string]any{"id": "T1", "status": "completed", "findings": "wrote a/hello.txt", "files_modified": []string{"a/hello.txt"}, "tests_passed": true, "acceptance_met": "yes"})
		}
	default:
		m.t.Errorf("unrecognised prompt")
		w.WriteHeader(500)
	}
}

func TestBuiltinOpenAIAgentEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	model := &scriptedModel{t: t}
	srv := httptest.NewServer(model)
	defer srv.Close()
	cmd := f.command("-y", "--agent", "openai", "--base-url", srv.URL+"/v1", "--model", "gpt-test",
		"--price-in", "1", "--price-out", "2", "--review", "skip", "add a greeting")
	cmd.Env = append(cmd.Env, "PLANEX_AGENT_CMD=", "OPENAI_API_KEY=sk-test-key")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("planex: %v\n%s", err, out)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_Add_hello.txt|T1" {
		t.Fatalf("branch = %s\n%s", got, out)
	}
	branch := "planex/" + filepath.Base(f.sessionDir())
	if got := f.git("show", branch+":a/hello.txt"); got != "hello\n" {
		t.Errorf("a/hello.txt = %q", got)
	}
	if got := f.git("show", branch+":README.md"); got != "# demo\n" {
		t.Errorf("README.md on the branch = %q: the out-of-scope write went through", got)
	}
	for _, k := range model.keys {
		if k != "Bearer sk-test-key" {
			t.Errorf("Authorization header %q", k)
		}
	}
	report, _ := os.ReadFile(filepath.Join(f.sessionDir(), "context.md"))
	// analyze + explore + plan + 3 execute turns, 1000 in (600 of them
	// cached) / 100 out each, at $1 and $2 per million tokens: the table
	// does not know gpt-test, so cached input costs the input price.
	for _, want := range []string{"| Tokens | 6000 in (3600 read from cache), 600 out |", "| Estimated cost | $0.01 |", "- Tests: ✅ passed"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("context.md lacks %q", want)
		}
	}
}

// TestBuiltinAgentMCPEndToEnd runs planex with --mcp-config naming the
// MCP test server: the model calls its tool in the execute step, what it
// returned reaches the task's commit, and the task's findings and the
// report say which tool was called.
func TestBuiltinAgentMCPEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bin := mcptest.BuildServer(t)
	model := &scriptedModel{t: t, mcp: true}
	srv := httptest.NewServer(model)
	defer srv.Close()
	cfgFile := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfgFile, []byte(mcptest.Config(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The server's ticket prefix is meant to reach the commit: allowed, it
	// is no secret of planex's (a value planex holds and does not pass on
	// would fail the task).
	cmd := f.command("-y", "--agent", "openai", "--base-url", srv.URL+"/v1", "--model", "gpt-test",
		"--mcp-config", cfgFile, "--review", "skip", "--allow-env", "PLANEX_TEST_TICKET_PREFIX", "add a greeting")
	cmd.Env = append(cmd.Env, "PLANEX_AGENT_CMD=", "OPENAI_API_KEY=sk-test-key", "PLANEX_TEST_TICKET_PREFIX=from-planex-env",
		"PLANEX_SANDBOX_READ="+filepath.Dir(bin))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("planex: %v\n%s", err, out)
	}
	branch := "planex/" + filepath.Base(f.sessionDir())
	if got := f.git("show", branch+":a/hello.txt"); got != "hello\nPX-7: Widgets must be blue (from-planex-env)\n" {
		t.Errorf("a/hello.txt = %q", got)
	}
	tasks, _ := os.ReadFile(filepath.Join(f.sessionDir(), "tasks.csv"))
	if !strings.Contains(string(tasks), "wrote a/hello.txt MCP tools called: mcp__tickets__lookup_ticket.") {
		t.Errorf("tasks.csv does not name the MCP tool called:\n%s", tasks)
	}
	report, _ := os.ReadFile(filepath.Join(f.sessionDir(), "context.md"))
	// Markdown escapes the underscores.
	if !strings.Contains(strings.ReplaceAll(string(report), `\`, ""), "- Findings: wrote a/hello.txt MCP tools called: mcp__tickets__lookup_ticket.") {
		t.Errorf("context.md does not name the MCP tool called:\n%s", report)
	}
}

func TestMCPConfigErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "openai", "--mcp-config", `{"mcpServers":{"t":{"command":"x","env":{"K":"${PLANEX_TEST_UNSET_VAR}"}}}}`},
			`planex: --mcp-config: inline MCP configuration: server "t": env.K: ${PLANEX_TEST_UNSET_VAR} is not set`},
		{[]string{"--agent", "openai", "--mcp-config", "no-such.json"}, "planex: --mcp-config: reading the MCP configuration"},
		{[]string{"--agent-cmd", "true", "--mcp-config", `{"mcpServers":{"t":{"command":"x"}}}`}, "not with a command agent"},
	}
	for _, c := range cases {
		cmd := f.command(append(c.args, "-y", "add a greeting")...)
		cmd.Env = append(cmd.Env, "OPENAI_API_KEY=sk-test-key")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v\n%s\nwant %q", c.args, err, out, c.want)
		}
	}
}
