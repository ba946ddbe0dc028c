package egress

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRedTeamGatewayCapsOutputToTheBudget: with a few cents of the
// step's budget left, the program opens calls asking for the largest
// answers it may (max_tokens 128000, no OpenAI limit at all, a Gemini
// maxOutputTokens of a million, a limit given twice with the larger
// last, null, or an Anthropic thinking budget above the cap): each ran to
// its own limit, so the calls admitted when the budget ran out overran it
// by their whole outputs. Each call's limit now reaches the provider
// lowered to what Cap allows (100 here), inserted where the call set
// none, and the body stays JSON; a smaller limit passes as it was. A
// Gemini call asking for several candidates, each of which would run to
// the limit, is refused.
func TestRedTeamGatewayCapsOutputToTheBudget(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = b
		mu.Unlock()
		io.WriteString(w, `{}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	var asked []string
	for _, r := range []struct {
		name string
		p    Provider
		path string
		body string
		want string // the body the provider got, compacted
	}{
		{"anthropic max_tokens", ProviderAnthropic, "/v1/messages", `{"model":"claude-x","max_tokens":128000,"messages":[]}`,
			`{"model":"claude-x","max_tokens":100,"messages":[]}`},
		{"anthropic, smaller limit", ProviderAnthropic, "/v1/messages", `{"model":"claude-x","max_tokens":50,"messages":[]}`,
			`{"model":"claude-x","max_tokens":50,"messages":[]}`},
		{"anthropic, twice, thinking", ProviderAnthropic, "/v1/messages", `{"max_tokens" : 10 ,"model":"claude-x","max_tokens":128000,"thinking":{"type":"enabled","budget_tokens":64000},"messages":[]}`,
			`{"max_tokens":10,"model":"claude-x","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":99},"messages":[]}`},
		{"anthropic, none", ProviderAnthropic, "/v1/messages", `{"model":"claude-x","messages":[]}`,
			`{"max_tokens":100,"model":"claude-x","messages":[]}`},
		{"openai, none", ProviderOpenAI, "/responses", `{"model":"gpt-x","input":"write"}`,
			`{"max_output_tokens":100,"model":"gpt-x","input":"write"}`},
		{"openai null", ProviderOpenAI, "/responses", `{"model":"gpt-x","max_output_tokens":null}`,
			`{"model":"gpt-x","max_output_tokens":100}`},
		{"openai, empty", ProviderOpenAI, "/responses", `{ }`, `{"max_output_tokens":100}`},
		{"gemini, none", ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[]}`,
			`{"generationConfig":{"maxOutputTokens":100},"contents":[]}`},
		{"gemini, config without a limit", ProviderGemini, "/v1beta/models/gemini-x:streamGenerateContent", `{"contents":[],"generationConfig":{}}`,
			`{"contents":[],"generationConfig":{"maxOutputTokens":100}}`},
		{"gemini, config with one", ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[],"generationConfig":{"temperature":1,"maxOutputTokens":1000000}}`,
			`{"contents":[],"generationConfig":{"temperature":1,"maxOutputTokens":100}}`},
		// A limit of 0 (or -0) limits nothing a provider runs: Anthropic
		// and OpenAI refuse it, and Gemini's proto3 field may read it as
		// unset (the model's own limit) while the gateway bounded the
		// call by it.
		{"gemini, zero", ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[],"generationConfig":{"maxOutputTokens":0}}`,
			`{"contents":[],"generationConfig":{"maxOutputTokens":100}}`},
		{"gemini, minus zero", ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[],"generationConfig":{"maxOutputTokens":-0}}`,
			`{"contents":[],"generationConfig":{"maxOutputTokens":100}}`},
		{"openai, zero", ProviderOpenAI, "/responses", `{"model":"gpt-x","max_output_tokens":0}`,
			`{"model":"gpt-x","max_output_tokens":100}`},
		{"anthropic, zero, thinking", ProviderAnthropic, "/v1/messages", `{"model":"claude-x","max_tokens":0,"thinking":{"type":"enabled","budget_tokens":0},"messages":[]}`,
			`{"model":"claude-x","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":0},"messages":[]}`},
		{"gemini, a nested limit is no limit", ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[{"maxOutputTokens":5}]}`,
			`{"generationConfig":{"maxOutputTokens":100},"contents":[{"maxOutputTokens":5}]}`},
	} {
		g := &Gateway{Provider: r.p, Upstream: u, Key: "sk-real", Placeholder: "ph",
			Cap: func(model string) (int64, func()) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, model)
				return 100, nil
			}}
		c := serveGateway(t, g)
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+r.path, strings.NewReader(r.body))
		req.Header.Set("X-Api-Key", "ph")
		req.Header.Set("X-Goog-Api-Key", "ph")
		req.Header.Set("Authorization", "Bearer ph")
		if status, msg := statusOf(t, c, req); status != http.StatusOK {
			t.Fatalf("%s: status %d (%s)", r.name, status, msg)
		}
		mu.Lock()
		body := string(got)
		mu.Unlock()
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Errorf("%s: the provider got %q, not JSON: %v", r.name, body, err)
			continue
		}
		if strings.Join(strings.Fields(body), "") != r.want {
			t.Errorf("%s: the provider got %s, want %s", r.name, body, r.want)
		}
	}
	// While the budget buys more than any model's smallest limit, a call
	// that set none still gets one: the bound, or its model's own
	// maximum where that is lower (TestRedTeamGatewayInsertsTheModelsOwnLimit);
	// one it set is lowered.
	g := &Gateway{Provider: ProviderOpenAI, Upstream: u, Key: "sk-real", Placeholder: "ph", Cap: func(string) (int64, func()) { return 20000, nil }}
	oc := serveGateway(t, g)
	for body, want := range map[string]string{
		`{"model":"gpt-x","input":"write"}`:                            `{"max_output_tokens":20000,"model":"gpt-x","input":"write"}`,
		`{"model":"gpt-4o","input":"write"}`:                           `{"max_output_tokens":16384,"model":"gpt-4o","input":"write"}`,
		`{"model":"gpt-x","input":"write","max_output_tokens":128000}`: `{"model":"gpt-x","input":"write","max_output_tokens":20000}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/responses", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer ph")
		if status, msg := statusOf(t, oc, req); status != http.StatusOK {
			t.Fatalf("%s: status %d (%s)", body, status, msg)
		}
		mu.Lock()
		if string(got) != want {
			t.Errorf("with a bound of 20000, %s reached the provider as %s, want %s", body, got, want)
		}
		mu.Unlock()
	}
	// Several candidates would each run to the limit: refused.
	gem := serveGateway(t, &Gateway{Provider: ProviderGemini, Upstream: u, Key: "sk-real", Placeholder: "ph", Cap: func(string) (int64, func()) { return 100, nil }})
	for _, body := range []string{`{"contents":[],"generationConfig":{"candidateCount":8}}`, `{"contents":[],"generation_config":{"candidate_count":2.0}}`} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1beta/models/gemini-x:generateContent", strings.NewReader(body))
		req.Header.Set("X-Goog-Api-Key", "ph")
		if status, _ := statusOf(t, gem, req); status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", body, status)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(asked, ",") != "claude-x,claude-x,claude-x,claude-x,gpt-x,gpt-x,,gemini-x,gemini-x,gemini-x,gemini-x,gemini-x,gpt-x,claude-x,gemini-x" {
		t.Errorf("Cap was asked for the models %q, want each call's", asked)
	}
}

// TestRedTeamGatewayLimitSpellings: with a few cents of the budget left
// (a bound of 20,000 output tokens, above which the gateway once
// inserted no limit), the program spells its output limit so that the cap reads
// another than the provider: as a string (Google's JSON reader takes
// "1000000" for an int32, and a lax reader on Anthropic's side does
// too), which the cap passed untouched; an Anthropic thinking budget as
// a string; the model named twice, the cap pricing the first (cheap)
// and the provider running the last (dear); generationConfig given
// twice, its limit in the copy a provider drops; or as null, so an
// inserted limit lands beside a null copy. Each is now refused before
// it reaches the provider. Spellings the provider reads as the cap does
// (an escaped name, a float, a negative number) are lowered as before.
func TestRedTeamGatewayLimitSpellings(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		io.WriteString(w, `{}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	gateways := map[Provider]*http.Client{}
	for _, p := range []Provider{ProviderAnthropic, ProviderOpenAI, ProviderGemini} {
		gateways[p] = serveGateway(t, &Gateway{Provider: p, Upstream: u, Key: "sk-real", Placeholder: "ph",
			Cap: func(string) (int64, func()) { return 20000, nil }})
	}
	paths := map[Provider]string{ProviderAnthropic: "/v1/messages", ProviderOpenAI: "/responses",
		ProviderGemini: "/v1beta/models/gemini-x:generateContent"}
	send := func(p Provider, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+paths[p], strings.NewReader(body))
		req.Header.Set("X-Api-Key", "ph")
		req.Header.Set("X-Goog-Api-Key", "ph")
		req.Header.Set("Authorization", "Bearer ph")
		return statusOf(t, gateways[p], req)
	}
	for _, c := range []struct {
		p    Provider
		body string
	}{
		{ProviderGemini, `{"contents":[],"generationConfig":{"maxOutputTokens":"1000000"}}`},
		{ProviderGemini, `{"contents":[],"generation_config":{"max_output_tokens":"1000000"}}`},
		{ProviderAnthropic, `{"model":"claude-x","max_tokens":"128000","messages":[]}`},
		{ProviderAnthropic, `{"model":"claude-x","max_tokens":true,"messages":[]}`},
		{ProviderAnthropic, `{"model":"claude-x","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":"64000"},"messages":[]}`},
		{ProviderOpenAI, `{"model":"gpt-x","max_output_tokens":"128000"}`},
		{ProviderOpenAI, `{"model":"gpt-x","max_output_tokens":{"value":128000}}`},
		{ProviderOpenAI, `{"model":"gpt-cheap","input":"write","model":"gpt-dear","max_output_tokens":128000}`},
		{ProviderAnthropic, `{"model":"claude-dear","\u006dodel":"claude-cheap","max_tokens":128000,"messages":[]}`},
		{ProviderGemini, `{"contents":[],"generationConfig":{"maxOutputTokens":5},"generation_config":{"temperature":1}}`},
		{ProviderGemini, `{"contents":[],"generationConfig":null}`},
	} {
		if status, msg := send(c.p, c.body); status != http.StatusForbidden || !strings.Contains(msg, "usage the gateway cannot meter") {
			t.Errorf("%s %s: status %d (%s), want 403", c.p, c.body, status, msg)
		}
	}
	mu.Lock()
	if len(got) != 0 {
		t.Errorf("refused calls reached the provider: %q", got)
	}
	got = nil
	mu.Unlock()
	for _, c := range []struct {
		p          Provider
		body, want string
	}{
		{ProviderAnthropic, `{"model":"claude-x","\u006dax_tokens":128000,"messages":[]}`, `{"model":"claude-x","\u006dax_tokens":20000,"messages":[]}`},
		{ProviderAnthropic, `{"model":"claude-x","max_tokens":1e9,"messages":[]}`, `{"model":"claude-x","max_tokens":20000,"messages":[]}`},
		{ProviderOpenAI, `{"model":"gpt-x","max_output_tokens":128000.0}`, `{"model":"gpt-x","max_output_tokens":20000}`},
		{ProviderOpenAI, `{"model":"gpt-x","max_output_tokens":-1}`, `{"model":"gpt-x","max_output_tokens":20000}`},
		{ProviderGemini, `{"contents":[],"generationConfig":{"maxOutputTokens":1E6}}`, `{"contents":[],"generationConfig":{"maxOutputTokens":20000}}`},
	} {
		if status, msg := send(c.p, c.body); status != http.StatusOK {
			t.Errorf("%s %s: status %d (%s), want 200", c.p, c.body, status, msg)
			continue
		}
		mu.Lock()
		if last := got[len(got)-1]; last != c.want {
			t.Errorf("%s %s reached the provider as %s, want %s", c.p, c.body, last, c.want)
		}
		mu.Unlock()
	}
}

