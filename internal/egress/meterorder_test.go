package egress

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRedTeamGatewayAnswerEndsAfterMetering: a contained program makes
// its model calls one after another as fast as it can (a curl loop). The
// gateway passed on the answer's Content-Length, so the program had the
// whole answer, and sent its next call, before the gateway had metered
// the last one and given back what it held for it: on a busy machine
// the next call was admitted against a budget that did not yet count the
// last, and a step left tokens for three calls had four or five through
// (TestRedTeamGatewayMetersUnreportedCalls in ./internal/agent/clis
// failed so under load). The answer now ends only after the call is
// metered and its hold released: here the hold's release waits for the
// program's end of the answer, which must not come first.
func TestRedTeamGatewayAnswerEndsAfterMetering(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(modelProvider(ProviderOpenAI, map[string]int64{"gpt-6.1-sol": 128000}))
	t.Cleanup(hs.Close)
	u, _ := url.Parse(hs.URL)
	clientDone := make(chan struct{})
	var early, meteredFirst atomic.Bool
	g := &Gateway{Provider: ProviderOpenAI, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{}}
	g.Cap = func(string) (int64, func()) {
		return 1000, func() {
			meteredFirst.Store(len(g.Meter.Totals()) > 0)
			select {
			case <-clientDone:
				early.Store(true)
			case <-time.After(300 * time.Millisecond):
			}
		}
	}
	c, stop := ServeGatewayForTest(t, g)
	defer stop()
	req, _ := http.NewRequest(http.MethodPost, "http://gateway/responses", strings.NewReader(`{"model":"gpt-6.1-sol","input":"spend"}`))
	req.Header.Set("Authorization", "Bearer ph")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	close(clientDone)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("call: %d %v", resp.StatusCode, err)
	}
	stop()
	if early.Load() {
		t.Error("the program had the whole answer before the gateway released the call's hold: its next call would be admitted before this one counted")
	}
	if !meteredFirst.Load() {
		t.Error("the call's hold was released before the call was metered")
	}
}
