package egress

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestRedTeamOutputBoundAtTheLongPromptRate: with the budget nearly
// spent, the program sends a prompt of over 200K tokens, whose output the
// provider bills at 1.5 times the list price. The gateway asked its Cap
// for the call's bound at the model's ordinary rate, so the calls running
// when the budget ran out wrote half again what it set aside. A body
// reckoned over 200K tokens (a token per three bytes), or one whose
// prompt the provider holds, is now bounded at the long-prompt rate: Cap
// is asked for the model marked LongPrompt, which the meter's prices
// know.
func TestRedTeamOutputBoundAtTheLongPromptRate(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, body, want string
	}{
		{"long", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("x", 3*LongPromptTokens+30) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"stored", `{"model":"gpt-5","previous_response_id":"resp_1","input":"again"}`, "gpt-5" + LongPrompt},
		{"short", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"hi"}]}`, "claude-sonnet-5-5"},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			p, path := ProviderAnthropic, "/v1/messages"
			if strings.Contains(r.body, "gpt-5") {
				p, path = ProviderOpenAI, "/responses"
			}
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				io.Copy(io.Discard, req.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}`)
			}))
			defer hs.Close()
			u, _ := url.Parse(hs.URL)
			var mu sync.Mutex
			var asked []string
			g := &Gateway{Provider: p, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
				Cap: func(model string) (int64, func()) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, model)
					return 100000, nil
				}}
			c, stop := ServeGatewayForTest(t, g)
			req, _ := http.NewRequest(http.MethodPost, "http://gateway"+path, strings.NewReader(r.body))
			req.Header.Set("X-Api-Key", "ph")
			req.Header.Set("Authorization", "Bearer ph")
			status, msg := statusOf(t, c, req)
			stop()
			mu.Lock()
			defer mu.Unlock()
			if status != http.StatusOK || len(asked) == 0 || asked[0] != r.want {
				t.Errorf("status %d (%s), Cap asked for %q, want %q first", status, msg, asked, r.want)
			}
		})
	}
}
