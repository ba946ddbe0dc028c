package egress

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestRedTeamGatewayReckonsTheDefaultRegion: the key's Anthropic
// workspace keeps inference in one region by default
// (default_inference_geo "us", billed 1.1 times the list price), and the
// program sends a step's first calls naming no inference_geo (or null).
// No answer of the step has named a region yet, so the gateway asked
// Cap for the call's bound at the list price, and the provider ran the
// call in the region: the calls running when the budget ran out wrote a
// tenth more than it set aside. Pinning "global" is no way out (a
// workspace may forbid it, and models before Opus 4.6 refuse the member),
// so until an answer through the gateway names a region (any, global
// too), such a call is bounded at the regional price; one naming global
// itself, or a server behind another base URL, is not.
func TestRedTeamGatewayReckonsTheDefaultRegion(t *testing.T) {
	t.Parallel()
	const first = `{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[]}`
	for _, r := range []struct {
		name     string
		upstream string
		earlier  string // the body of a call answered before, if any
		answered string // the inference_geo the provider answers an unnamed call with
		body     string
		want     string // the model Cap is asked for the last call
	}{
		{"first call, none named", "https://api.anthropic.com", "", "us", first, "claude-sonnet-5-5" + RegionalInference},
		{"first call, null", "https://api.anthropic.com", "", "us", `{"model":"claude-sonnet-5-5","max_tokens":10,"inference_geo":null,"messages":[]}`, "claude-sonnet-5-5" + RegionalInference},
		{"global, then null", "https://api.anthropic.com", "", "us", `{"model":"claude-sonnet-5-5","max_tokens":10,"inference_geo":"global","inference_geo":null,"messages":[]}`, "claude-sonnet-5-5" + RegionalInference},
		{"first call, long prompt", "https://api.anthropic.com", "", "us", `{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0x"}}]}]}`, "claude-sonnet-5-5" + RegionalInference + LongPrompt},
		{"global named", "https://api.anthropic.com", "", "us", `{"model":"claude-sonnet-5-5","max_tokens":10,"inference_geo":"global","messages":[]}`, "claude-sonnet-5-5"},
		{"after an answer named global", "https://api.anthropic.com", first, "global", first, "claude-sonnet-5-5"},
		{"after an answer named the region", "https://api.anthropic.com", first, "us", first, "claude-sonnet-5-5"},
		// An answer to a call that named global says nothing of where
		// the calls naming none run.
		{"after a call naming global", "https://api.anthropic.com", `{"model":"claude-sonnet-5-5","max_tokens":10,"inference_geo":"global","messages":[]}`, "us", first, "claude-sonnet-5-5" + RegionalInference},
		// A model that runs in no region (one before Opus 4.6) answers
		// not_available: that says nothing of where a newer model's
		// calls naming none run under the workspace's default.
		{"after an answer of a model without regions", "https://api.anthropic.com", `{"model":"claude-haiku-4-5","max_tokens":10,"messages":[]}`, "not_available", first, "claude-sonnet-5-5" + RegionalInference},
		{"another base URL", "https://llm.internal.test", "", "us", first, "claude-sonnet-5-5"},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				b, _ := io.ReadAll(req.Body)
				geo := r.answered
				if strings.Contains(string(b), `"inference_geo":"global"`) {
					geo = "global"
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"model":"claude-sonnet-5-5","usage":{"input_tokens":5,"output_tokens":10,"inference_geo":%q}}`, geo)
			}))
			defer hs.Close()
			u, _ := url.Parse(r.upstream)
			hu, _ := url.Parse(hs.URL)
			var mu sync.Mutex
			var asked []string
			g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
				Transport: toHost{hu.Host}, Cap: func(m string) (int64, func()) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, m)
					return 100000, nil
				}}
			c, stop := ServeGatewayForTest(t, g)
			defer stop()
			for _, body := range []string{r.earlier, r.body} {
				if body == "" {
					continue
				}
				req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(body))
				req.Header.Set("X-Api-Key", "ph")
				if status, msg := statusOf(t, c, req); status != http.StatusOK {
					t.Fatalf("status %d (%s)", status, msg)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) == 0 || asked[len(asked)-1] != r.want {
				t.Fatalf("Cap was asked for %q, want the last %q", asked, r.want)
			}
		})
	}
}

// TestRedTeamGatewayCutFirstCallAtTheDefaultRegion: under a regional
// default, the step's first call (naming no region) is cut before its
// answer names one, or answered without usage: counted at its floor, it
// was counted at the list price, where the provider billed it a tenth
// more. Until an answer names the region, such a call to the provider's
// own API is counted in one region.
func TestRedTeamGatewayCutFirstCallAtTheDefaultRegion(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, upstream, body string
		regional             bool
	}{
		{"the provider's API", "https://api.anthropic.com", `{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[]}`, true},
		{"global named", "https://api.anthropic.com", `{"model":"claude-sonnet-5-5","max_tokens":10,"inference_geo":"global","messages":[]}`, false},
		{"another base URL", "https://llm.internal.test", `{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[]}`, false},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				io.Copy(io.Discard, req.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"model":"claude-sonnet-5-5","content":[]}`)
			}))
			defer hs.Close()
			u, _ := url.Parse(r.upstream)
			hu, _ := url.Parse(hs.URL)
			m := &Meter{}
			g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: m, Transport: toHost{hu.Host}}
			c, stop := ServeGatewayForTest(t, g)
			req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(r.body))
			req.Header.Set("X-Api-Key", "ph")
			statusOf(t, c, req)
			stop()
			var names []string
			for name := range m.Totals() {
				names = append(names, name)
			}
			if len(names) != 1 || strings.HasSuffix(names[0], RegionalInference) != r.regional {
				t.Errorf("counted under %q, want one name, in one region: %v", names, r.regional)
			}
		})
	}
}

