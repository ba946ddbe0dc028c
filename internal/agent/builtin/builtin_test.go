package builtin

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// scripted is a Provider that replays canned responses.
type scripted struct {
	resps []Response
	errs  []error
	reqs  []Request
}

func (s *scripted) Send(ctx context.Context, req Request) (Response, error) {
	s.reqs = append(s.reqs, req)
	i := len(s.reqs) - 1
	if i < len(s.errs) && s.errs[i] != nil {
		return Response{}, s.errs[i]
	}
	return s.resps[i], nil
}

func TestLookupPrice(t *testing.T) {
	cases := []struct {
		model string
		in    float64
		ok    bool
	}{
		{"claude-sonnet-4-5-20250929", 3, true},
		{"anthropic/claude-sonnet-4.5", 3, true},
		{"claude-opus-4-1", 15, true},
		{"claude-opus-4-5", 5, true},
		{"claude-sonnet-5-5", 2, true},
		{"claude-opus-5-5", 4, true},
		{"claude-opus-5", 5, true},
		{agent.DefaultAnthropicModel, 2, true},
		{"gpt-4.1-mini", 0.4, true},
		{"openai/gpt-4o-mini", 0.15, true},
		{"o3-mini", 1.1, true},
		{"gemini-2.5-flash", 0.3, true},
		{"llama3.1:8b", 0, false},
	}
	for _, c := range cases {
		p, ok := LookupPrice(c.model)
		if ok != c.ok || p.InPerMTok != c.in {
			t.Errorf("%s: %+v %v", c.model, p, ok)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	cases := map[string]string{
		`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`: "invalid x-api-key",
		`{"error":{"message":"Incorrect API key"}}`:                                              "Incorrect API key",
		`[{"error":{"code":400,"message":"API key not valid"}}]`:                                 "API key not valid",
		`{"error":"model not found"}`:                                                            "model not found",
		`Bad Gateway`:                                                                            "Bad Gateway",
	}
	for body, want := range cases {
		if got := ErrorMessage(body); got != want {
			t.Errorf("%s: %q", body, got)
		}
	}
}

func TestLoopLimits(t *testing.T) {
	dir := t.TempDir()
	cut := Response{Stop: StopMaxTokens, Text: "partial", Usage: TokenUsage{InputTokens: 10, OutputTokens: 100}}
	p := &scripted{resps: []Response{cut, cut}}
	a := New(p, Options{Name: "fake", MaxTurns: 2, MaxOutputTokens: 100, Price: &Price{InPerMTok: 1, OutPerMTok: 1}})
	res, err := a.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "plan", Dir: dir, Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "fake agent: no result after 2 turns") {
		t.Fatalf("err %v", err)
	}
	if res.Usage.OutputTokens != 200 || res.Usage.CostUSD != 220/1e6 {
		t.Errorf("usage %+v", res.Usage)
	}
	if p.reqs[0].MaxOutputTokens != 100 {
		t.Errorf("max output tokens %d", p.reqs[0].MaxOutputTokens)
	}
	last := p.reqs[1].Messages[len(p.reqs[1].Messages)-1]
	if last.Role != RoleUser || !strings.Contains(last.Text, "output token limit") {
		t.Errorf("nudge %+v", last)
	}
}

func TestRetryLimits(t *testing.T) {
	dir := t.TempDir()
	busy := &APIError{Provider: "X", StatusCode: 503}
	p := &scripted{errs: []error{busy, busy, busy}}
	var waits []time.Duration
	a := New(p, Options{MaxRetries: 2, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	_, err := a.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "p", Dir: dir, Timeout: time.Minute})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !strings.Contains(err.Error(), "giving up after 2 retries") {
		t.Fatalf("err %v", err)
	}
	if len(waits) != 2 || waits[1] <= waits[0] {
		t.Errorf("backoff %v", waits)
	}
}

func TestTimeout(t *testing.T) {
	dir := t.TempDir()
	p := ProviderFunc(func(ctx context.Context, _ Request) (Response, error) {
		<-ctx.Done()
		return Response{}, ctx.Err()
	})
	a := New(p, Options{Name: "slow"})
	_, err := a.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "p", Dir: dir, Timeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "slow agent timed out after 50ms") {
		t.Fatalf("err %v", err)
	}
}

