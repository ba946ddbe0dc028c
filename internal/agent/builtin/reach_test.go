package builtin

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// An endpoint nobody answers at fails the step after two short retries,
// marked agent.ErrModelUnreachable, and every retry is logged with what
// failed and when the next try is; a busy endpoint (503) keeps its full
// retries.
func TestUnreachableEndpointFailsFast(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1/chat/completions"
	ln.Close() // nothing listens there now: connection refused
	calls := 0
	p := ProviderFunc(func(ctx context.Context, _ Request) (Response, error) {
		calls++
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("something answered at a closed port")
		}
		return Response{}, err
	})
	var waits []time.Duration
	var log bytes.Buffer
	a := New(p, Options{Model: "gpt-6.1-sol", MaxRetries: 6, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	_, err = a.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "p", Dir: t.TempDir(), Timeout: time.Minute})
	if !errors.Is(err, agent.ErrModelUnreachable) {
		t.Fatalf("err = %v, want ErrModelUnreachable", err)
	}
	if calls != 3 || len(waits) != 2 {
		t.Errorf("%d calls, waits %v; want 3 calls and 2 short waits", calls, waits)
	}
	var total time.Duration
	for _, w := range waits {
		total += w
	}
	if total > 10*time.Second {
		t.Errorf("waited %s for an endpoint that refuses connections", total)
	}
	if n := strings.Count(log.String(), "trying again in"); n != 2 || !strings.Contains(log.String(), "connection refused") {
		t.Errorf("retries not logged with their reason:\n%s", log.String())
	}

	// A 503 is worth the full retries.
	busy := &APIError{Provider: "X", StatusCode: 503}
	sp := &scripted{errs: []error{busy, busy, busy, busy, busy}}
	waits = nil
	b := New(sp, Options{MaxRetries: 4, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	_, err = b.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "p", Dir: t.TempDir(), Timeout: time.Minute})
	if errors.Is(err, agent.ErrModelUnreachable) || len(waits) != 4 {
		t.Errorf("503: err %v after %d waits, want 4 retries and no unreachable mark", err, len(waits))
	}
}
