package clis

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/agent/mcp"
)

func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for name, hint := range map[string]string{
		"claude": "npm install -g @anthropic-ai/claude-code@2.1.330",
		"codex":  "npm install -g @openai/codex@0.169.0",
		"gemini": "npm install -g @google/gemini-cli@0.61.0",
	} {
		_, err := New(Config{Name: name})
		if err == nil || !strings.Contains(err.Error(), hint) || !strings.Contains(err.Error(), "--agent anthropic") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New(Config{Name: "cursor"}); err == nil || !strings.Contains(err.Error(), "claude, codex, gemini") {
		t.Errorf("unknown: %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"abc": "abc", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "Read,Grep": "Read,Grep"} {
		if got := shellQuote(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

// The decoders read output captured from the tested CLI versions (cut
// down to the fields that matter).
func TestDecodeClaude(t *testing.T) {
	t.Parallel()
	ok := `{"type":"result","subtype":"success","is_error":false,"result":"Done.\n{\"id\":\"T1\"}","total_cost_usd":0.006,` +
		`"usage":{"input_tokens":2000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":200},` +
		`"modelUsage":{"claude-sonnet-5-5":{"inputTokens":1500,"outputTokens":200,"cacheReadInputTokens":400,"cacheCreationInputTokens":100,"costUSD":0.006}},` +
		`"permission_denials":[{"tool_name":"Write","tool_use_id":"toolu_1","tool_input":{"file_path":"/etc/passwd","content":"x"}}],"stop_reason":"end_turn"}`
	r, err := decodeClaude([]byte("some log line\n" + ok + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r.text != "Done.\n{\"id\":\"T1\"}" || r.failure != "" || !r.costKnown || r.reportedCost != 0.006 {
		t.Errorf("report %+v", r)
	}
	if u := r.tokens["claude-sonnet-5-5"]; u.InputTokens != 2000 || u.OutputTokens != 200 || u.CacheReadTokens != 400 || u.CacheWriteTokens != 100 {
		t.Errorf("tokens %+v: cache reads and writes count as input, and apart", r.tokens)
	}
	if len(r.problems) != 1 || r.problems[0] != "permission denied: Write(/etc/passwd)" {
		t.Errorf("problems %q", r.problems)
	}

	maxTurns := `{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"],"usage":{"input_tokens":1000,"output_tokens":100}}`
	if r, _ := decodeClaude([]byte(maxTurns)); r.failure != "Reached maximum number of turns (1)" || r.tokens[""].InputTokens != 1000 {
		t.Errorf("max turns: %+v", r)
	}
	if _, err := decodeClaude([]byte("Error: --json-schema is not valid JSON\n")); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("non-JSON output: %v", err)
	}
}

func TestDecodeCodex(t *testing.T) {
	t.Parallel()
	out := `WARNING: proceeding, even though we could not create PATH aliases
{"type":"thread.started","thread_id":"x"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for ` + "`m`" + ` not found."}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"rm -rf /","status":"declined"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"first"}}
{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":500,"output_tokens":200,"reasoning_output_tokens":50}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"final {\"id\":\"T1\"}"}}
{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100}}
`
	r, err := decodeCodex([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.text != `final {"id":"T1"}` || r.failure != "" || r.costKnown {
		t.Errorf("report %+v", r)
	}
	if u := r.tokens[""]; u.InputTokens != 3000 || u.OutputTokens != 300 || u.CacheReadTokens != 500 || u.CacheWriteTokens != 0 {
		t.Errorf("tokens %+v", r.tokens)
	}
	if strings.Join(r.problems, "|") != "codex: Model metadata for `m` not found.|command declined: rm -rf /" {
		t.Errorf("problems %q", r.problems)
	}
	failed := `{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: invalid key"}}
`
	if r, _ := decodeCodex([]byte(failed)); !strings.Contains(r.failure, "401 Unauthorized") || !strings.Contains(r.failure, "Reconnecting") {
		t.Errorf("failed turn: %+v", r)
	}
	if _, err := decodeCodex([]byte("error: unexpected argument '--bogus' found\n")); err == nil || !strings.Contains(err.Error(), "--bogus") {
		t.Errorf("no events: %v", err)
	}
}

func TestDecodeGemini(t *testing.T) {
	t.Parallel()
	out := `Warning: 256-color support not detected.
{
  "session_id": "s",
  "response": "Done {\"id\":\"T1\"}",
  "stats": {
    "models": {
      "gemini-2.5-flash": {"tokens": {"input": 1500, "prompt": 2000, "candidates": 200, "total": 2250, "cached": 500, "thoughts": 50, "tool": 0}},
      "gemini-3.8-flash": {"tokens": {"prompt": 10, "candidates": 1, "thoughts": 0, "tool": 5}}
    },
    "tools": {"byName": {"write_file": {"count": 2, "success": 1, "fail": 1, "decisions": {"accept": 1, "reject": 1}}}}
  }
}`
	r, err := decodeGemini([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.text != `Done {"id":"T1"}` || r.failure != "" {
		t.Errorf("report %+v", r)
	}
	if u := r.tokens["gemini-2.5-flash"]; u.InputTokens != 2000 || u.OutputTokens != 250 || u.CacheReadTokens != 500 {
		t.Errorf("tokens %+v", r.tokens)
	}
	if u := r.tokens["gemini-3.8-flash"]; u.InputTokens != 15 || u.OutputTokens != 1 || u.CacheReadTokens != 0 {
		t.Errorf("tokens %+v", r.tokens)
	}
	if strings.Join(r.problems, "|") != "write_file: 1 call(s) refused by the approval policy|write_file: 1 call(s) failed" {
		t.Errorf("problems %q", r.problems)
	}
	errOut := `{"session_id":"s","error":{"type":"FatalAuthenticationError","message":"API key not valid","code":41}}`
	if r, _ := decodeGemini([]byte(errOut)); r.failure != "FatalAuthenticationError: API key not valid" {
		t.Errorf("error: %+v", r)
	}
}

// TestUsagePricing: the user's price wins, then the CLI's own cost, then
// the table by model; a model without a price costs 0.
func TestUsagePricing(t *testing.T) {
	t.Parallel()
	tokens := map[string]agent.Usage{"gemini-2.5-flash": {InputTokens: 1_000_000, OutputTokens: 1_000_000}, "mystery-model": {InputTokens: 1_000_000}}
	a := &Agent{cfg: Config{Name: "gemini", Model: "gemini-2.5-flash"}}
	if u := a.usage(report{tokens: tokens}); u.InputTokens != 2_000_000 || u.OutputTokens != 1_000_000 || !near(u.CostUSD, 0.3+2.5) {
		t.Errorf("table: %+v", u)
	}
	if u := a.usage(report{tokens: tokens, costKnown: true, reportedCost: 1.25}); !near(u.CostUSD, 1.25) {
		t.Errorf("reported: %+v", u)
	}
	a.cfg.Price = &builtin.Price{InPerMTok: 1, OutPerMTok: 10}
	if u := a.usage(report{tokens: tokens, costKnown: true, reportedCost: 1.25}); !near(u.CostUSD, 2+10) {
		t.Errorf("user's price: %+v", u)
	}
	// Cache reads cost the table's cached rate ($0.03 rather than $0.30 for
	// gemini-2.5-flash), and the sum keeps them apart.
	cachedTokens := map[string]agent.Usage{"gemini-2.5-flash": {InputTokens: 2_000_000, CacheReadTokens: 1_000_000}, "gemini-2.5-pro": {InputTokens: 1_000_000, CacheReadTokens: 1_000_000}}
	if u := (&Agent{cfg: Config{Name: "gemini"}}).usage(report{tokens: cachedTokens}); u.InputTokens != 3_000_000 || u.CacheReadTokens != 2_000_000 || !near(u.CostUSD, 0.3+0.03+0.125) {
		t.Errorf("cached, table: %+v", u)
	}
	// The user's price keeps the family's cache ratio (0.1× for Gemini 2.5).
	a.cfg.Price = &builtin.Price{InPerMTok: 1, OutPerMTok: 10, CacheReadPerMTok: 0.1}
	if u := a.usage(report{tokens: cachedTokens, costKnown: true, reportedCost: 1.25}); !near(u.CostUSD, 1+0.1+0.1) {
		t.Errorf("cached, user's price: %+v", u)
	}
	codex := &Agent{cfg: Config{Name: "codex", Model: "gpt-5-mini"}}
	if u := codex.usage(report{tokens: map[string]agent.Usage{"": {InputTokens: 1_000_000}}}); !near(u.CostUSD, 0.25) {
		t.Errorf("unnamed model priced as the configured one: %+v", u)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestInstallDirsNeverExposeAHome(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"HOME=" + home}
	for _, tc := range []struct {
		path string
		want string
	}{
		{home + "/.npm-global/lib/node_modules/@openai/codex/bin/codex.js", home + "/.npm-global/lib/node_modules"},
		{home + "/claude", ""},
		{"/opt/tools/bin/gemini", "/opt/tools/bin"},
	} {
		dirs := installDirs(tc.path, env)
		found := false
		for _, d := range dirs {
			if d == home || strings.HasPrefix(home, d+"/") || d == "/" {
				t.Errorf("%s: exposes %s, which holds the home", tc.path, d)
			}
			if d == tc.want {
				found = true
			}
		}
		if tc.want != "" && !found {
			t.Errorf("%s: dirs %v lack %s", tc.path, dirs, tc.want)
		}
	}
}

// TestMCPPassThrough: each CLI's configuration names the user's servers
// in its own format, stdio and HTTP, with the expanded env and headers.
func TestMCPPassThrough(t *testing.T) {
	t.Parallel()
	cfg, err := mcp.Parse([]byte(`{"mcpServers":{
		"tickets":{"command":"/opt/tickets","args":["--db","x y"],"env":{"TICKET_TOKEN":"${TOK}"}},
		"docs":{"type":"http","url":"https://docs.example/mcp","headers":{"Authorization":"Bearer ${TOK}"}}}}`), "test",
		func(string) (string, bool) { return "tok-123", true })
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		home := t.TempDir()
		c, _ := lookup(name)
		s := setup{phase: agent.PhaseExplore, model: "m", home: home, mcp: cfg}
		if _, err := c.configure(s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		args := strings.Join(c.args(s, 0), " ")
		var file string
		switch name {
		case "claude":
			file = claudeMCPFile(s)
			if !strings.Contains(args, "--mcp-config "+file) || !strings.Contains(args, "--strict-mcp-config") ||
				!strings.Contains(args, "--allowedTools Read,Grep,Glob,mcp__docs,mcp__tickets") {
				t.Errorf("claude args %s", args)
			}
		case "codex":
			file = filepath.Join(home, "codex", "config.toml")
		case "gemini":
			file = filepath.Join(home, "gemini", ".gemini", "settings.json")
			policy, _ := os.ReadFile(geminiPolicyFile(s))
			if !strings.Contains(string(policy), "mcpName = \"tickets\"\ndecision = \"allow\"") {
				t.Errorf("gemini policy does not allow the server's tools:\n%s", policy)
			}
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[string][]string{
			"claude": {`"command": "/opt/tickets"`, `"x y"`, `"TICKET_TOKEN": "tok-123"`, `"type": "http"`, `"url": "https://docs.example/mcp"`, `"Authorization": "Bearer tok-123"`},
			"codex": {`[mcp_servers."tickets"]`, `command = "/opt/tickets"`, `args = ["--db", "x y"]`, `env = { "TICKET_TOKEN" = "tok-123" }`,
				`[mcp_servers."docs"]`, `url = "https://docs.example/mcp"`, `http_headers = { "Authorization" = "Bearer tok-123" }`, `default_tools_approval_mode = "approve"`},
			"gemini": {`"command": "/opt/tickets"`, `"TICKET_TOKEN": "tok-123"`, `"httpUrl": "https://docs.example/mcp"`, `"Authorization": "Bearer tok-123"`, `"trust": true`},
		}[name]
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: %s lacks %s:\n%s", name, filepath.Base(file), w, b)
			}
		}
		if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %s is not private to its owner: %v", name, file, info.Mode())
		}
	}
}

// TestCodexConfigKeepsSearchCached: the config.toml planex writes for
// Codex sets web_search to "cached" as a root key (before any table, or
// TOML reads it as a table's), so Codex's web search tool asks for OpenAI's
// index only (external_web_access false), which the gateway passes, and
// never live, which it refuses. The real Codex reads the key: the same
// file with another value fails to load.
func TestCodexConfigKeepsSearchCached(t *testing.T) {
	t.Parallel()
	c, _ := lookup("codex")
	for _, s := range []setup{
		{phase: agent.PhaseExecute, model: "m", keyVar: "OPENAI_API_KEY"},
		{phase: agent.PhaseExplore, model: "m", baseURL: "http://127.0.0.1:9/v1"},
	} {
		s.home = t.TempDir()
		if _, err := c.configure(s); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(s.home, "codex", "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		root, _, _ := strings.Cut(string(b), "\n[")
		if !slices.Contains(strings.Split(root, "\n"), `web_search = "cached"`) {
			t.Errorf("config.toml sets no root web_search = \"cached\":\n%s", b)
		}
	}
}
