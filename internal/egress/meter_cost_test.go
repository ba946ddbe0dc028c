package egress

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/usage"
)

// TestRedTeamGatewayMetersHourCacheWrites: the program marks its prompt
// for Anthropic's one-hour cache (cache_control with "ttl": "1h"), whose
// writes bill twice the input price, against 1.25 times for the
// five-minute writes the meter priced every write at. The answer splits
// the writes in usage.cache_creation; each one-hour write now counts as
// 1.6 five-minute writes (2 / 1.25), in a JSON answer, a stream and an
// advisor's iteration alike. Before, 8,000 one-hour writes of 10,000
// counted as 10,000 five-minute writes: $0.025 at Sonnet 5.5's $2.50
// a million where the provider billed $0.037.
func TestRedTeamGatewayMetersHourCacheWrites(t *testing.T) {
	t.Parallel()
	const u = `"usage":{"input_tokens":5,"output_tokens":7,"cache_creation_input_tokens":10000,"cache_read_input_tokens":0,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":2000,"ephemeral_1h_input_tokens":8000}`
	answers := []struct {
		name, contentType, body string
		want                    map[string]usage.Usage
	}{
		{"JSON answer", "application/json", `{"model":"claude-sonnet-5-5",` + u + `}}`,
			map[string]usage.Usage{"claude-sonnet-5-5": {InputTokens: 14805, OutputTokens: 7, CacheWriteTokens: 14800}}},
		{"stream", "text/event-stream", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\"," + u +
			"}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\"," + u + "}}\n\n",
			map[string]usage.Usage{"claude-sonnet-5-5": {InputTokens: 14805, OutputTokens: 7, CacheWriteTokens: 14800}}},
		{"advisor iteration", "application/json", `{"model":"claude-sonnet-5-5","usage":{"input_tokens":5,"output_tokens":7,` +
			`"iterations":[{"type":"advisor_message","model":"claude-mythos-5","input_tokens":1,"output_tokens":2,` +
			`"cache_creation_input_tokens":1000,"cache_creation":{"ephemeral_1h_input_tokens":1000}}]}}`,
			map[string]usage.Usage{"claude-sonnet-5-5": {InputTokens: 5, OutputTokens: 7},
				"claude-mythos-5": {InputTokens: 1601, OutputTokens: 2, CacheWriteTokens: 1600}}},
	}
	for _, a := range answers {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			got := meterAnswer(t, a.contentType, a.body)
			if len(got) != len(a.want) {
				t.Fatalf("metered %+v, want %+v", got, a.want)
			}
			for m, w := range a.want {
				if got[m] != w {
					t.Errorf("%s: metered %+v, want %+v (each one-hour write as 1.6 five-minute ones)", m, got[m], w)
				}
			}
		})
	}
}

// TestCacheWritesBounded: the one-hour count is read within the total
// and bounded as usage is, so it never overflows, whatever an answer says.
func TestCacheWritesBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ total, hour, want int64 }{
		{0, 0, 0}, {10, 0, 10}, {10, 10, 16}, {10, 99, 16}, {10, -5, 10}, {-3, 4, 0}, {1, 1, 2},
		{1 << 62, 1 << 62, 1<<40 + (3<<40+4)/5},
	} {
		if got := cacheWrites(c.total, c.hour); got != c.want {
			t.Errorf("cacheWrites(%d, %d) = %d, want %d", c.total, c.hour, got, c.want)
		}
	}
}

