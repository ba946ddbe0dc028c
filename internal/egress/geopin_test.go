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
		{"after an answer of a model without regions", "https://api.anthropic.com", first, "not_available", first, "claude-sonnet-5-5"},
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
