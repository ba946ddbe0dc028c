package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/agent/builtin"
)

type reply = agenttest.Reply

// message builds a Messages API response body.
func message(stop string, in, out int, blocks ...string) reply {
	return reply{Body: fmt.Sprintf(`{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",`+
		`"content":[%s],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}`,
		strings.Join(blocks, ","), stop, in, out)}
}

func toolUse(id, name, input string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, id, name, input)
}

func text(s string) string { return fmt.Sprintf(`{"type":"text","text":%q}`, s) }

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# r\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	return dir
}

type harness struct {
	api         *agenttest.API
	agent       *builtin.Agent
	waits       []time.Duration
	repo        string
	discoveries string
}

func newHarness(t *testing.T, maxTurns int, replies ...reply) *harness {
	t.Helper()
	t.Setenv("ANTHROPIC_API_KEY", "env-key-must-not-be-used")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	h := &harness{api: &agenttest.API{T: t, Path: "/v1/messages", AuthHeader: "X-Api-Key", Replies: replies}, repo: gitRepo(t), discoveries: filepath.Join(t.TempDir(), "discoveries.ndjson")}
	srv := httptest.NewServer(h.api)
	t.Cleanup(srv.Close)
	p, err := New(Config{APIKey: "test-key", BaseURL: srv.URL, Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	h.agent = builtin.New(p, builtin.Options{Name: "anthropic", Model: p.Model(), MaxTurns: maxTurns,
		Sleep: func(ctx context.Context, d time.Duration) error { h.waits = append(h.waits, d); return nil }})
	return h
}

func (h *harness) step(phase agent.Phase, id, scope string) agent.Step {
	return agent.Step{Phase: phase, ID: id, Prompt: "do the task", Dir: h.repo, DiscoveriesFile: h.discoveries, Scope: scope, Timeout: time.Minute}
}

const validExec = `{"id":"T1","status":"completed","findings":"added hello","files_modified":["src/hello.txt"],"tests_passed":true}`

// toolResults returns the tool_result blocks of the last user message of request i.
func (h *harness) toolResults(t *testing.T, i int) []map[string]any {
	t.Helper()
	msgs := h.api.Reqs[i]["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "user" {
		t.Fatalf("last message role %v", last["role"])
	}
	var out []map[string]any
	for _, b := range last["content"].([]any) {
		bm := b.(map[string]any)
		if bm["type"] == "tool_result" {
			out = append(out, bm)
		}
	}
	return out
}

func resultText(b map[string]any) string {
	var s []string
	for _, c := range b["content"].([]any) {
		s = append(s, c.(map[string]any)["text"].(string))
	}
	return strings.Join(s, "")
}

func TestTwoTurnEdit(t *testing.T) {
	h := newHarness(t, 5,
		message("tool_use", 1000, 50, text("I'll write it."), toolUse("tu_1", "write_file", `{"path":"src/hello.txt","content":"hello\n"}`)),
		message("tool_use", 1200, 40, toolUse("tu_2", "report_result", validExec)),
	)
	res, err := h.agent.Run(context.Background(), h.step(agent.PhaseExecute, "T1", "src/**"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.repo, "src/hello.txt")); string(b) != "hello\n" {
		t.Errorf("file content %q", b)
	}
	var got agent.ExecuteResult
	if err := agent.Decode(agent.PhaseExecute, res.Raw, &got); err != nil || got.Status != "completed" {
		t.Errorf("result %s: %v", res.Raw, err)
	}
	if res.Usage.InputTokens != 2200 || res.Usage.OutputTokens != 90 {
		t.Errorf("usage %+v", res.Usage)
	}
	// sonnet: $3 in, $15 out per MTok
	if want := 2200*3/1e6 + 90*15/1e6; abs(res.Usage.CostUSD-want) > 1e-9 {
		t.Errorf("cost %v, want %v", res.Usage.CostUSD, want)
	}
	// Wire checks: key, system prompt, tools, tool_result pairing.
	if h.api.Auth[0] != "test-key" {
		t.Errorf("x-api-key %q", h.api.Auth[0])
	}
	req := h.api.Reqs[0]
	if req["model"] != "claude-sonnet-4-5" || req["max_tokens"].(float64) != builtin.DefaultMaxOutputTokens {
		t.Errorf("model/max_tokens: %v %v", req["model"], req["max_tokens"])
	}
	sys, _ := json.Marshal(req["system"])
	if !strings.Contains(string(sys), "never instructions") {
		t.Errorf("system prompt lacks the trust rule: %s", sys)
	}
	var names []string
	for _, tl := range req["tools"].([]any) {
		tm := tl.(map[string]any)
		names = append(names, tm["name"].(string))
		if tm["input_schema"].(map[string]any)["type"] != "object" {
			t.Errorf("tool %s schema type %v", tm["name"], tm["input_schema"])
		}
	}
	if strings.Join(names, ",") != "list_files,read_file,search,write_file,edit_file,run_command,append_discovery,report_result" {
		t.Errorf("tools %v", names)
	}
	trs := h.toolResults(t, 1)
	if len(trs) != 1 || trs[0]["tool_use_id"] != "tu_1" || trs[0]["is_error"] != false || !strings.Contains(resultText(trs[0]), "created src/hello.txt") {
		t.Errorf("tool_result %v", trs)
	}
	msgs := h.api.Reqs[1]["messages"].([]any)
	if msgs[1].(map[string]any)["role"] != "assistant" {
		t.Errorf("assistant turn not replayed: %v", msgs[1])
	}
}

func TestRefusedPaths(t *testing.T) {
	h := newHarness(t, 5,
		message("tool_use", 10, 10,
			toolUse("a", "read_file", `{"path":"../../etc/passwd"}`),
			toolUse("b", "write_file", `{"path":"README.md","content":"pwned"}`),
			toolUse("c", "write_file", `{"path":".git/config","content":"pwned"}`),
			toolUse("d", "edit_file", `{"path":".git/HEAD","old_text":"ref","new_text":"x"}`)),
		message("tool_use", 10, 10, toolUse("e", "report_result", `{"id":"T1","status":"failed","findings":"refused","tests_passed":false,"error":"writes refused"}`)),
	)
	gitCfg, _ := os.ReadFile(filepath.Join(h.repo, ".git/config"))
	res, err := h.agent.Run(context.Background(), h.step(agent.PhaseExecute, "T1", "src/**"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Raw), `"failed"`) {
		t.Errorf("result %s", res.Raw)
	}
	wants := []string{"leaves the repository", "outside this task's scope", "inside .git/", "inside .git/"}
	trs := h.toolResults(t, 1)
	if len(trs) != len(wants) {
		t.Fatalf("got %d tool results", len(trs))
	}
	for i, w := range wants {
		if trs[i]["is_error"] != true || !strings.Contains(resultText(trs[i]), w) {
			t.Errorf("result %d: %v, want error with %q", i, trs[i], w)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(h.repo, "README.md")); string(b) != "# r\n" {
		t.Errorf("README changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.repo, ".git/config")); string(b) != string(gitCfg) {
		t.Errorf(".git/config changed")
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	h := newHarness(t, 5,
		reply{Status: 429, Header: map[string]string{"Retry-After": "7"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
		reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		message("tool_use", 5, 5, toolUse("a", "report_result", `{"type":"feature","complexity":"Low","angles":[{"id":"E1","angle":"api","description":"d","focus":"f"}]}`)),
	)
	res, err := h.agent.Run(context.Background(), h.step(agent.PhaseAnalyze, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.api.Reqs) != 3 {
		t.Errorf("%d requests, want 3", len(h.api.Reqs))
	}
	if len(h.waits) != 2 || h.waits[0] != 7*time.Second {
		t.Errorf("waits %v, want first 7s from Retry-After", h.waits)
	}
	if !strings.Contains(string(res.Raw), `"E1"`) {
		t.Errorf("result %s", res.Raw)
	}
	// Read-only phase: no writers offered.
	for _, tl := range h.api.Reqs[2]["tools"].([]any) {
		if n := tl.(map[string]any)["name"]; n == "write_file" || n == "run_command" || n == "edit_file" {
			t.Errorf("analyze offered %v", n)
		}
	}
}

func TestRetryAfterBeyondDeadline(t *testing.T) {
	h := newHarness(t, 5, reply{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`})
	_, err := h.agent.Run(context.Background(), h.step(agent.PhaseAnalyze, "", ""))
	if err == nil || !strings.Contains(err.Error(), "would pass the step's time limit") || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err %v", err)
	}
}

func TestInvalidResultRepairedOnce(t *testing.T) {
	h := newHarness(t, 5,
		message("tool_use", 5, 5, toolUse("a", "report_result", `{"id":"T1","status":"done"}`)),
		message("tool_use", 5, 5, toolUse("b", "report_result", validExec)),
	)
	res, err := h.agent.Run(context.Background(), h.step(agent.PhaseExecute, "T1", "src"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Raw), `"completed"`) {
		t.Errorf("result %s", res.Raw)
	}
	tr := h.toolResults(t, 1)[0]
	if tr["is_error"] != true || !strings.Contains(resultText(tr), "/status") {
		t.Errorf("validation error not sent back: %v", tr)
	}

	h2 := newHarness(t, 5,
		message("tool_use", 5, 5, toolUse("a", "report_result", `{"id":"T1","status":"done"}`)),
		message("tool_use", 5, 5, toolUse("b", "report_result", `{"id":"T1"}`)),
	)
	_, err = h2.agent.Run(context.Background(), h2.step(agent.PhaseExecute, "T1", "src"))
	if err == nil || !strings.Contains(err.Error(), "invalid result twice") {
		t.Fatalf("second invalid: %v", err)
	}
}

func TestNeverReports(t *testing.T) {
	var rs []reply
	for range 3 {
		rs = append(rs, message("end_turn", 5, 5, text("I think it is done.")))
	}
	h := newHarness(t, 3, rs...)
	res, err := h.agent.Run(context.Background(), h.step(agent.PhaseExplore, "E1", ""))
	if err == nil || !strings.Contains(err.Error(), "no result after 3 turns") || !errors.Is(err, builtin.ErrNoResult) {
		t.Fatalf("err %v", err)
	}
	if res.Usage.InputTokens != 15 {
		t.Errorf("usage of a failed step not kept: %+v", res.Usage)
	}
	msgs := h.api.Reqs[2]["messages"].([]any)
	last, _ := json.Marshal(msgs[len(msgs)-1])
	if !strings.Contains(string(last), "report_result") {
		t.Errorf("no nudge: %s", last)
	}
}

func TestInvalidKey(t *testing.T) {
	h := newHarness(t, 3, reply{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
	_, err := h.agent.Run(context.Background(), h.step(agent.PhasePlan, "", ""))
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"HTTP 401", "API key was rejected", "invalid x-api-key"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if len(h.api.Reqs) != 1 || len(h.waits) != 0 {
		t.Errorf("401 was retried: %d requests", len(h.api.Reqs))
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// TestCacheBreakpoints: every request marks the tools, the system prompt
// and the last block of the conversation for the prompt cache, and no
// more than the API's four breakpoints.
func TestCacheBreakpoints(t *testing.T) {
	h := newHarness(t, 5,
		message("tool_use", 1000, 50, toolUse("tu_1", "list_files", `{}`)),
		message("tool_use", 1200, 40, toolUse("tu_2", "report_result", `{"id":"E1","status":"completed","findings":"f","key_files":[],"error":""}`)),
	)
	if _, err := h.agent.Run(context.Background(), h.step(agent.PhaseExplore, "E1", "")); err != nil {
		t.Fatal(err)
	}
	ephemeral := func(v any) bool {
		cc, _ := v.(map[string]any)["cache_control"].(map[string]any)
		return cc["type"] == "ephemeral"
	}
	for i, req := range h.api.Reqs {
		tools := req["tools"].([]any)
		system := req["system"].([]any)
		msgs := req["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
		if !ephemeral(tools[len(tools)-1]) || !ephemeral(system[len(system)-1]) || !ephemeral(last[len(last)-1]) {
			t.Errorf("request %d: a breakpoint is missing (tools, system, last block)", i)
		}
		b, _ := json.Marshal(req)
		if n := strings.Count(string(b), `"cache_control"`); n != 3 {
			t.Errorf("request %d has %d breakpoints, want 3", i, n)
		}
	}
}

// cachedMessage is a Messages API reply whose usage reports prompt-cache
// writes and reads apart from input_tokens, as the API does.
func cachedMessage(stop string, in, write, read, out int, blocks ...string) reply {
	return reply{Body: fmt.Sprintf(`{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",`+
		`"content":[%s],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,`+
		`"cache_read_input_tokens":%d,"output_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0}}}`,
		strings.Join(blocks, ","), stop, in, write, read, out, write)}
}

// TestCacheUsagePriced: the first turn writes the prompt cache, the
// second reads it; both count as input, and the step costs what the API
// bills for them (reads at 0.1×, writes at 1.25× the input price), well
// below the same tokens uncached.
func TestCacheUsagePriced(t *testing.T) {
	h := newHarness(t, 5,
		cachedMessage("tool_use", 200, 4000, 0, 50, toolUse("tu_1", "list_files", `{}`)),
		cachedMessage("tool_use", 300, 500, 4000, 40, toolUse("tu_2", "report_result", `{"id":"E1","status":"completed","findings":"f","key_files":[],"error":""}`)),
	)
	res, err := h.agent.Run(context.Background(), h.step(agent.PhaseExplore, "E1", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Usage{InputTokens: 9000, OutputTokens: 90, CacheReadTokens: 4000, CacheWriteTokens: 4500}
	// sonnet: $3 in, $0.30 cache read, $3.75 cache write, $15 out per MTok
	want.CostUSD = (500*3 + 4000*0.3 + 4500*3.75 + 90*15) / 1e6
	if res.Usage.InputTokens != want.InputTokens || res.Usage.OutputTokens != want.OutputTokens ||
		res.Usage.CacheReadTokens != want.CacheReadTokens || res.Usage.CacheWriteTokens != want.CacheWriteTokens ||
		abs(res.Usage.CostUSD-want.CostUSD) > 1e-9 {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	if uncached := (9000*3 + 90*15) / 1e6; res.Usage.CostUSD >= uncached {
		t.Errorf("cost %v is not below the uncached %v", res.Usage.CostUSD, uncached)
	}
}
