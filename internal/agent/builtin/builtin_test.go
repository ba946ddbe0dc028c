package builtin

import (
	"context"
	"errors"
	"net/http"
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

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(10 * time.Second).Format(http.TimeFormat)}}, 10 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{nil, 0},
	}
	for _, c := range cases {
		if got := ParseRetryAfter(c.h, now); got != c.want {
			t.Errorf("%v: %v, want %v", c.h, got, c.want)
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
	cut := Response{Stop: StopMaxTokens, Text: "partial", Usage: TokenUsage{10, 100}}
	p := &scripted{resps: []Response{cut, cut}}
	a := New(p, Options{Name: "fake", MaxTurns: 2, MaxOutputTokens: 100, Price: &Price{1, 1}})
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
