package egress

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/usage"
)

// TestRedTeamGatewayMetersIterations: a contained program gives its call
// Anthropic's advisor tool naming a dearer model (Claude Code 2.1.330
// sends {"type":"advisor_20260301","model":…}), which the provider runs
// on the whole conversation each time the model asks, and has the
// context compacted: the answer's usage counts only the model's own
// messages and lists the advisor's calls and the compaction as
// iterations, billed on top. The gateway read the top-level counts
// alone before (the advisor's 90,000 input tokens went unmetered); now
// each iteration beyond the messages is metered, under its own model
// where it names one, in a JSON answer and in a stream.
func TestRedTeamGatewayMetersIterations(t *testing.T) {
	t.Parallel()
	const iterations = `"iterations":[{"type":"message","input_tokens":100,"output_tokens":40},` +
		`{"type":"advisor_message","model":"claude-mythos-5","input_tokens":60000,"cache_read_input_tokens":30000,"output_tokens":2000},` +
		`{"type":"compaction","input_tokens":5000,"output_tokens":700},` +
		`{"type":"message","input_tokens":200,"output_tokens":10}]`
	answers := []struct {
		name, contentType, body string
	}{
		{"json", "application/json",
			`{"id":"msg_1","type":"message","model":"claude-sonnet-5-5","content":[{"type":"text","text":"done"}],` +
				`"usage":{"input_tokens":300,"output_tokens":50,` + iterations + `}}`},
		{"stream", "text/event-stream",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\",\"usage\":{\"input_tokens\":300,\"output_tokens\":1}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":300,\"output_tokens\":50," + iterations + "}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
	}
	for _, a := range answers {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			got := meterAnswer(t, a.contentType, a.body)
			want := map[string]usage.Usage{
				"claude-sonnet-5-5": {InputTokens: 300 + 5000, OutputTokens: 50 + 700},
				"claude-mythos-5":   {InputTokens: 90000, OutputTokens: 2000, CacheReadTokens: 30000},
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("metered %+v, want %+v", got, want)
			}
		})
	}
}

// TestAnswerIterationsBounded: an answer whose iterations name many
// models keeps a few apart and counts the rest under OtherModels, so
// that nothing is lost and the meter's state stays small.
func TestAnswerIterationsBounded(t *testing.T) {
	t.Parallel()
	a := &answerUsage{p: ProviderAnthropic}
	s := newAnswerScan(false, a)
	s.Write([]byte(`{"model":"claude-sonnet-5-5","usage":{"input_tokens":1,"output_tokens":1,"iterations":[`))
	for i := range 50 {
		if i > 0 {
			s.Write([]byte(","))
		}
		fmt.Fprintf(s, `{"type":"advisor_message","model":"m%d","input_tokens":10,"output_tokens":1}`, i)
	}
	s.Write([]byte(`]}}`))
	var total usage.Usage
	for _, u := range a.beyond {
		total = total.Add(u)
	}
	if len(a.beyond) > maxIterationModels+1 || a.beyond[OtherModels] == (usage.Usage{}) || total.InputTokens != 500 || total.OutputTokens != 50 {
		t.Errorf("kept %d models apart, %+v in all; want at most %d and the others', 500 in, 50 out", len(a.beyond), total, maxIterationModels)
	}
}

// TestRedTeamGatewayIterationOverflowPricedDearest: the program has its
// call's iterations name more models than an answer keeps apart, four
// cheap ones first (advisors, a compaction) and a dear one last, in an
// answer whose own model is the cheapest: the last one's tokens counted
// under the answer's own model, priced at its rate. They now count under
// OtherModels, which is priced at the provider's dearest row, in a JSON
// answer and in a stream.
func TestRedTeamGatewayIterationOverflowPricedDearest(t *testing.T) {
	t.Parallel()
	its := `"iterations":[`
	for i, m := range []string{"claude-haiku-4-5", "claude-3-haiku", "claude-3-5-haiku", "claude-haiku-5-5", "claude-mythos-5"} {
		if i > 0 {
			its += ","
		}
		its += fmt.Sprintf(`{"type":"advisor_message","model":%q,"input_tokens":%d,"output_tokens":10}`, m, 1000*(i+1))
	}
	its += "]"
	for _, a := range []struct{ name, contentType, body string }{
		{"json", "application/json", `{"model":"claude-3-haiku","usage":{"input_tokens":1,"output_tokens":1,` + its + `}}`},
		{"stream", "text/event-stream",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-3-haiku\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1," + its + "}}\n\n"},
	} {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			got := meterAnswer(t, a.contentType, a.body)
			if own := got["claude-3-haiku"]; own.InputTokens > 1+2000 {
				t.Errorf("the answer's own model was metered %d input tokens, more than its own and its iteration's 2,001: another model's counted at its rate", own.InputTokens)
			}
			var other int64
			for m, u := range got {
				if m == OtherModels || m == "claude-mythos-5" {
					other += u.InputTokens
				}
			}
			if other < 5000 {
				t.Errorf("metered %+v: the dear iteration's 5,000 input tokens are not priced as the dearest", got)
			}
		})
	}
}

