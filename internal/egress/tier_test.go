package egress

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/usage"
)

// TestRedTeamGatewayMetersTheAnswersTier: the program's calls ask for no
// premium tier (OpenAI's service_tier left out or "auto", Anthropic's
// left out), which the gateway passes, but the key's project or
// organisation processes such calls at a premium by default (OpenAI's
// project default of priority, Anthropic's Priority Tier), and the
// answer says so in its service_tier. Such a call bills about twice the
// list price; the meter counted it at the list price. Its tokens are now
// kept apart, marked with the tier the answer names (PriorityTier, and
// PremiumTier for a tier the meter knows no price for or Anthropic's
// fast speed), in a JSON answer and a stream alike; a standard, default
// or flex answer is unmarked. So is a region an Anthropic workspace's
// default_inference_geo chose (RegionalInference, 1.1 times).
func TestRedTeamGatewayMetersTheAnswersTier(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name        string
		p           Provider
		contentType string
		answer      string
		want        string
	}{
		{"openai priority", ProviderOpenAI, "application/json",
			`{"model":"gpt-5","service_tier":"priority","usage":{"input_tokens":100,"output_tokens":7}}`, "gpt-5" + PriorityTier},
		{"openai priority, tier after usage", ProviderOpenAI, "application/json",
			`{"model":"gpt-5","usage":{"input_tokens":100,"output_tokens":7},"service_tier":"Priority"}`, "gpt-5" + PriorityTier},
		{"openai priority stream", ProviderOpenAI, "text/event-stream",
			"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt-5\",\"service_tier\":\"auto\"}}\n\n" +
				"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"model\":\"gpt-5\",\"service_tier\":\"priority\"," +
				"\"usage\":{\"input_tokens\":100,\"output_tokens\":7}}}\n\n", "gpt-5" + PriorityTier},
		{"openai scale", ProviderOpenAI, "application/json",
			`{"model":"gpt-5","service_tier":"scale","usage":{"input_tokens":100,"output_tokens":7}}`, "gpt-5" + PremiumTier},
		{"openai ultrafast", ProviderOpenAI, "application/json",
			`{"model":"gpt-5","service_tier":"ultrafast","usage":{"input_tokens":100,"output_tokens":7}}`, "gpt-5" + PremiumTier},
		{"openai default", ProviderOpenAI, "application/json",
			`{"model":"gpt-5","service_tier":"default","usage":{"input_tokens":100,"output_tokens":7}}`, "gpt-5"},
		{"openai flex", ProviderOpenAI, "application/json",
			`{"model":"gpt-5","service_tier":"flex","usage":{"input_tokens":100,"output_tokens":7}}`, "gpt-5"},
		{"openai tier in the model's text", ProviderOpenAI, "application/json",
			`{"model":"gpt-5","output":[{"type":"message","content":[{"type":"output_text","text":"{\"service_tier\":\"priority\"}"}]}],` +
				`"usage":{"input_tokens":100,"output_tokens":7}}`, "gpt-5"},
		{"anthropic priority", ProviderAnthropic, "application/json",
			`{"model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":7,"service_tier":"priority"}}`, "claude-sonnet-5-5" + PriorityTier},
		{"anthropic priority stream", ProviderAnthropic, "text/event-stream",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\"," +
				"\"usage\":{\"input_tokens\":100,\"output_tokens\":1,\"service_tier\":\"priority\"}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":7}}\n\n", "claude-sonnet-5-5" + PriorityTier},
		{"anthropic, a workspace's default region", ProviderAnthropic, "application/json",
			`{"model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":7,"inference_geo":"us"}}`, "claude-sonnet-5-5" + RegionalInference},
		{"anthropic, priority in a region", ProviderAnthropic, "application/json",
			`{"model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":7,"service_tier":"priority","inference_geo":"us"}}`,
			"claude-sonnet-5-5" + PriorityTier + RegionalInference},
		{"anthropic, fast", ProviderAnthropic, "application/json",
			`{"model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":7,"speed":"fast"}}`, "claude-sonnet-5-5" + PremiumTier},
		{"anthropic, global", ProviderAnthropic, "application/json",
			`{"model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":7,"inference_geo":"global","speed":"standard"}}`, "claude-sonnet-5-5"},
		{"anthropic standard", ProviderAnthropic, "application/json",
			`{"model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":7,"service_tier":"standard"}}`, "claude-sonnet-5-5"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			g, c, stop := meteredGateway(t, r.p, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", r.contentType)
				io.WriteString(w, r.answer)
			}), nil)
			path, body, auth := "/v1/messages", meterCallBody, "X-Api-Key"
			if r.p == ProviderOpenAI {
				path, body, auth = "/responses", `{"model":"gpt-5","service_tier":"auto","input":"hi"}`, "Authorization"
			}
			req, _ := http.NewRequest(http.MethodPost, "http://gateway"+path, strings.NewReader(body))
			req.Header.Set(auth, map[string]string{"X-Api-Key": "ph", "Authorization": "Bearer ph"}[auth])
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			stop()
			got := g.Meter.Totals()
			if len(got) != 1 || got[r.want] != (usage.Usage{InputTokens: 100, OutputTokens: 7}) {
				t.Errorf("metered %v, want 100 in and 7 out under %q", got, r.want)
			}
		})
	}
}

// TestRedTeamGatewayCutCallsAtTheTierSeen: with the key's project
// serving calls at priority by default, the program has one call
// answered (its answer names the priority tier), then sends calls whose
// answers name no tier: cut before the last event (the step's end, a
// hang-up), or without usage. Such a call was metered at the list price
// at its floor, half what the provider bills it at. A call whose answer
// named no tier now counts in the dearest tier and region an earlier
// answer through the gateway named; one that names its own tier keeps
// it.
func TestRedTeamGatewayCutCallsAtTheTierSeen(t *testing.T) {
	t.Parallel()
	answers := []string{
		`{"model":"gpt-5","service_tier":"priority","usage":{"input_tokens":100,"output_tokens":7}}`,
		`{"model":"gpt-5","output":[]}`, // no usage, no tier: at the floor
		`{"model":"gpt-5","service_tier":"default","usage":{"input_tokens":100,"output_tokens":7}}`,
	}
	var mu sync.Mutex
	n := 0
	g, c, stop := meteredGateway(t, ProviderOpenAI, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		a := answers[n]
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, a)
	}), nil)
	for range answers {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/responses", strings.NewReader(`{"model":"gpt-5","input":"hi"}`))
		req.Header.Set("Authorization", "Bearer ph")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	stop()
	got := g.Meter.Totals()
	if p := got["gpt-5"+PriorityTier]; p.InputTokens < 100+30 || len(got) != 2 || got["gpt-5"] != (usage.Usage{InputTokens: 100, OutputTokens: 7}) {
		t.Errorf("metered %v: want the untiered answer under %q with the first, the default one apart", got, "gpt-5"+PriorityTier)
	}
}
