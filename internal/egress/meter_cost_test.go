package egress

import (
	"io"
	"net/http"
	"testing"

	"github.com/planexhq/planex/internal/usage"
)

// TestRedTeamGatewayMetersHourCacheWrites: the program marks its prompt
// for Anthropic's one-hour cache (cache_control with "ttl": "1h"), whose
// writes bill twice the input price, against 1.25 times for the
// five-minute writes the meter priced every write at. The answer splits
// the writes in usage.cache_creation; each one-hour write now counts as
// 1.6 five-minute writes (2 / 1.25), in a JSON answer, a stream and an
// advisor's iteration alike. Before, 8,000 one-hour writes of 10,000
// counted as 10,000 five-minute writes: $0.025 at Sonnet 5.5's $2.50
// a million where the provider billed $0.037.
func TestRedTeamGatewayMetersHourCacheWrites(t *testing.T) {
	t.Parallel()
	const u = `"usage":{"input_tokens":5,"output_tokens":7,"cache_creation_input_tokens":10000,"cache_read_input_tokens":0,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":2000,"ephemeral_1h_input_tokens":8000}`
	answers := []struct {
		name, contentType, body string
		want                    map[string]usage.Usage
	}{
		{"JSON answer", "application/json", `{"model":"claude-sonnet-5-5",` + u + `}}`,
			map[string]usage.Usage{"claude-sonnet-5-5": {InputTokens: 14805, OutputTokens: 7, CacheWriteTokens: 14800}}},
		{"stream", "text/event-stream", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\"," + u +
			"}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\"," + u + "}}\n\n",
			map[string]usage.Usage{"claude-sonnet-5-5": {InputTokens: 14805, OutputTokens: 7, CacheWriteTokens: 14800}}},
		{"advisor iteration", "application/json", `{"model":"claude-sonnet-5-5","usage":{"input_tokens":5,"output_tokens":7,` +
			`"iterations":[{"type":"advisor_message","model":"claude-mythos-5","input_tokens":1,"output_tokens":2,` +
			`"cache_creation_input_tokens":1000,"cache_creation":{"ephemeral_1h_input_tokens":1000}}]}}`,
			map[string]usage.Usage{"claude-sonnet-5-5": {InputTokens: 5, OutputTokens: 7},
				"claude-mythos-5": {InputTokens: 1601, OutputTokens: 2, CacheWriteTokens: 1600}}},
	}
	for _, a := range answers {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", a.contentType)
				io.WriteString(w, a.body)
			}), nil)
			resp := postMessages(t, c)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			stop()
			got := g.Meter.Totals()
			if len(got) != len(a.want) {
				t.Fatalf("metered %+v, want %+v", got, a.want)
			}
			for m, w := range a.want {
				if got[m] != w {
					t.Errorf("%s: metered %+v, want %+v (each one-hour write as 1.6 five-minute ones)", m, got[m], w)
				}
			}
		})
	}
}

// TestCacheWritesBounded: the one-hour count is read within the total
// and bounded as usage is, so it never overflows, whatever an answer says.
func TestCacheWritesBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ total, hour, want int64 }{
		{0, 0, 0}, {10, 0, 10}, {10, 10, 16}, {10, 99, 16}, {10, -5, 10}, {-3, 4, 0}, {1, 1, 2},
		{1 << 62, 1 << 62, 1<<40 + (3<<40+4)/5},
	} {
		if got := cacheWrites(c.total, c.hour); got != c.want {
			t.Errorf("cacheWrites(%d, %d) = %d, want %d", c.total, c.hour, got, c.want)
		}
	}
}