// TestRedTeamGatewayFloorUnderTheAskedModel: the program asks for the
// dearest model it may and sees to it that the answer names none (the
// stream is cut before its first event: the step ends, or the call is
// cut once the gateway reads on for no more hung-up callers; the
// connection breaks mid-answer): the floor the gateway counts then went
// under no model, which is priced as the step's own. It now goes under
// the model the call asked for, read from its body.
func TestRedTeamGatewayFloorUnderTheAskedModel(t *testing.T) {
	t.Parallel()
	for _, p := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"an answer without model or usage", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"content":[]}`) }},
		{"a connection broken mid-answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, `{"content":`)
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			g, c, stop := meteredGateway(t, ProviderAnthropic, p.h, nil)
			req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages",
				strings.NewReader(`{"model":"claude-mythos-5","max_tokens":64000,"messages":[{"role":"user","content":"think"}]}`))
			req.Header.Set("X-Api-Key", "ph")
			if resp, err := c.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			stop()
			got := g.Meter.Totals()
			if got["claude-mythos-5"].InputTokens == 0 || got[""] != (usage.Usage{}) {
				t.Errorf("metered %+v, want the floor under claude-mythos-5, none under no model", got)
			}
		})
	}
}

// TestRedTeamGatewayOverlongUsageIsNotLost: the program has a streamed
// answer's last usage (the message_delta counting the output and the
// iterations) grow past what the meter captures (some 1,000 iterations:
// advisor calls, compactions): the capture was dropped and the usage of
// message_start, read before, stood for the whole answer (1 output
// token). The iterations are now read one by one, each held only while
// it is read, so such a usage is metered in full; one that cannot be
// read still (an iteration longer than the capture) is counted at least
// at the floor of its bytes.
func TestRedTeamGatewayOverlongUsageIsNotLost(t *testing.T) {
	t.Parallel()
	var its strings.Builder
	for i := range 1200 {
		if i > 0 {
			its.WriteString(",")
		}
		fmt.Fprintf(&its, `{"type":"advisor_message","model":"claude-mythos-5","input_tokens":90000,"output_tokens":2000,"pad":"%0200d"}`, i)
	}
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-haiku-4-5\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":10,\"output_tokens\":50000,\"iterations\":[" + its.String() + "]}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}), nil)
	resp := postMessages(t, c)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stop()
	got := g.Meter.Totals()["claude-mythos-5"+LongPrompt] // summed past 200K, marked long
	if want := (usage.Usage{InputTokens: 1200 * 90000, OutputTokens: 1200 * 2000}); got != want {
		t.Errorf("an answer with 1,200 advisor iterations metered %+v under the advisor's model, want %+v (all: %+v)", got, want, g.Meter.Totals())
	}
	// A single iteration past the capture's bound drops the usage:
	// the floor of the bytes then.
	long := strings.Replace(stream, `"pad":"`, `"pad":"`+strings.Repeat("x", maxCapture), 1)
	g, c, stop = meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, long)
	}), nil)
	resp = postMessages(t, c)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stop()
	var out int64
	for _, u := range g.Meter.Totals() {
		out += u.OutputTokens
	}
	if out < int64(len(long)) {
		t.Errorf("an answer of %d bytes whose usage was too long to read metered %d output tokens, want at least its bytes", len(long), out)
	}
}

// TestGatewayIterationsCumulativeAcrossDeltas: Anthropic's message_delta
// usage is cumulative, its iterations too: a stream that repeats
// message_delta, each listing every iteration so far, bills the last
// list once, neither the sum of the lists nor only the first.
func TestGatewayIterationsCumulativeAcrossDeltas(t *testing.T) {
	t.Parallel()
	adv := `{"type":"advisor_message","model":"claude-mythos-5","input_tokens":1000,"output_tokens":100}`
	delta := func(out int, its ...string) string {
		return fmt.Sprintf("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"input_tokens\":10,\"output_tokens\":%d,\"iterations\":[%s]}}\n\n", out, strings.Join(its, ","))
	}
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
		delta(20, adv) + delta(30, adv, adv) + delta(40, adv, adv) +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}), nil)
	resp := postMessages(t, c)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stop()
	got := g.Meter.Totals()
	want := map[string]usage.Usage{
		"claude-sonnet-5-5": {InputTokens: 10, OutputTokens: 40},
		"claude-mythos-5":   {InputTokens: 2000, OutputTokens: 200},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metered %+v, want %+v", got, want)
	}
}
