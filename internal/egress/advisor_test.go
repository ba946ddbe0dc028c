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
		{"null and twice", `{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":null,"Max_Uses":1,"max_tokens":1500,"max_tokens":null}`,
			`{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":1,"Max_Uses":1,"max_tokens":1500,"max_tokens":2000}`},
		{"beside another tool, type escaped", `{"type":"custom","name":"x","input_schema":{}},{"type":"\u0061dvisor_20260301","model":"claude-mythos-5","max_uses":1}`,
			`{"type":"custom","name":"x","input_schema":{}},{"max_tokens":2000,"type":"\u0061dvisor_20260301","model":"claude-mythos-5","max_uses":1}`},
		{"smaller limits pass", `{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":1,"max_tokens":1200}`,
			`{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":1,"max_tokens":1200}`},
		{"uses as a string", `{"type":"advisor_20260301","model":"claude-mythos-5","max_uses":"50"}`, ""},
		{"tokens as an object", `{"type":"advisor_20260301","model":"claude-mythos-5","max_tokens":{"n":1}}`, ""},
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
	sh := bodyShape{advisors: []advisorTool{{advisor: true}}}
	if got := sh.boundUnder(2000, 2000); got != 4000 {
		t.Errorf("bound with one advisor = %d, want 4000", got)
	}
	sh.limits = []span{{n: 500}}
	if got := sh.boundUnder(2000, 2000); got != 2500 {
		t.Errorf("bound with a limit of 500 and one advisor = %d, want 2500", got)
	}
}