// TestGatewayReleasesTheBoundAfterMetering: the part of the budget a
// call's bound holds is given back once, after the call's answer is
// metered (released earlier, a call starting then would be bounded by
// a remainder that counted neither), and also for a call refused after
// its bound was taken (no placeholder).
func TestGatewayReleasesTheBoundAfterMetering(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"claude-sonnet-5-5","content":[],"usage":{"input_tokens":7,"output_tokens":9}}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{}}
	var mu sync.Mutex
	var released []int64 // the output tokens metered when each bound was given back
	g.Cap = func(string) (int64, func()) {
		return 100, func() {
			mu.Lock()
			defer mu.Unlock()
			var out int64
			for _, u := range g.Meter.Totals() {
				out += u.OutputTokens
			}
			released = append(released, out)
		}
	}
	c := serveGateway(t, g)
	for _, key := range []string{"ph", "not-the-placeholder"} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(meterCallBody))
		req.Header.Set("X-Api-Key", key)
		statusOf(t, c, req)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(released, []int64{9, 9}) {
		t.Errorf("bounds given back with %v output tokens metered, want [9 9]: once a call, after its answer was metered", released)
	}
}

// TestRedTeamGatewayStepEndMetersTheBound: the program sends calls
// asking for long answers without streaming and exits before they are
// answered, ending its step: the gateway cut them and counted only
// their requests' bytes (no output), while the provider, which need not
// stop when the connection goes, may bill each to its output limit. The
// next step was then told the budget had all of it left. A call the
// step's end cuts is now counted at the output limit it reached the
// provider with (its own when within the bound, else the bound).
func TestRedTeamGatewayStepEndMetersTheBound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, body string
		want       int64
	}{
		{"a limit above the bound", `{"model":"claude-mythos-5","max_tokens":128000,"messages":[{"role":"user","content":"think"}]}`, 5000},
		{"a limit within it", `{"model":"claude-mythos-5","max_tokens":300,"messages":[{"role":"user","content":"think"}]}`, 300},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reached := make(chan struct{}, 1)
			hold := make(chan struct{})
			defer close(hold)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				reached <- struct{}{}
				select { // a long answer, still being written when the step ends
				case <-hold:
				case <-r.Context().Done():
				}
			}))
			defer hs.Close()
			u, _ := url.Parse(hs.URL)
			g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
				Cap: func(string) (int64, func()) { return 5000, nil }}
			cl, stop := ServeGatewayForTest(t, g)
			go func() {
				req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(c.body))
				req.Header.Set("X-Api-Key", "ph")
				if resp, err := cl.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			<-reached
			stop() // the program exits: its step ends
			if got := g.Meter.Totals()["claude-mythos-5"]; got.OutputTokens < c.want || got.InputTokens == 0 {
				t.Errorf("a call cut by the step's end metered %+v, want at least %d output tokens and its request", got, c.want)
			}
		})
	}
	// What holds: a call answered in full before the step ends counts
	// what its answer says, not its bound.
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"claude-mythos-5","content":[],"usage":{"input_tokens":7,"output_tokens":9}}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
		Cap: func(string) (int64, func()) { return 5000, nil }}
	cl, stop := ServeGatewayForTest(t, g)
	req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(meterCallBody))
	req.Header.Set("X-Api-Key", "ph")
	statusOf(t, cl, req)
	stop()
	if got := g.Meter.Totals()["claude-mythos-5"]; got.OutputTokens != 9 {
		t.Errorf("a whole answer metered %+v, want its 9 output tokens", got)
	}
}

