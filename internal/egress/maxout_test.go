package egress

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// modelProvider answers model calls as a provider does with its
// models' own output maxima (most, by model): a limit above the model's
// is refused unbilled (400); a call without one runs, and bills, up to
// the model's maximum (the most a call without a limit may write, a
// reasoning model's hidden thinking first of all); else up to the limit.
func modelProvider(p Provider, most map[string]int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model  string `json:"model"`
			OpenAI *int64 `json:"max_output_tokens"`
			Gen    struct {
				Max *int64 `json:"maxOutputTokens"`
			} `json:"generationConfig"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		model, limit := body.Model, body.OpenAI
		if p == ProviderGemini {
			_, after, _ := strings.Cut(r.URL.Path, "/models/")
			model, _, _ = strings.Cut(after, ":")
			limit = body.Gen.Max
		}
		wrote := most[model]
		if limit != nil {
			if *limit > wrote {
				http.Error(w, fmt.Sprintf(`{"error":{"message":"the output limit %d is above %s's %d"}}`, *limit, model, wrote), http.StatusBadRequest)
				return
			}
			wrote = *limit
		}
		w.Header().Set("Content-Type", "application/json")
		if p == ProviderGemini {
			fmt.Fprintf(w, `{"candidates":[],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":%d},"modelVersion":%q}`, wrote, model)
			return
		}
		fmt.Fprintf(w, `{"object":"response","model":%q,"output":[],"usage":{"input_tokens":10,"output_tokens":%d}}`, model, wrote)
	})
}

// TestRedTeamGatewayInsertsTheModelsOwnLimit: the step's budget buys
// 20,000 output tokens a call, above the 8,192 the gateway used to
// insert at most, so a call that set no output limit went on without
// one, and the provider ran it to its model's own maximum: the program
// left the limit out of its calls (Codex and Gemini CLI set none
// themselves) and each was billed up to 128,000 tokens (GPT-6.1 Sol) or
// 65,536 (Gemini 3.8 Flash, thinking counted in), six times what the
// budget had set aside for it. The gateway now inserts the smaller of
// the bound and the model's own maximum (modelMaxOutput), so each call
// is billed within its bound and a model whose maximum is below the
// bound still runs (GPT-5 Chat's 16,384, Gemini 2.0 Flash's 8,192); a
// model no row knows gets the bound itself, which the provider runs
// within, or refuses unbilled where its model takes less.
func TestRedTeamGatewayInsertsTheModelsOwnLimit(t *testing.T) {
	t.Parallel()
	const bound = 20000
	most := map[string]int64{"gpt-6.1-sol": 128000, "gpt-5-chat-latest": 16384, "gpt-9-nova": 400000,
		"gemini-3.8-flash": 65536, "gemini-2.0-flash": 8192, "gemini-9-tiny": 4096}
	for _, r := range []struct {
		p      Provider
		path   string
		body   string
		status int
		billed int64 // the output tokens the meter counted
	}{
		{ProviderOpenAI, "/responses", `{"model":"gpt-6.1-sol","input":"think as long as you may"}`, http.StatusOK, bound},
		{ProviderOpenAI, "/responses", `{"model":"gpt-5-chat-latest","input":"write"}`, http.StatusOK, 16384},
		{ProviderOpenAI, "/responses", `{"model":"gpt-9-nova","input":"write"}`, http.StatusOK, bound},
		{ProviderGemini, "/v1beta/models/gemini-3.8-flash:streamGenerateContent", `{"contents":[]}`, http.StatusOK, bound},
		{ProviderGemini, "/v1beta/models/gemini-3.8-flash:generateContent", `{"contents":[],"generationConfig":{"temperature":1}}`, http.StatusOK, bound},
		{ProviderGemini, "/v1beta/models/gemini-2.0-flash:generateContent", `{"contents":[]}`, http.StatusOK, 8192},
		{ProviderGemini, "/v1beta/models/gemini-9-tiny:generateContent", `{"contents":[]}`, http.StatusBadRequest, 0},
	} {
		hs := httptest.NewServer(modelProvider(r.p, most))
		u, _ := url.Parse(hs.URL)
		released := 0
		g := &Gateway{Provider: r.p, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
			Cap: func(string) (int64, func()) { return bound, func() { released++ } }}
		c, stop := ServeGatewayForTest(t, g)
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+r.path, strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer ph")
		req.Header.Set("X-Goog-Api-Key", "ph")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		stop()
		hs.Close()
		var out int64
		for _, u := range g.Meter.Totals() {
			out += u.OutputTokens
		}
		if resp.StatusCode != r.status || out != r.billed {
			t.Errorf("%s %s: status %d, %d output tokens billed; want %d and %d (the bound is %d)", r.path, r.body, resp.StatusCode, out, r.status, r.billed, bound)
		}
		if out > bound {
			t.Errorf("%s %s: billed %d output tokens past the bound of %d", r.path, r.body, out, bound)
		}
		if released != 1 {
			t.Errorf("%s: the bound was released %d times, want once", r.path, released)
		}
	}
}

// TestModelMaxOutput: the table is read by the longest row beginning a
// name, in any case, with dots as dashes and a router's prefix dropped;
// a variant whose maximum is below its family's has its own row, and a
// name no row begins is unknown.
func TestModelMaxOutput(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]int64{
		"gpt-6.1-sol": 128000, "GPT-6.1-Sol": 128000, "openai/gpt-6.1-sol": 128000, "gpt-5-codex": 128000,
		"gpt-5-chat-latest": 16384, "gpt-5.1-chat-latest": 16384, "gpt-5-pro": 272000, "gpt-4o-mini": 16384,
		"o3-mini": 100000, "o1-mini": 65536, "gemini-3.8-flash": 65536, "gemini-3-pro-image-preview": 32768,
		"gemini-3-pro-preview": 65536, "gemini-2.0-flash-001": 8192, "claude-sonnet-4-5-20250929": 64000,
		"claude-opus-4-1": 32000, "gpt-6-luna": 128000, "gpt-5.6-terra": 128000, "gemini-3.5-flash-lite": 65536,
		"gemini-3.1-flash-lite-preview": 65536, "gemini-3-flash-preview": 65536, "gemini-3.1-pro-preview-customtools": 65536, "claude-sonnet-5.5": 128000, "gpt-9-nova": 0, "gemini-9-tiny": 0, "": 0,
	} {
		got, ok := modelMaxOutput(model)
		if got != want || ok != (want > 0) {
			t.Errorf("modelMaxOutput(%q) = %d, %v; want %d", model, got, ok, want)
		}
	}
	for _, r := range []struct {
		model        string
		limit, wants int64
	}{{"gpt-6.1-sol", 20000, 20000}, {"gpt-6.1-sol", 500000, 128000}, {"gpt-9-nova", 500000, 500000}, {"gemini-2.0-flash", 100, 100}} {
		if got := insertedLimit(r.model, r.limit); got != r.wants {
			t.Errorf("insertedLimit(%q, %d) = %d, want %d", r.model, r.limit, got, r.wants)
		}
	}
}
