package egress

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// toHost sends every request to one test server, whatever host its URL
// names, so the gateway may be pointed at a provider's own API host.
type toHost struct{ host string }

func (t toHost) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = "http", t.host
	return http.DefaultTransport.RoundTrip(r)
}

// TestRedTeamGatewayPinsTheTierOfTheFirstCall: the key's project (or
// organisation) runs calls at priority by default, billed about twice the
// list price, and the program sends a step's first calls asking for no
// tier, or "auto", or null. No answer of the step has named a tier yet,
// so the gateway set each call's output bound at the list price, and the
// provider ran them at priority: the calls running when the budget ran
// out wrote up to twice what it set aside. A bounded call to the
// provider's own API now goes out in the list price's tier (OpenAI's
// "default", Anthropic's "standard_only"), a tier the call chose itself
// kept; a server behind another base URL gets the body as it was.
func TestRedTeamGatewayPinsTheTierOfTheFirstCall(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name     string
		p        Provider
		upstream string
		body     string
		want     []string // the service tiers the provider got
	}{
		{"openai, none", ProviderOpenAI, "https://api.openai.com/v1", `{"model":"gpt-5","input":"hi"}`, []string{"default"}},
		{"openai, auto", ProviderOpenAI, "https://API.openai.com/v1", `{"model":"gpt-5","service_tier" : "auto","input":"hi"}`, []string{"default"}},
		{"openai, null", ProviderOpenAI, "https://api.openai.com/v1", `{"model":"gpt-5","service_tier":null,"input":"hi"}`, []string{"default"}},
		{"openai, escaped auto given twice", ProviderOpenAI, "https://api.openai.com/v1", `{"model":"gpt-5","service_tier":"default","service_tier":"\u0061uto","input":"hi"}`, []string{"default", "default"}},
		{"openai, flex kept", ProviderOpenAI, "https://api.openai.com/v1", `{"model":"gpt-5","service_tier":"flex","input":"hi"}`, []string{"flex"}},
		{"anthropic, none", ProviderAnthropic, "https://api.anthropic.com", `{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[]}`, []string{"standard_only"}},
		{"anthropic, auto", ProviderAnthropic, "https://api.anthropic.com", `{"model":"claude-sonnet-5-5","max_tokens":10,"service_tier":"auto","messages":[]}`, []string{"standard_only"}},
		{"anthropic, another tier", ProviderAnthropic, "https://api.anthropic.com", `{"model":"claude-sonnet-5-5","max_tokens":10,"service_tier":"priority","messages":[]}`, []string{"standard_only"}},
		{"anthropic, standard_only kept", ProviderAnthropic, "https://api.anthropic.com", `{"model":"claude-sonnet-5-5","max_tokens":10,"service_tier":"standard_only","messages":[]}`, []string{"standard_only"}},
		{"openai, the host's absolute form", ProviderOpenAI, "https://api.openai.com.:443/v1", `{"model":"gpt-5","input":"hi"}`, []string{"default"}},
		{"anthropic, the host's absolute form", ProviderAnthropic, "https://API.anthropic.com./", `{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[]}`, []string{"standard_only"}},
		{"another base URL", ProviderOpenAI, "https://llm.internal.test/v1", `{"model":"gpt-5","input":"hi"}`, nil},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []string
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				b, _ := io.ReadAll(req.Body)
				tiers := serviceTiers(b)
				mu.Lock()
				got = tiers
				mu.Unlock()
				ran := "default"
				if len(tiers) == 0 || tiers[len(tiers)-1] == "auto" {
					ran = "priority" // the project's default
				}
				w.Header().Set("Content-Type", "application/json")
				if r.p == ProviderAnthropic {
					if ran == "default" {
						ran = "standard"
					}
					fmt.Fprintf(w, `{"model":"claude-sonnet-5-5","usage":{"input_tokens":5,"output_tokens":10,"service_tier":%q}}`, ran)
					return
				}
				fmt.Fprintf(w, `{"model":"gpt-5","service_tier":%q,"usage":{"input_tokens":5,"output_tokens":10}}`, ran)
			}))
			defer hs.Close()
			u, _ := url.Parse(r.upstream)
			hu, _ := url.Parse(hs.URL)
			m := &Meter{}
			g := &Gateway{Provider: r.p, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: m,
				Transport: toHost{hu.Host}, Cap: func(string) (int64, func()) { return 100000, nil }}
			c, stop := ServeGatewayForTest(t, g)
			path := "/v1/responses"
			if r.p == ProviderAnthropic {
				path = "/v1/messages"
			}
			req, _ := http.NewRequest(http.MethodPost, "http://gateway"+path, strings.NewReader(r.body))
			req.Header.Set("X-Api-Key", "ph")
			req.Header.Set("Authorization", "Bearer ph")
			status, msg := statusOf(t, c, req)
			stop()
			mu.Lock()
			defer mu.Unlock()
			if status != http.StatusOK || strings.Join(got, ",") != strings.Join(r.want, ",") {
				t.Fatalf("status %d (%s), the provider got the tiers %q, want %q", status, msg, got, r.want)
			}
			if r.want == nil {
				return
			}
			for name := range m.Totals() {
				if TierMarks(name) != "" {
					t.Errorf("the call ran in a premium tier: metered as %q", name)
				}
			}
		})
	}
}

// serviceTiers is every top-level service_tier of a JSON body, in order
// (null as "auto"), read as a provider's reader reads each.
func serviceTiers(b []byte) []string {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	var tiers []string
	dec.Token()
	for dec.More() {
		name, _ := dec.Token()
		var v any
		dec.Decode(&v)
		if name == "service_tier" {
			s, _ := v.(string)
			tiers = append(tiers, cmp.Or(s, "auto"))
		}
	}
	return tiers
}
