package clis

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/egress"
)

// TestRedTeamGatewayOutputCapsReserved: the contained program opens
// three calls asking for the largest answer and keeps them running (a
// long reasoning answer), then sends short calls one after another
// through the fourth place. Each bound was a quarter of what the meter
// had counted as left, blind to the calls still running: the short
// calls spent the whole budget while the three, bounded at a quarter
// each, added three quarters more once they ended. Each bound is now a
// quarter of what is left past the bounds of the calls under way, so
// all the calls together stay within the budget but for their prompts.
func TestRedTeamGatewayOutputCapsReserved(t *testing.T) {
	t.Parallel()
	const held, short, prompt = 3, 40, 10
	for _, c := range []struct {
		name  string
		limit agent.Limit
	}{
		{"a token budget", agent.Limit{Tokens: 100_000}},
		{"a cost budget (Sonnet's $10 out)", agent.Limit{CostUSD: 1}},
	} {
		a := &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}
		meter := &egress.Meter{}
		var mu sync.Mutex
		reached := 0
		release := make(chan struct{})
		// The provider bills each call's prompt and as many output
		// tokens as the call allowed; the first calls run until release.
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				MaxTokens int64 `json:"max_tokens"`
			}
			b, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(b, &body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			reached++
			wait := reached <= held
			mu.Unlock()
			if wait {
				<-release
			}
			json.NewEncoder(w).Encode(map[string]any{"model": "claude-sonnet-5-5", "content": []any{},
				"usage": map[string]int64{"input_tokens": prompt, "output_tokens": body.MaxTokens}})
		}))
		u, _ := url.Parse(up.URL)
		gw := &egress.Gateway{Provider: egress.ProviderAnthropic, Upstream: u, Key: "sk-real-key-0123", Placeholder: "ph",
			Meter: meter, Admit: a.admit("step", c.limit, meter), Cap: a.outputCap(c.limit, meter)}
		front := httptest.NewServer(gw)
		call := func() {
			req, _ := http.NewRequest(http.MethodPost, front.URL+"/v1/messages",
				strings.NewReader(`{"model":"claude-sonnet-5-5","max_tokens":128000,"messages":[{"role":"user","content":"think long"}]}`))
			req.Header.Set("X-Api-Key", "ph")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("%s: a call: %v", c.name, err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		var wg sync.WaitGroup
		for range held {
			wg.Go(call)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			n := reached
			mu.Unlock()
			if n >= held || time.Now().After(deadline) {
				break
			}
		}
		for range short {
			call()
		}
		close(release)
		wg.Wait()
		front.Close()
		up.Close()
		spent := a.metered(meter.Totals())
		prompts := int64(reached * prompt)
		switch {
		case c.limit.Tokens > 0 && spent.InputTokens+spent.OutputTokens > c.limit.Tokens+prompts:
			t.Errorf("%s: %d calls spent %d tokens, past the budget of %d and their prompts", c.name, reached, spent.InputTokens+spent.OutputTokens, c.limit.Tokens)
		case c.limit.CostUSD > 0 && spent.CostUSD > c.limit.CostUSD+float64(prompts)*3/1e6:
			t.Errorf("%s: %d calls spent $%.4f, past the budget of $%.2f and their prompts", c.name, reached, spent.CostUSD, c.limit.CostUSD)
		}
	}
}
