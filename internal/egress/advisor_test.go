package egress

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// advisorProvider answers Anthropic calls as the provider runs an
// advisor tool: the model consults the advisor as often as max_uses lets
// it (unbounded without one: 12 here), each consult reading the whole
// conversation (50,000 tokens) and writing up to the tool's max_tokens
// (the advisor model's 128,000 without one), all outside the call's own
// max_tokens; the answer lists each consult as an iteration. A max_uses
// or max_tokens below 1 is refused, as the provider does. got receives
// each body the provider saw.
func advisorProvider(got func([]byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got(b)
		var body struct {
			Model     string `json:"model"`
			MaxTokens int64  `json:"max_tokens"`
			Tools     []struct {
				Type      string `json:"type"`
				Model     string `json:"model"`
				MaxUses   *int64 `json:"max_uses"`
				MaxTokens *int64 `json:"max_tokens"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var iters []string
		for _, tool := range body.Tools {
			if !strings.HasPrefix(tool.Type, "advisor") {
				continue
			}
			uses, out := int64(12), int64(128000)
			if tool.MaxUses != nil {
				uses = *tool.MaxUses
			}
			if tool.MaxTokens != nil {
				out = *tool.MaxTokens
			}
			if uses < 1 || out < 1 {
				http.Error(w, `{"type":"error","error":{"type":"invalid_request_error"}}`, http.StatusBadRequest)
				return
			}
			for range uses {
				iters = append(iters, fmt.Sprintf(`{"type":"advisor_message","model":%q,"input_tokens":50000,"output_tokens":%d}`, tool.Model, out))
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"type":"message","model":%q,"content":[],"usage":{"input_tokens":50000,"output_tokens":%d,"iterations":[{"type":"message","input_tokens":50000,"output_tokens":%d}%s]}}`,
			body.Model, body.MaxTokens, body.MaxTokens, strings.Repeat(",", min(len(iters), 1))+strings.Join(iters, ","))
	})
}

// TestRedTeamGatewayBoundsAdvisorCalls: with the budget nearly spent
// (the gateway bounds each call's output to 2,000 tokens), the program
// gives its call Anthropic's advisor tool naming the dearest model, with
// no max_uses and no max_tokens (or large ones, or null): the gateway
// lowered the call's own max_tokens, but the advisor's consults run
// outside it, as many as the model asks for, each up to the advisor
// model's maximum output, so one call billed 12 consults of 128,000
// output tokens at the advisor's rate. Each advisor tool now reaches the
// provider held to one consult of at most the bound (inserted where the
// tool set none), and the call's bound counts it, so what the meter
// counts stays within it. A max_uses or max_tokens given as anything
// but a number or null is refused.
func TestRedTeamGatewayBoundsAdvisorCalls(t *testing.T) {
	t.Parallel()
	const bound = 2000
	var mu sync.Mutex
	var seen []byte
	hs := httptest.NewServer(advisorProvider(func(b []byte) { mu.Lock(); seen = b; mu.Unlock() }))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	const head = `{"model":"claude-sonnet-5-5","max_tokens":64000,"messages":[],"tools":[`
	for _, r := range []struct {
		name, tools string
		want        string // the tools the provider got, compacted ("": refused)
	}{
		{"no limits", `{"type":"advisor_20260301","name":"advisor","model":"claude-mythos-5"}`,
			`{"max_uses":1,"max_tokens":2000,"type":"advisor_20260301","name":"advisor","model":"claude-mythos-5"}`},
		{"large limits", `{"name":"advisor","max_uses":50,"model":"claude-mythos-5","max_tokens":128000,"type":"advisor_20260301"}`,
			`{"name":"advisor","max_uses":1,"model":"claude-mythos-5","max_tokens":2000,"type":"advisor_20260301"}`},
		{"null and twice", `{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":null,"max_uses":1,"max_tokens":1500,"max_tokens":null}`,
			`{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":1,"max_uses":1,"max_tokens":1500,"max_tokens":2000}`},
		{"beside another tool, type escaped", `{"type":"custom","name":"x","input_schema":{}},{"type":"\u0061dvisor_20260301","model":"claude-mythos-5","max_uses":1}`,
			`{"type":"custom","name":"x","input_schema":{}},{"max_tokens":2000,"type":"\u0061dvisor_20260301","model":"claude-mythos-5","max_uses":1}`},
		{"smaller limits pass", `{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":1,"max_tokens":1200}`,
			`{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":1,"max_tokens":1200}`},
		{"uses as a string", `{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":"50"}`, ""},
		{"tokens as an object", `{"type":"advisor_20260301","model":"claude-mythos-5","max_tokens":{"n":1}}`, ""},
		// The bound is priced at the advisor's model: a second one may be
		// the one the provider runs.
		{"model twice", `{"type":"advisor_20260301","model":"claude-haiku-4-5","\u006dodel":"claude-mythos-5"}`, ""},
	} {
		g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
			Cap: func(string) (int64, func()) { return bound, nil }}
		c, stop := ServeGatewayForTest(t, g)
		mu.Lock()
		seen = nil
		mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(head+r.tools+`]}`))
		req.Header.Set("X-Api-Key", "ph")
		status, msg := statusOf(t, c, req)
		stop()
		mu.Lock()
		body := string(seen)
		mu.Unlock()
		if r.want == "" {
			if status != http.StatusForbidden || body != "" {
				t.Errorf("%s: status %d (%s), the provider got %q; want 403 and nothing sent", r.name, status, msg, body)
			}
			continue
		}
		if status != http.StatusOK {
			t.Fatalf("%s: status %d (%s)", r.name, status, msg)
		}
		if want := strings.Replace(head, "64000", "2000", 1) + r.want + `]}`; strings.Join(strings.Fields(body), "") != want {
			t.Errorf("%s: the provider got\n%s\nwant\n%s", r.name, body, want)
		}
		var out int64
		for _, u := range g.Meter.Totals() {
			out += u.OutputTokens
		}
		// The call's own output and one advisor consult, each within the bound.
		if out > 2*bound {
			t.Errorf("%s: %d output tokens metered, past the call's bound of %d and one consult of %d", r.name, out, bound, bound)
		}
	}
}