// TestRedTeamGatewayMetersToolFees: the program has the provider search
// the web for it in a loop (Anthropic's web_search tool, OpenAI's
// web_search, which Codex sends on every call), each search billed per
// call on top of the tokens: the meter counted the tokens only, so a
// call of a few tokens that searched a hundred times cost a dollar
// unmetered. Each search now adds its fee to the call's cost, read from
// the answer (Anthropic's usage.server_tool_use; OpenAI's
// web_search_call items, in the output list or, in a stream cut before
// it, the output_item events), never from what the model writes.
func TestRedTeamGatewayMetersToolFees(t *testing.T) {
	t.Parallel()
	const text = `[{"type":"output_text","text":"{\"type\":\"web_search_call\"} \"type\":\"web_search_call\""}]`
	item := func(ev string) string {
		return "event: " + ev + "\ndata: {\"type\":\"" + ev + "\",\"item\":{\"id\":\"ws\",\"type\":\"web_search_call\",\"status\":\"completed\"}}\n\n"
	}
	rows := []struct {
		name        string
		p           Provider
		contentType string
		body        string
		fee         float64
	}{
		{"anthropic searches", ProviderAnthropic, "application/json",
			`{"model":"claude-sonnet-5-5","usage":{"input_tokens":5,"output_tokens":7,"server_tool_use":{"web_search_requests":100}}}`, 1},
		{"anthropic stream", ProviderAnthropic, "text/event-stream",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":7,\"server_tool_use\":{\"web_search_requests\":3}}}\n\n", 0.03},
		{"openai answer", ProviderOpenAI, "application/json",
			`{"model":"gpt-6.1-sol","output":[{"type":"web_search_call","id":"a"},{"type":"web_search_call","id":"b"},{"type":"message","content":` + text + `}],"usage":{"input_tokens":5,"output_tokens":7}}`, 0.05},
		{"openai stream", ProviderOpenAI, "text/event-stream",
			item("response.output_item.added") + item("response.output_item.done") + item("response.output_item.added") + item("response.output_item.done") +
				"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"model\":\"gpt-6.1-sol\",\"output\":[{\"type\":\"web_search_call\"},{\"type\":\"web_search_call\"},{\"type\":\"message\",\"content\":" + text + "}],\"usage\":{\"input_tokens\":5,\"output_tokens\":7}}}\n\n", 0.05},
		{"openai stream cut before its end", ProviderOpenAI, "text/event-stream",
			item("response.output_item.added") + item("response.output_item.done") + item("response.output_item.added"), 0.05},
		{"openai model text naming a search", ProviderOpenAI, "application/json",
			`{"model":"gpt-6.1-sol","output":[{"type":"message","content":` + text + `}],"usage":{"input_tokens":5,"output_tokens":7}}`, 0},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			g, c, stop := meteredGateway(t, r.p, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", r.contentType)
				io.WriteString(w, r.body)
			}), nil)
			path, body, auth := "/v1/messages", meterCallBody, "X-Api-Key"
			if r.p == ProviderOpenAI {
				path, body, auth = "/responses", `{"model":"gpt-6.1-sol","input":"search","tools":[{"type":"web_search","external_web_access":false}]}`, "Authorization"
			}
			req, _ := http.NewRequest(http.MethodPost, "http://gateway"+path, strings.NewReader(body))
			req.Header.Set(auth, "ph")
			if auth == "Authorization" {
				req.Header.Set(auth, "Bearer ph")
			}
			if status, msg := statusOf(t, c, req); status != http.StatusOK {
				t.Fatalf("status %d (%s)", status, msg)
			}
			stop()
			var fee float64
			for _, u := range g.Meter.Totals() {
				fee += u.CostUSD
			}
			if math.Abs(fee-r.fee) > 1e-9 {
				t.Errorf("metered $%.4f of fees (%+v), want $%.4f", fee, g.Meter.Totals(), r.fee)
			}
		})
	}
}

