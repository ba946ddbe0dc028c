package egress_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/usage"
)

// TestGatewayMetersWireFormats: a contained program calls the model
// gateway itself, past its CLI, in each provider's wire format, streamed
// and not, against the scripted servers the real CLIs are tested with.
// The gateway's meter counts each billed call's tokens as the provider's
// answer reports them, under the model the answer names; token counting
// calls are free and not counted.
func TestGatewayMetersWireFormats(t *testing.T) {
	t.Parallel()
	wire := agenttest.Usage{In: 1200, Out: 340, CacheRead: 200, CacheWrite: 100}
	answer := func(agenttest.Turn) agenttest.Action { return agenttest.Action{Text: "hello"} }
	cases := []struct {
		name   string
		p      egress.Provider
		server *agenttest.Server
		base   string
		paths  []string // each called once
		body   string
		model  string
		want   usage.Usage // per billed call
		billed int
	}{
		{"anthropic", egress.ProviderAnthropic, agenttest.Anthropic(t, wire, answer), "",
			[]string{"/v1/messages"}, `{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`,
			"claude-sonnet-5-5", usage.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 200, CacheWriteTokens: 100}, 1},
		{"anthropic streamed", egress.ProviderAnthropic, agenttest.Anthropic(t, wire, answer), "",
			[]string{"/v1/messages"}, `{"model":"claude-sonnet-5-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			"claude-sonnet-5-5", usage.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 200, CacheWriteTokens: 100}, 1},
		{"openai responses streamed", egress.ProviderOpenAI, agenttest.Responses(t, wire, answer), "/v1",
			[]string{"/v1/responses"}, `{"model":"gpt-6.1-sol","stream":true,"input":[{"role":"user","content":"hi"}]}`,
			"gpt-6.1-sol", usage.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 200}, 1},
		{"gemini", egress.ProviderGemini, agenttest.Gemini(t, wire, answer), "",
			[]string{"/v1beta/models/gemini-3.8-flash:generateContent", "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
				"/v1beta/models/gemini-3.8-flash:countTokens"},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			"gemini-3.8-flash", usage.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 200}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(c.server)
			t.Cleanup(hs.Close)
			up, _ := url.Parse(hs.URL + c.base)
			meter := &egress.Meter{}
			client, stop := egress.ServeGatewayForTest(t, &egress.Gateway{Provider: c.p, Upstream: up, Key: "sk-real", Placeholder: "ph", Meter: meter})
			for _, path := range c.paths {
				q := ""
				if strings.HasSuffix(path, ":streamGenerateContent") {
					q = "?alt=sse"
				}
				req, _ := http.NewRequest(http.MethodPost, "http://gateway"+path+q, strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer ph")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b := new(strings.Builder)
				_, _ = io.Copy(b, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: status %d: %s", path, resp.StatusCode, b)
				}
			}
			stop()
			got := meter.Totals()
			want := usage.Usage{InputTokens: c.want.InputTokens * int64(c.billed), OutputTokens: c.want.OutputTokens * int64(c.billed),
				CacheReadTokens: c.want.CacheReadTokens * int64(c.billed), CacheWriteTokens: c.want.CacheWriteTokens * int64(c.billed)}
			if len(got) != 1 || got[c.model] != want {
				t.Errorf("metered %+v, want %s: %+v", got, c.model, want)
			}
		})
	}
}
