package egress

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestRedTeamGatewayCutStreamEchoesTheAskedTier: the key's project runs
// calls that ask for no tier at priority, and an earlier answer said so.
// The program then streams a call and has it cut after the first event:
// OpenAI's response.created carries the response as asked, its
// service_tier "auto" (the provider has not chosen yet), and the stream
// ends before response.completed names the tier the call ran in. The
// meter took the "auto" for a tier named and counted the cut call at the
// list price, half what it billed. "auto" (or an empty tier) names
// nothing, so such a call counts in the dearest tier seen; a stream
// whose last event names the default tier still counts at the list
// price.
func TestRedTeamGatewayCutStreamEchoesTheAskedTier(t *testing.T) {
	t.Parallel()
	created := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-5\",\"status\":\"in_progress\",\"service_tier\":\"%s\",\"usage\":null}}\n\n"
	for _, r := range []struct {
		name, asked string
		want        string // the name the cut call counts under
	}{
		{"auto", "auto", "gpt-5" + PriorityTier},
		{"auto, other case", "AUTO", "gpt-5" + PriorityTier},
		{"empty", "", "gpt-5" + PriorityTier},
		{"default asked", "default", "gpt-5"},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			answers := []struct{ typ, body string }{
				{"application/json", `{"model":"gpt-5","service_tier":"priority","usage":{"input_tokens":100,"output_tokens":7}}`},
				{"text/event-stream", strings.Replace(created, "%s", r.asked, 1)},
			}
			var mu sync.Mutex
			n := 0
			g, c, stop := meteredGateway(t, ProviderOpenAI, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				a := answers[n]
				n++
				mu.Unlock()
				w.Header().Set("Content-Type", a.typ)
				io.WriteString(w, a.body)
			}), nil)
			for range answers {
				req, _ := http.NewRequest(http.MethodPost, "http://gateway/responses", strings.NewReader(`{"model":"gpt-5","input":"hi","stream":true}`))
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
			cut := got[r.want]
			if r.want == "gpt-5"+PriorityTier {
				cut.InputTokens -= 100 // the first answer's
			}
			if cut.InputTokens <= 0 {
				t.Errorf("metered %v: want the cut call under %q", got, r.want)
			}
		})
	}
}