// TestRedTeamGatewayRefusesUnmeteredToolFees: the hosted tools whose
// per-use fees no answer's usage counts (OpenAI's file search, code
// interpreter containers and image generation, Anthropic's code
// execution container hours, Gemini's search and maps grounding, billed
// per prompt or query) reached the provider under planex's key before,
// with only their tokens metered; they are refused (403) and the
// upstream sees none.
func TestRedTeamGatewayRefusesUnmeteredToolFees(t *testing.T) {
	t.Parallel()
	up := &upstreamRecorder{}
	hs := httptest.NewServer(up)
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	for _, r := range []struct {
		p          Provider
		path, body string
		status     int
	}{
		{ProviderOpenAI, "/responses", `{"model":"m","input":"hi","tools":[{"type":"file_search","vector_store_ids":["vs_1"]}]}`, 403},
		{ProviderOpenAI, "/responses", `{"model":"m","input":"hi","tools":[{"type":"code_interpreter","container":{"type":"auto"}}]}`, 403},
		{ProviderOpenAI, "/responses", `{"model":"m","input":"hi","tools":[{"type":"Image_Generation"}]}`, 403},
		{ProviderOpenAI, "/responses", `{"model":"m","input":"hi","tools":[{"type":"function","name":"code_interpreter"}]}`, 200},
		{ProviderAnthropic, "/v1/messages", `{"model":"m","messages":[],"tools":[{"type":"code_execution_20250825","name":"code_execution"}]}`, 403},
		{ProviderAnthropic, "/v1/messages", `{"model":"m","messages":[],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, 200},
		{ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[],"tools":[{"googleSearch":{}}]}`, 403},
		{ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[],"tools":[{"google_search_retrieval":{}}]}`, 403},
		{ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[],"tools":[{"GoogleMaps":{}}]}`, 403},
		{ProviderGemini, "/v1beta/models/gemini-x:countTokens", `{"generateContentRequest":{"contents":[],"tools":[{"googleSearch":{}}]}}`, 403},
		{ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[{"parts":[{"text":"googleSearch"}]}]}`, 200},
	} {
		client := serveGateway(t, &Gateway{Provider: r.p, Upstream: u, Key: "sk-real", Placeholder: "ph"})
		up.mu.Lock()
		n := len(up.seen)
		up.mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+r.path, strings.NewReader(r.body))
		req.Header.Set("X-Api-Key", "ph")
		req.Header.Set("X-Goog-Api-Key", "ph")
		if r.p == ProviderOpenAI {
			req.Header.Set("Authorization", "Bearer ph")
		}
		if status, msg := statusOf(t, client, req); status != r.status {
			t.Errorf("%s %s: status %d (%s), want %d", r.p, r.body, status, msg, r.status)
		}
		up.mu.Lock()
		reached := len(up.seen) > n
		up.mu.Unlock()
		if reached != (r.status == 200) {
			t.Errorf("%s %s: upstream reached %v", r.p, r.body, reached)
		}
	}
}

// TestRedTeamGatewayMarksLongPrompts: a call whose prompt holds more
// than 200K tokens bills at the long-context rates (twice the input,
// 1.5 times the output) for models that have them; the meter priced it
// at the base rates. Its tokens are now kept under the model's name
// marked LongPrompt, which internal/agent/clis prices at those rates;
// an advisor's iteration over a long context is marked on its own.
func TestRedTeamGatewayMarksLongPrompts(t *testing.T) {
	t.Parallel()
	g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"claude-sonnet-5-5","usage":{"input_tokens":1000,"cache_read_input_tokens":250000,"output_tokens":7,`+
			`"iterations":[{"type":"advisor_message","model":"claude-mythos-5","input_tokens":300000,"output_tokens":2},`+
			`{"type":"advisor_message","model":"claude-fable-5","input_tokens":30,"output_tokens":2}]}}`)
	}), nil)
	resp := postMessages(t, c)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stop()
	want := map[string]usage.Usage{
		"claude-sonnet-5-5" + LongPrompt: {InputTokens: 251000, OutputTokens: 7, CacheReadTokens: 250000},
		"claude-mythos-5" + LongPrompt:   {InputTokens: 300000, OutputTokens: 2},
		"claude-fable-5":                 {InputTokens: 30, OutputTokens: 2},
	}
	got := g.Meter.Totals()
	if len(got) != len(want) {
		t.Fatalf("metered %+v, want %+v", got, want)
	}
	for m, w := range want {
		if got[m] != w {
			t.Errorf("%q: metered %+v, want %+v", m, got[m], w)
		}
	}
}