// TestRedTeamGatewayOpenAIRegionalEndpoint: the base URL names one of
// OpenAI's data residency endpoints (eu.api.openai.com and the like),
// which bill a tenth above the list price for the newer models and
// reach the same projects, their priority defaults included. The tier
// pin compared the host with api.openai.com alone, so the step's first
// calls went out asking no tier, and every call was bounded and metered
// at the list price. Such a host now gets the pin, and its calls are
// bounded and metered in one region (1.1 times).
func TestRedTeamGatewayOpenAIRegionalEndpoint(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		upstream string
		regional bool
	}{
		{"https://eu.api.openai.com/v1", true},
		{"https://JP.api.openai.com./v1", true},
		{"https://api.openai.com/v1", false},
	} {
		t.Run(r.upstream, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var tiers []string
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				b, _ := io.ReadAll(req.Body)
				mu.Lock()
				tiers = serviceTiers(b)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"model":"gpt-5","service_tier":"default","usage":{"input_tokens":5,"output_tokens":10}}`)
			}))
			defer hs.Close()
			u, _ := url.Parse(r.upstream)
			hu, _ := url.Parse(hs.URL)
			var asked []string
			m := &Meter{}
			g := &Gateway{Provider: ProviderOpenAI, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: m,
				Transport: toHost{hu.Host}, Cap: func(model string) (int64, func()) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, model)
					return 100000, nil
				}}
			c, stop := ServeGatewayForTest(t, g)
			req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/responses", strings.NewReader(`{"model":"gpt-5","input":"hi"}`))
			req.Header.Set("Authorization", "Bearer ph")
			if status, msg := statusOf(t, c, req); status != http.StatusOK {
				t.Fatalf("status %d (%s)", status, msg)
			}
			stop()
			mu.Lock()
			defer mu.Unlock()
			want := "gpt-5"
			if r.regional {
				want += RegionalInference
			}
			var names []string
			for name := range m.Totals() {
				names = append(names, name)
			}
			if strings.Join(tiers, ",") != "default" || len(asked) != 1 || asked[0] != want || len(names) != 1 || names[0] != want {
				t.Errorf("the provider got the tiers %q, Cap was asked for %q, the meter counted %q; want default, %q", tiers, asked, names, want)
			}
		})
	}
}
