package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

type call struct{ id, name, args string }

// completion builds a chat.completion body with tool calls or text.
func completion(finish string, in, out int, content string, calls ...call) reply {
	var tc []string
	for _, c := range calls {
		tc = append(tc, fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}`, c.id, c.name, c.args))
	}
	msg := fmt.Sprintf(`{"role":"assistant","content":%s`, jsonOrNull(content))
	if len(tc) > 0 {
		msg += `,"tool_calls":[` + strings.Join(tc, ",") + `]`
	}
	msg += "}"
	return reply{Body: fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-4.1-2025-04-14",`+
		`"choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		msg, finish, in, out, in+out)}
}

func jsonOrNull(s string) string {
	if s == "" {
		return "null"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

type harness struct {
	api   *agenttest.API
	agent *builtin.Agent
	waits []time.Duration
	repo  string
}

func newHarness(t *testing.T, maxTurns int, replies ...reply) *harness {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "env-key-must-not-be-used")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1")
	repo := t.TempDir()
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# r\n"), 0o644)
	h := &harness{api: &agenttest.API{T: t, Path: "/v1/chat/completions", AuthHeader: "Authorization", Replies: replies}, repo: repo}
	srv := httptest.NewServer(h.api)
	t.Cleanup(srv.Close)
	p, err := New(Config{APIKey: "sk-test", BaseURL: srv.URL + "/v1", Model: "gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	h.agent = builtin.New(p, builtin.Options{Name: "openai", Model: p.Model(), MaxTurns: maxTurns,
		Sleep: func(ctx context.Context, d time.Duration) error { h.waits = append(h.waits, d); return nil }})
	return h
}

func (h *harness) run(phase agent.Phase, id, scope string) (agent.Result, error) {
	return h.agent.Run(context.Background(), agent.Step{Phase: phase, ID: id, Prompt: "task", Dir: h.repo, Scope: scope, Timeout: time.Minute})
}

// toolMessages returns the role:"tool" messages of request i.
func (h *harness) toolMessages(i int) []map[string]any {
	var out []map[string]any
	for _, m := range h.api.Reqs[i]["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["role"] == "tool" {
			out = append(out, mm)
		}
	}
	return out
}

const validExec = `{"id":"T1","status":"completed","findings":"ok","files_modified":["src/a.txt"],"tests_passed":true}`

func TestTwoTurnEdit(t *testing.T) {
	h := newHarness(t, 5,
		completion("tool_calls", 300, 30, "", call{"call_1", "write_file", `{"path":"src/a.txt","content":"A\n"}`}),
		completion("tool_calls", 400, 20, "", call{"call_2", "report_result", validExec}),
	)
	res, err := h.run(agent.PhaseExecute, "T1", "src/**")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.repo, "src/a.txt")); string(b) != "A\n" {
		t.Errorf("file %q", b)
	}
	if res.Usage.InputTokens != 700 || res.Usage.OutputTokens != 50 {
		t.Errorf("usage %+v", res.Usage)
	}
	if want := 700*2/1e6 + 50*8/1e6; res.Usage.CostUSD < want-1e-9 || res.Usage.CostUSD > want+1e-9 {
		t.Errorf("cost %v want %v", res.Usage.CostUSD, want)
	}
	if h.api.Auth[0] != "Bearer sk-test" {
		t.Errorf("auth %q", h.api.Auth[0])
	}
	req := h.api.Reqs[0]
	if req["model"] != "gpt-4.1" || req["max_tokens"] == nil || req["max_completion_tokens"] != nil {
		t.Errorf("model/limit fields: %v %v %v", req["model"], req["max_tokens"], req["max_completion_tokens"])
	}
	msgs := req["messages"].([]any)
	if msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["role"] != "user" {
		t.Errorf("first messages %v", msgs[:2])
	}
	tools := req["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if tools[0].(map[string]any)["type"] != "function" || fn["name"] != "list_files" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("tool def %v", tools[0])
	}
	tm := h.toolMessages(1)
	if len(tm) != 1 || tm[0]["tool_call_id"] != "call_1" || !strings.Contains(tm[0]["content"].(string), "created src/a.txt") {
		t.Errorf("tool messages %v", tm)
	}
	second := h.api.Reqs[1]["messages"].([]any)
	asst := second[2].(map[string]any)
	if asst["role"] != "assistant" || asst["tool_calls"] == nil {
		t.Errorf("assistant tool_calls not replayed: %v", asst)
	}
}

func TestFaultsAndRefusals(t *testing.T) {
	cases := []struct {
		name     string
		phase    agent.Phase
		maxTurns int
		replies  []reply
		wantErr  []string
		check    func(t *testing.T, h *harness, res agent.Result)
	}{
		{
			name: "refused paths", phase: agent.PhaseExecute, maxTurns: 4,
			replies: []reply{
				completion("tool_calls", 1, 1, "", call{"a", "read_file", `{"path":"../../etc/passwd"}`},
					call{"b", "write_file", `{"path":"README.md","content":"x"}`},
					call{"c", "write_file", `{"path":".git/config","content":"x"}`}),
				completion("tool_calls", 1, 1, "", call{"d", "report_result", validExec}),
			},
			check: func(t *testing.T, h *harness, res agent.Result) {
				tm := h.toolMessages(1)
				for i, w := range []string{"leaves the repository", "outside this task's scope", "inside .git/"} {
					if !strings.Contains(tm[i]["content"].(string), w) {
						t.Errorf("tool message %d %v lacks %q", i, tm[i]["content"], w)
					}
				}
				if b, _ := os.ReadFile(filepath.Join(h.repo, "README.md")); string(b) != "# r\n" {
					t.Errorf("README changed")
				}
				if b, _ := os.ReadFile(filepath.Join(h.repo, ".git/config")); strings.TrimSpace(string(b)) == "x" {
					t.Errorf(".git/config overwritten")
				}
			},
		},
		{
			name: "429 then success", phase: agent.PhasePlan, maxTurns: 3,
			replies: []reply{
				{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
				{Status: 503, Body: `{"error":{"message":"unavailable"}}`},
				completion("tool_calls", 1, 1, "", call{"a", "report_result", `{"summary":"s","approach":"a","tasks":[{"id":"T1","title":"t","description":"d","scope":"src/**"}]}`}),
			},
			check: func(t *testing.T, h *harness, res agent.Result) {
				if len(h.waits) != 2 || h.waits[0] != 2*time.Second {
					t.Errorf("waits %v", h.waits)
				}
			},
		},
		{
			name: "invalid result repaired", phase: agent.PhaseExecute, maxTurns: 3,
			replies: []reply{
				completion("tool_calls", 1, 1, "", call{"a", "report_result", `{"id":"T1"}`}),
				completion("tool_calls", 1, 1, "", call{"b", "report_result", validExec}),
			},
			check: func(t *testing.T, h *harness, res agent.Result) {
				tm := h.toolMessages(1)
				if !strings.Contains(tm[0]["content"].(string), "missing properties") {
					t.Errorf("validation error not returned: %v", tm[0]["content"])
				}
			},
		},
		{
			name: "never reports", phase: agent.PhaseExplore, maxTurns: 2,
			replies: []reply{completion("stop", 1, 1, "done"), completion("stop", 1, 1, "done")},
			wantErr: []string{"no result after 2 turns"},
		},
		{
			name: "invalid key", phase: agent.PhaseAnalyze, maxTurns: 2,
			replies: []reply{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`}},
			wantErr: []string{"HTTP 401", "API key was rejected", "Incorrect API key provided"},
		},
		{
			name: "bad request is not retried", phase: agent.PhaseAnalyze, maxTurns: 2,
			replies: []reply{{Status: 400, Body: `{"error":{"message":"Invalid schema for function 'report_result'"}}`}},
			wantErr: []string{"HTTP 400", "Invalid schema for function"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.maxTurns, tc.replies...)
			res, err := h.run(tc.phase, map[agent.Phase]string{agent.PhaseExecute: "T1", agent.PhaseExplore: "E1"}[tc.phase], "src/**")
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, h, res)
			}
			if len(h.api.Replies) != 0 {
				t.Errorf("%d scripted replies unused", len(h.api.Replies))
			}
		})
	}
}