// TestRedTeamGatewayRefusesHostedContainers: code_interpreter is refused
// for the container OpenAI bills per session, but the same container
// came through the hosted shell: a shell tool whose environment is
// container_auto (kept off the network, so the exfiltration check passed
// it), a container of the key's by reference or by id, or an
// environment whose type is given twice, local first. Each is refused
// now and the upstream sees none; Codex's local shell, a shell with no
// environment, and a function tool whose parameters name an environment
// pass.
func TestRedTeamGatewayRefusesHostedContainers(t *testing.T) {
	t.Parallel()
	var rows []openAIRefusal
	for _, r := range []struct {
		tools  string
		status int
	}{
		{`[{"type":"shell","environment":{"type":"container_auto","network_policy":{"type":"disabled"}}}]`, 403},
		{`[{"type":"shell","environment":{"type":"container_reference","container_id":"cntr_1"}}]`, 403},
		{`[{"type":"shell","environment":"cntr_1"}]`, 403},
		{`[{"type":"shell","environment":{"type":"local","type":"container_auto"}}]`, 403},
		{`[{"type":"shell","\u0065nvironment":{"type":"Container_Auto"}}]`, 403},
		{`[{"type":"shell","environment":{}}]`, 403},
		{`[{"type":"shell","environment":{"type":"local"}}]`, 200},
		{`[{"type":"shell"}]`, 200},
		{`[{"type":"function","name":"run","parameters":{"type":"object","properties":{"environment":{"type":"string"}}}}]`, 200},
	} {
		rows = append(rows, openAIRefusal{`{"model":"m","input":"run this","tools":` + r.tools + `}`, r.status})
	}
	checkOpenAIRefusals(t, rows)
}

// TestRedTeamGatewayRefusesStoredPrompts: the program finds an OpenAI
// stored prompt's id in the repository it works on (an application
// that uses one names it in its code) and names it in its call: the
// prompt brings the tools it was saved with, a code interpreter, file
// search, live web search or an MCP server, none of which the body
// shows the gateway. A call naming a stored prompt, in any spelling, is
// refused now and the upstream sees none; a prompt in the input, or a
// member named so below the top level, passes.
func TestRedTeamGatewayRefusesStoredPrompts(t *testing.T) {
	t.Parallel()
	checkOpenAIRefusals(t, []openAIRefusal{
		{`{"model":"m","prompt":{"id":"pmpt_abc123","version":"2"},"input":"go"}`, 403},
		{`{"model":"m","\u0070rompt":{"id":"pmpt_abc123"},"input":"go"}`, 403},
		{`{"model":"m","Prompt":"pmpt_abc123","input":"go"}`, 403},
		{`{"model":"m","input":[{"role":"user","content":"prompt"}],"metadata":{"prompt":"x"}}`, 200},
	})
}

// openAIRefusal is a Responses call's body and the status the gateway
// answers it with (200: passed on).
type openAIRefusal struct {
	body   string
	status int
}

// checkOpenAIRefusals posts each row's body to an OpenAI gateway and
// checks its status, and that the upstream saw the call only when it
// was passed on.
func checkOpenAIRefusals(t *testing.T, rows []openAIRefusal) {
	t.Helper()
	up := &upstreamRecorder{}
	hs := httptest.NewServer(up)
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	client := serveGateway(t, &Gateway{Provider: ProviderOpenAI, Upstream: u, Key: "sk-real", Placeholder: "ph"})
	for _, r := range rows {
		up.mu.Lock()
		n := len(up.seen)
		up.mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/responses", strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer ph")
		if status, msg := statusOf(t, client, req); status != r.status {
			t.Errorf("%s: status %d (%s), want %d", r.body, status, msg, r.status)
		}
		up.mu.Lock()
		reached := len(up.seen) > n
		up.mu.Unlock()
		if reached != (r.status == 200) {
			t.Errorf("%s: upstream reached %v", r.body, reached)
		}
	}
}