// TestCost: cache reads and writes are parts of the input, each priced at
// its own rate; a missing cache rate falls back to the input price.
func TestCost(t *testing.T) {
	sonnet := Price{InPerMTok: 3, OutPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75}
	const m = 1_000_000
	cases := []struct {
		name  string
		price Price
		u     TokenUsage
		want  float64
	}{
		{"uncached", sonnet, TokenUsage{InputTokens: m, OutputTokens: m}, 3 + 15},
		{"all cache reads", sonnet, TokenUsage{InputTokens: m, CacheReadTokens: m}, 0.3},
		{"mixed", sonnet, TokenUsage{InputTokens: 10 * m, CacheReadTokens: 8 * m, CacheWriteTokens: m, OutputTokens: m}, 3 + 8*0.3 + 3.75 + 15},
		{"cache write premium", sonnet, TokenUsage{InputTokens: m, CacheWriteTokens: m}, 3.75},
		{"no cache rates: input price", Price{InPerMTok: 2, OutPerMTok: 8}, TokenUsage{InputTokens: 2 * m, CacheReadTokens: m, CacheWriteTokens: m}, 4},
		{"cache counted outside input", sonnet, TokenUsage{InputTokens: 0, CacheReadTokens: m}, 0.3},
		{"user price, table ratios", UserPrice(10, 20, "claude-sonnet-4-5"), TokenUsage{InputTokens: 3 * m, CacheReadTokens: m, CacheWriteTokens: m}, 10 + 1 + 12.5},
		{"user price, unknown model", UserPrice(10, 20, "llama3.1:8b"), TokenUsage{InputTokens: 3 * m, CacheReadTokens: m, CacheWriteTokens: m}, 30},
		{"user price, OpenAI family", UserPrice(4, 16, "gpt-4.1"), TokenUsage{InputTokens: 2 * m, CacheReadTokens: m, CacheWriteTokens: 0}, 4 + 1},
	}
	for _, c := range cases {
		if got := c.price.Cost(c.u); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: Cost = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPriceTableCacheRates: every row's cache reads are cheaper than its
// input (or, with no rate, the input price) and its cache writes never cheaper, so no estimate drops below
// what the provider bills for an uncached prompt of the same size, and
// the Anthropic rows keep the published 0.1× and 1.25× (0.05× for Opus 5.5,
// and for Sonnet 5.5 since Anthropic cut its cache reads on 2026-10-07).
func TestPriceTableCacheRates(t *testing.T) {
	for _, e := range knownPrices() {
		p := e.price
		// 0 is the input price: a model with no cached rate (the
		// OpenAI pro models) bills cached input in full.
		if p.CacheReadPerMTok < 0 || p.CacheReadPerMTok != 0 && p.CacheReadPerMTok >= p.InPerMTok {
			t.Errorf("%s: cache read %v not below input %v", e.prefix, p.CacheReadPerMTok, p.InPerMTok)
		}
		if p.CacheWritePerMTok != 0 && p.CacheWritePerMTok < p.InPerMTok {
			t.Errorf("%s: cache write %v below input %v", e.prefix, p.CacheWritePerMTok, p.InPerMTok)
		}
	}
	for model, want := range map[string][2]float64{
		"claude-sonnet-4-5": {0.1, 1.25}, "claude-opus-4-1": {0.1, 1.25}, "claude-haiku-4-5": {0.1, 1.25},
		"claude-sonnet-5-5": {0.05, 1.25}, "claude-sonnet-5": {0.1, 1.25}, "claude-opus-5-5": {0.05, 1.25},
	} {
		p, _ := LookupPrice(model)
		if r, w := p.CacheReadPerMTok/p.InPerMTok, p.CacheWritePerMTok/p.InPerMTok; math.Abs(r-want[0]) > 1e-9 || math.Abs(w-want[1]) > 1e-9 {
			t.Errorf("%s: cache ratios %v, %v, want %v", model, r, w, want)
		}
	}
}