// TestAdvisorBound: an advisor tool adds its consults to the most
// output a call may be billed for, which the gateway counts for a call
// it cuts.
func TestAdvisorBound(t *testing.T) {
	t.Parallel()
	sh := bodyShape{tools: []serverTool{{kind: toolAdvisor}, {kind: toolSearch}}}
	if got := sh.boundUnder(2000, 2000); got != 4000 {
		t.Errorf("bound with one advisor = %d, want 4000", got)
	}
	sh.limits = []span{{n: 500}}
	if got := sh.boundUnder(2000, 2000); got != 2500 {
		t.Errorf("bound with a limit of 500 and one advisor = %d, want 2500", got)
	}
}

// searchLoopProvider answers calls as a provider runs its web search
// tool within one call: the model searches as often as the call lets it
// (max_tool_calls for OpenAI, the search tool's max_uses for Anthropic;
// 40 without either), and samples again after each search, rereading
// the whole prompt (20,000 tokens here), each time billed as input.
func searchLoopProvider(p Provider, got func([]byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got(b)
		var body struct {
			Model        string `json:"model"`
			MaxToolCalls *int64 `json:"max_tool_calls"`
			Tools        []struct {
				Type    string `json:"type"`
				MaxUses *int64 `json:"max_uses"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		searches := int64(40)
		if p == ProviderOpenAI && body.MaxToolCalls != nil {
			searches = *body.MaxToolCalls
		}
		for _, tool := range body.Tools {
			if p == ProviderAnthropic && tool.MaxUses != nil {
				searches = *tool.MaxUses
			}
		}
		in := (searches + 1) * 20000
		w.Header().Set("Content-Type", "application/json")
		if p == ProviderOpenAI {
			fmt.Fprintf(w, `{"object":"response","model":%q,"output":[],"usage":{"input_tokens":%d,"output_tokens":10}}`, body.Model, in)
			return
		}
		fmt.Fprintf(w, `{"type":"message","model":%q,"content":[],"usage":{"input_tokens":%d,"output_tokens":10}}`, body.Model, in)
	})
}

// TestRedTeamGatewayBoundsSearchLoops: with the budget nearly spent, the
// program sends a long prompt with the provider's web search tool and
// asks the model to search again and again: each search has the model
// sample once more, rereading the whole prompt, billed as input each
// time, within the one call whose output the gateway bounds (an OpenAI
// call searched as often as the model liked, 41 times the prompt here).
// Under a budget an OpenAI call with tools now reaches the provider
// with max_tool_calls held to 8 (inserted where it set none), and an
// Anthropic web search tool with max_uses held to 8 (Claude Code's own),
// so a call bills at most nine readings of its prompt; a smaller value
// passes as it was, and one given as anything but a number or null is
// refused.
func TestRedTeamGatewayBoundsSearchLoops(t *testing.T) {
	t.Parallel()
	const most = (maxToolCalls + 1) * 20000
	for _, r := range []struct {
		p                Provider
		path, body, want string // want: the body the provider got, compacted ("": refused)
		input            int64  // the input tokens metered
	}{
		{ProviderOpenAI, "/responses", `{"model":"gpt-6.1-sol","input":"search forty times","tools":[{"type":"web_search","external_web_access":false}]}`,
			`{"max_tool_calls":8,"max_output_tokens":2000,"model":"gpt-6.1-sol","input":"searchfortytimes","tools":[{"type":"web_search","external_web_access":false}]}`, most},
		{ProviderOpenAI, "/responses", `{"model":"gpt-6.1-sol","max_tool_calls":null,"tools":[],"max_tool_calls":1000}`,
			`{"max_output_tokens":2000,"model":"gpt-6.1-sol","max_tool_calls":8,"tools":[],"max_tool_calls":8}`, most},
		{ProviderOpenAI, "/responses", `{"model":"gpt-6.1-sol","max_tool_calls":2,"tools":[]}`,
			`{"max_output_tokens":2000,"model":"gpt-6.1-sol","max_tool_calls":2,"tools":[]}`, 3 * 20000},
		{ProviderOpenAI, "/responses", `{"model":"gpt-6.1-sol","max_tool_calls":"1000","tools":[]}`, "", 0},
		{ProviderAnthropic, "/v1/messages", `{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[]}`,
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"max_uses":8,"type":"web_search_20250305","name":"web_search"}],"messages":[]}`, most},
		{ProviderAnthropic, "/v1/messages", `{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20260209","name":"web_search","max_uses":500}],"messages":[]}`,
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20260209","name":"web_search","max_uses":8}],"messages":[]}`, most},
		{ProviderAnthropic, "/v1/messages", `{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20260209","max_uses":[500]}],"messages":[]}`, "", 0},
	} {
		var mu sync.Mutex
		var seen []byte
		hs := httptest.NewServer(searchLoopProvider(r.p, func(b []byte) { mu.Lock(); seen = b; mu.Unlock() }))
		u, _ := url.Parse(hs.URL)
		g := &Gateway{Provider: r.p, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
			Cap: func(string) (int64, func()) { return 2000, nil }}
		c, stop := ServeGatewayForTest(t, g)
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+r.path, strings.NewReader(r.body))
		req.Header.Set("X-Api-Key", "ph")
		req.Header.Set("Authorization", "Bearer ph")
		status, msg := statusOf(t, c, req)
		stop()
		hs.Close()
		mu.Lock()
		body := strings.Join(strings.Fields(string(seen)), "")
		mu.Unlock()
		var in int64
		for _, u := range g.Meter.Totals() {
			in += u.InputTokens
		}
		switch {
		case r.want == "" && (status != http.StatusForbidden || body != ""):
			t.Errorf("%s: status %d (%s), the provider got %q; want 403 and nothing sent", r.body, status, msg, body)
		case r.want != "" && (status != http.StatusOK || body != r.want):
			t.Errorf("%s: status %d (%s), the provider got\n%s\nwant\n%s", r.body, status, msg, body, r.want)
		case in != r.input || in > most:
			t.Errorf("%s: %d input tokens metered, want %d (at most %d)", r.body, in, r.input, most)
		}
	}
}

// TestRedTeamGatewayAdvisorHeldAtItsOwnRate: the advisor's model bills
// five times the call's (Claude Mythos 5 beside Sonnet 5.5), so the
// call's bound in tokens, set aside at the call's model's rate, bought
// five times as much there. The gateway asks Cap for the advisor's model
// too: the consult is held to what the budget buys at that model's
// rate, its part set aside beside the call's and given back once the
// call is metered.
func TestRedTeamGatewayAdvisorHeldAtItsOwnRate(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []byte
	hs := httptest.NewServer(advisorProvider(func(b []byte) { mu.Lock(); seen = b; mu.Unlock() }))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	rates := map[string]int64{"claude-sonnet-5-5": 10, "claude-mythos-5": 50} // dollars a million output tokens
	var asked []string
	released := 0
	g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
		Cap: func(model string) (int64, func()) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, model)
			// A quarter of 8 cents left, at the model's rate.
			return 20000 / rates[model], func() { mu.Lock(); released++; mu.Unlock() }
		}}
	c, stop := ServeGatewayForTest(t, g)
	req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(
		`{"model":"claude-sonnet-5-5","max_tokens":64000,"messages":[],"tools":[{"type":"advisor_20260301","model":"claude-mythos-5"}]}`))
	req.Header.Set("X-Api-Key", "ph")
	if status, msg := statusOf(t, c, req); status != http.StatusOK {
		t.Fatalf("status %d (%s)", status, msg)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	want := `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[],"tools":[{"max_uses":1,"max_tokens":400,"type":"advisor_20260301","model":"claude-mythos-5"}]}`
	if string(seen) != want {
		t.Errorf("the provider got\n%s\nwant\n%s", seen, want)
	}
	if strings.Join(asked, ",") != "claude-sonnet-5-5,claude-mythos-5" || released != 2 {
		t.Errorf("Cap asked for %q and released %d times, want the call's model and the advisor's, each released", asked, released)
	}
	var cost int64
	for m, u := range g.Meter.Totals() {
		cost += u.OutputTokens * rates[m]
	}
	if cost > 2*20000 {
		t.Errorf("the call's output cost %d (millionths of a dollar a token), past the two quarters set aside (%d)", cost, 2*20000)
	}
}