func TestMaxTokensField(t *testing.T) {
	for _, c := range []struct {
		base string
		want bool
	}{
		{"https://api.openai.com/v1", true},
		{"https://x.openai.azure.com/openai/v1/", true},
		{"http://localhost:11434/v1", false},
		{"https://openrouter.ai/api/v1", false},
	} {
		p, err := New(Config{BaseURL: c.base})
		if err != nil {
			t.Fatal(err)
		}
		if p.useCompletion != c.want {
			t.Errorf("%s: max_completion_tokens=%v", c.base, p.useCompletion)
		}
	}
	if _, err := New(Config{BaseURL: "not a url"}); err == nil {
		t.Error("bad base URL accepted")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAzureRequest: an Azure base URL gets its key in api-key as well,
// the path is the base URL's, and the request body is the protocol's.
func TestAzureRequest(t *testing.T) {
	var header http.Header
	var path string
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header, path = r.Header.Clone(), r.URL.Path
		json.NewDecoder(r.Body).Decode(&body)
		io.WriteString(w, completion("stop", 5, 2, "hello").Body)
	}))
	t.Cleanup(srv.Close)
	// The client sends the Azure host's request to the test server.
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r.URL.Scheme, r.URL.Host = "http", srv.Listener.Addr().String()
		return http.DefaultTransport.RoundTrip(r)
	})}
	p, err := New(Config{APIKey: "az-key", BaseURL: "https://x.openai.azure.com/openai/v1", Model: "gpt-4.1", HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Send(context.Background(), builtin.Request{System: "sys", MaxOutputTokens: 100,
		Messages: []builtin.Message{{Role: builtin.RoleUser, Text: "hi"}, {Role: builtin.RoleAssistant}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "hello" || resp.Stop != builtin.StopEndTurn || resp.Usage.InputTokens != 5 || resp.Usage.OutputTokens != 2 {
		t.Errorf("response %+v", resp)
	}
	if header.Get("api-key") != "az-key" || header.Get("Authorization") != "Bearer az-key" || header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", header)
	}
	if path != "/openai/v1/chat/completions" {
		t.Errorf("path %q", path)
	}
	msgs, _ := body["messages"].([]any)
	want := `[{"content":"sys","role":"system"},{"content":"hi","role":"user"},{"content":"(no text)","role":"assistant"}]`
	if b, _ := json.Marshal(msgs); string(b) != want {
		t.Errorf("messages %s, want %s", b, want)
	}
	if body["max_completion_tokens"] != float64(100) || body["max_tokens"] != nil || body["tools"] != nil {
		t.Errorf("body %v", body)
	}
}

// TestCachedPromptTokensPriced: Chat Completions reports cached prompt
// tokens inside prompt_tokens (prompt_tokens_details.cached_tokens); they
// count as input and cost gpt-4.1's cached rate ($0.50 rather than $2).
func TestCachedPromptTokensPriced(t *testing.T) {
	cached := func(r reply, cachedTokens int) reply {
		r.Body = strings.Replace(r.Body, `"total_tokens"`, fmt.Sprintf(`"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},"total_tokens"`, cachedTokens), 1)
		return r
	}
	h := newHarness(t, 5,
		cached(completion("tool_calls", 3000, 30, "", call{"call_1", "write_file", `{"path":"src/a.txt","content":"A\n"}`}), 0),
		cached(completion("tool_calls", 4000, 20, "", call{"call_2", "report_result", validExec}), 2944),
	)
	res, err := h.run(agent.PhaseExecute, "T1", "src/**")
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.InputTokens != 7000 || res.Usage.CacheReadTokens != 2944 || res.Usage.CacheWriteTokens != 0 || res.Usage.OutputTokens != 50 {
		t.Errorf("usage %+v", res.Usage)
	}
	want := ((7000-2944)*2 + 2944*0.5 + 50*8) / 1e6
	if res.Usage.CostUSD < want-1e-9 || res.Usage.CostUSD > want+1e-9 {
		t.Errorf("cost %v want %v", res.Usage.CostUSD, want)
	}
}
