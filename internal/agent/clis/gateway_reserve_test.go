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

// heldStep is one step's gateway in front of a provider that bills each
// call's prompt (prompt tokens) and as many output tokens as the call
// allowed, the first held calls running until release.
type heldStep struct {
	a       *Agent
	meter   *egress.Meter
	front   *httptest.Server
	up      *httptest.Server
	mu      sync.Mutex
	reached int
	held    int
	release chan struct{}
}

const heldPrompt = 10

func newHeldStep(t *testing.T, id string, l agent.Limit, held int) *heldStep {
	s := &heldStep{a: &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}, meter: &egress.Meter{},
		held: held, release: make(chan struct{})}
	s.up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			MaxTokens int64 `json:"max_tokens"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reached++
		wait := s.reached <= s.held
		s.mu.Unlock()
		if wait {
			<-s.release
		}
		json.NewEncoder(w).Encode(map[string]any{"model": "claude-sonnet-5-5", "content": []any{},
			"usage": map[string]int64{"input_tokens": heldPrompt, "output_tokens": body.MaxTokens}})
	}))
	u, _ := url.Parse(s.up.URL)
	gw := &egress.Gateway{Provider: egress.ProviderAnthropic, Upstream: u, Key: "sk-real-key-0123", Placeholder: "ph",
		Meter: s.meter, Admit: s.a.admit(id, l, s.meter), Cap: s.a.outputCap(id, l, s.meter)}
	s.front = httptest.NewServer(gw)
	t.Cleanup(func() { s.front.Close(); s.up.Close() })
	return s
}

// call asks for the largest answer.
func (s *heldStep) call(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, s.front.URL+"/v1/messages",
		strings.NewReader(`{"model":"claude-sonnet-5-5","max_tokens":128000,"messages":[{"role":"user","content":"think long"}]}`))
	req.Header.Set("X-Api-Key", "ph")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("a call: %v", err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// hold starts the held calls and waits until the provider has them.
func (s *heldStep) hold(t *testing.T, wg *sync.WaitGroup) {
	for range s.held {
		wg.Go(func() { s.call(t) })
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		n := s.reached
		s.mu.Unlock()
		if n >= s.held || time.Now().After(deadline) {
			return
		}
	}
}

// TestRedTeamGatewayOutputCapsReserved: the contained program opens
// three calls asking for the largest answer and keeps them running (a
// long reasoning answer), then sends short calls one after another
// through the fourth place. Each bound was a quarter of what the meter
// had counted as left, blind to the calls still running: the short
// calls spent the whole budget while the three, bounded at a quarter
// each, added three quarters more once they ended. Each bound is now a
// quarter of what is left past the bounds of the calls under way, so
// all the calls together stay within the budget but for their prompts.
// With tasks running at once (--concurrency), the programs of two steps
// sharing the remainder each do so: each step's bounds were a part of
// the whole remainder, blind to the other's; they are now held together.
func TestRedTeamGatewayOutputCapsReserved(t *testing.T) {
	t.Parallel()
	const held, short = 3, 40
	for _, c := range []struct {
		name   string
		limit  agent.Limit
		steps  int
		shared bool
	}{
		{"a token budget", agent.Limit{Tokens: 100_000}, 1, false},
		{"a cost budget (Sonnet's $10 out)", agent.Limit{CostUSD: 1}, 1, false},
		{"two steps sharing a token budget", agent.Limit{Tokens: 100_000}, 2, true},
		{"two steps sharing a cost budget", agent.Limit{CostUSD: 1}, 2, true},
		// A step's own remainder may be below what the steps running
		// together have left (the session counted spending the shared
		// count did not): the step's own bound then binds, and it was
		// blind to the step's own calls under way.
		{"a step's own token limit below the shared remainder", agent.Limit{Tokens: 100_000}, 1, true},
		{"a step's own cost limit below the shared remainder", agent.Limit{CostUSD: 1}, 1, true},
	} {
		l := c.limit
		if c.shared {
			wide := l
			if c.steps == 1 {
				wide = agent.Limit{Tokens: 100 * l.Tokens, CostUSD: 100 * l.CostUSD}
			}
			l.Shared = agent.NewShared(wide)
		}
		var steps []*heldStep
		var wg sync.WaitGroup
		for i := range c.steps {
			s := newHeldStep(t, string(rune('A'+i)), l, held)
			s.hold(t, &wg)
			steps = append(steps, s)
		}
		for range short {
			for _, s := range steps {
				s.call(t)
			}
		}
		for _, s := range steps {
			close(s.release)
		}
		wg.Wait()
		var spent agent.Usage
		reached := 0
		for _, s := range steps {
			spent = spent.Add(s.a.metered(s.meter.Totals()))
			reached += s.reached
		}
		prompts := int64(reached * heldPrompt)
		switch {
		case c.limit.Tokens > 0 && spent.InputTokens+spent.OutputTokens > c.limit.Tokens+prompts:
			t.Errorf("%s: %d calls spent %d tokens, past the budget of %d and their prompts", c.name, reached, spent.InputTokens+spent.OutputTokens, c.limit.Tokens)
		case c.limit.CostUSD > 0 && spent.CostUSD > c.limit.CostUSD+float64(prompts)*3/1e6:
			t.Errorf("%s: %d calls spent $%.4f, past the budget of $%.2f and their prompts", c.name, reached, spent.CostUSD, c.limit.CostUSD)
		}
	}
}