// TestRedTeamGatewayHangUpPastOrphansMetersTheBound: a program that has
// kept the gateway's places for orphaned calls full (maxOrphans calls it
// hung up on while their answers ran) hangs up on one more billed call
// before its answer begins. The gateway cannot read that one on and
// cuts it; the provider need not stop. It was counted at its request's
// bytes and no output, the step's end alone counting the bound; a call
// the gateway cut before its usage was read now counts the output limit
// it reached the provider with, whatever cut it.
func TestRedTeamGatewayHangUpPastOrphansMetersTheBound(t *testing.T) {
	t.Parallel()
	reached := make(chan struct{}, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		reached <- struct{}{}
		<-r.Context().Done() // a long answer, not begun when the caller goes
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
		Cap: func(string) (int64, func()) { return 5000, nil }}
	g.init()
	for range maxOrphans { // the orphans the program left running
		g.orphans <- struct{}{}
	}
	cl, stop := ServeGatewayForTest(t, g)
	defer stop()
	ctx, hangUp := context.WithCancel(t.Context())
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://gateway/v1/messages",
			strings.NewReader(`{"model":"claude-mythos-5","max_tokens":128000,"messages":[{"role":"user","content":"think"}]}`))
		req.Header.Set("X-Api-Key", "ph")
		if resp, err := cl.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-reached
	hangUp()
	deadline := time.Now().Add(10 * time.Second)
	for len(g.Meter.Totals()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := g.Meter.Totals()["claude-mythos-5"]; got.OutputTokens < 5000 || got.InputTokens == 0 {
		t.Errorf("a call cut at its caller's hang-up metered %+v, want at least its bound of 5000 output tokens and its request", got)
	}
}
