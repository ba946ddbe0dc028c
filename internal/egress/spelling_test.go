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

// TestRedTeamGatewayBoundMembersSpelledOtherwise: behind --base-url, an
// OpenAI-compatible server that ignores members it does not know (a
// router billed per token) reads only the exact names. The program sends
// its output limit, tool-call limit or Gemini generationConfig spelled
// otherwise ("Max_Output_Tokens", "MAX_TOOL_CALLS", "GenerationConfig"):
// the gateway, reading names in any case and without underscores, took
// the member for the limit, lowered it and inserted none, so the server
// saw no limit at all and the call was billed up to its model's maximum
// output. Such a member is now refused (403): the providers' own APIs
// refuse it too (an unknown member), so no call of theirs is lost.
// Gemini's own two spellings (lowerCamel and snake_case) pass.
func TestRedTeamGatewayBoundMembersSpelledOtherwise(t *testing.T) {
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
	paths := map[Provider]string{ProviderAnthropic: "/v1/messages", ProviderOpenAI: "/responses",
		ProviderGemini: "/v1beta/models/gemini-x:generateContent"}
	for _, c := range []struct {
		p      Provider
		body   string
		refuse bool
	}{
		{ProviderOpenAI, `{"model":"gpt-x","Max_Output_Tokens":5,"input":"hi"}`, true},
		{ProviderOpenAI, `{"model":"gpt-x","maxOutputTokens":5,"input":"hi"}`, true},
		{ProviderOpenAI, `{"model":"gpt-x","max_output_tokens":5,"MAX_TOOL_CALLS":1,"tools":[{"type":"web_search","external_web_access":false}],"input":"hi"}`, true},
		{ProviderOpenAI, `{"model":"gpt-x","Service_Tier":"default","input":"hi"}`, true},
		{ProviderAnthropic, `{"model":"claude-x","Max_Tokens":5,"max_tokens":5,"messages":[]}`, true},
		{ProviderAnthropic, `{"model":"claude-x","max_tokens":5,"tools":[{"type":"web_search_20250305","name":"s","MaxUses":1}],"messages":[]}`, true},
		{ProviderAnthropic, `{"model":"claude-x","max_tokens":5,"thinking":{"type":"enabled","Budget_Tokens":4}, "messages":[]}`, true},
		{ProviderGemini, `{"contents":[],"GenerationConfig":{"maxOutputTokens":5}}`, true},
		{ProviderGemini, `{"contents":[],"generationConfig":{"MaxOutputTokens":5}}`, true},
		// The spellings the providers read pass, and names elsewhere (a
		// tool's schema) are the program's own.
		{ProviderGemini, `{"contents":[],"generation_config":{"max_output_tokens":5}}`, false},
		{ProviderGemini, `{"contents":[],"generationConfig":{"maxOutputTokens":5,"candidate_count":1}}`, false},
		{ProviderAnthropic, `{"model":"claude-x","max_tokens":5,"tools":[{"name":"f","input_schema":{"type":"object","properties":{"Max_Tokens":{},"Model":{}}}}],"messages":[]}`, false},
	} {
		g := &Gateway{Provider: c.p, Upstream: u, Key: "sk-real", Placeholder: "ph",
			Cap: func(string) (int64, func()) { return 20000, nil }}
		client, stop := ServeGatewayForTest(t, g)
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+paths[c.p], strings.NewReader(c.body))
		req.Header.Set("X-Api-Key", "ph")
		req.Header.Set("X-Goog-Api-Key", "ph")
		req.Header.Set("Authorization", "Bearer ph")
		status, msg := statusOf(t, client, req)
		stop()
		mu.Lock()
		sent := len(got)
		got = nil
		mu.Unlock()
		if c.refuse && (status != http.StatusForbidden || sent != 0) {
			t.Errorf("%s %s: status %d (%s), %d sent; want 403 and nothing sent", c.p, c.body, status, msg, sent)
		}
		if !c.refuse && (status != http.StatusOK || sent != 1) {
			t.Errorf("%s %s: status %d (%s), want it passed", c.p, c.body, status, msg)
		}
	}
}

// TestRedTeamGatewayGeminiModelTwice: a Gemini call names its model in
// the path, which the gateway prices the call's bound at; the program
// names another in the body's model member (a dear image model behind a
// cheap path). Where the provider's front end took the body's, the bound
// in the cheap model's tokens bought hundreds of times what the budget
// set aside. A body model other than the path's is refused (403); the
// same one, with or without "models/", passes.
func TestRedTeamGatewayGeminiModelTwice(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	for _, r := range []struct {
		body   string
		status int
	}{
		{`{"model":"models/gemini-3-pro-image","contents":[]}`, http.StatusForbidden},
		{`{"model":"gemini-3-pro-image","contents":[]}`, http.StatusForbidden},
		{`{"model":"models/gemini-flash-lite","contents":[]}`, http.StatusOK},
		{`{"model":"gemini-flash-lite","contents":[]}`, http.StatusOK},
		{`{"contents":[]}`, http.StatusOK},
	} {
		g := &Gateway{Provider: ProviderGemini, Upstream: u, Key: "sk-real", Placeholder: "ph",
			Cap: func(string) (int64, func()) { return 20000, nil }}
		client, stop := ServeGatewayForTest(t, g)
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1beta/models/gemini-flash-lite:generateContent", strings.NewReader(r.body))
		req.Header.Set("X-Goog-Api-Key", "ph")
		status, msg := statusOf(t, client, req)
		stop()
		if status != r.status {
			t.Errorf("%s: status %d (%s), want %d", r.body, status, msg, r.status)
		}
	}
}
