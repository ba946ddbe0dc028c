package egress

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestRedTeamGatewayMetersACutStream: the provider's stream is cut
// before its last usage event (the connection reset, an HTTP/2 stream
// reset, a proxy's timeout), after it had billed what it generated: a
// reasoning model's thinking, shown as a summary or not at all, and a
// prompt whose images bill by their pixels. The gateway counted the
// bytes the stream carried as the output and the request's bytes as the
// input (unless the stream had told the input), where the call may have
// been billed its whole output bound and its prompt as reckoned. A call
// whose answer was cut before its end now counts its output bound, and,
// where no usage was read, the prompt as the gateway reckons it.
func TestRedTeamGatewayMetersACutStream(t *testing.T) {
	t.Parallel()
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\",\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n"
	thinking := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me think.\"}}\n\n"
	ping := "event: ping\ndata: {\"type\":\"ping\"}\n\n"
	var images strings.Builder
	for i := range 10 {
		if i > 0 {
			images.WriteByte(',')
		}
		images.WriteString(`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + blankPNG(t, 2000, 2000) + `"}}`)
	}
	const bound = 20000
	for _, r := range []struct {
		name, body, sent string
		http2            bool  // the stream reset (RST_STREAM), not the connection
		in, out          int64 // at least
	}{
		{"cut after the input was told", `{"model":"claude-sonnet-5-5","max_tokens":64000,"stream":true,"messages":[{"role":"user","content":"think long"}]}`, start + thinking, false, 9, bound},
		{"cut before any usage", `{"model":"claude-sonnet-5-5","max_tokens":64000,"stream":true,"messages":[{"role":"user","content":[` + images.String() + `]}]}`, ping, false, 60000, bound},
		{"an HTTP/2 stream reset", `{"model":"claude-sonnet-5-5","max_tokens":64000,"stream":true,"messages":[{"role":"user","content":"think long"}]}`, start + thinking, true, 9, bound},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				io.Copy(io.Discard, req.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, r.sent)
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // the stream is cut
			}))
			var rt http.RoundTripper
			if r.http2 {
				hs.EnableHTTP2 = true
				hs.StartTLS()
				rt = hs.Client().Transport
			} else {
				hs.Start()
			}
			defer hs.Close()
			u, _ := url.Parse(hs.URL)
			g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{}, Transport: rt,
				Cap: func(string) (int64, func()) { return bound, nil }}
			c, stop := ServeGatewayForTest(t, g)
			req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(r.body))
			req.Header.Set("X-Api-Key", "ph")
			resp, err := c.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(g.Meter.Totals()) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			stop()
			var in, out int64
			for _, u := range g.Meter.Totals() {
				in, out = in+u.InputTokens, out+u.OutputTokens
			}
			if in < r.in || out < r.out {
				t.Errorf("metered %d input and %d output tokens of a cut stream, want at least %d and %d", in, out, r.in, r.out)
			}
		})
	}
}
