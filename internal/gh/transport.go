package gh

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RetryPolicy bounds how the client retries transient failures.
type RetryPolicy struct {
	// MaxAttempts is the number of tries per request, first included
	// (default 5).
	MaxAttempts int
	// MaxElapsed caps the total time spent retrying one request, waits
	// included (default 3 minutes). A Retry-After beyond it is not waited for.
	MaxElapsed time.Duration
	// BaseDelay is the first backoff when GitHub names no wait (default 1s);
	// it doubles per attempt, with jitter, up to MaxDelay (default 1 minute).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// SettleWindow: a 404 answered within this time after the client created
	// something is retried, because GitHub's replicas can lag behind a write
	// (default 10s). Zero keeps the default; negative disables.
	SettleWindow time.Duration
	// SettleDelay is the wait between such 404 retries (default 500ms).
	SettleDelay time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = 3 * time.Minute
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = time.Minute
	}
	if p.SettleWindow == 0 {
		p.SettleWindow = 10 * time.Second
	}
	if p.SettleDelay <= 0 {
		p.SettleDelay = 500 * time.Millisecond
	}
	return p
}

// retryTransport retries 5xx answers, secondary rate limits the rate
// limiter below did not absorb, and 404s shortly after a create.
type retryTransport struct {
	base   http.RoundTripper
	policy RetryPolicy
	log    *slog.Logger
	sleep  func(context.Context, time.Duration) error

	mu          sync.Mutex
	lastCreated time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		resp, err := t.base.RoundTrip(rewound(req))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusCreated {
			t.mu.Lock()
			t.lastCreated = time.Now()
			t.mu.Unlock()
		}
		wait, reason := t.retryable(resp, attempt)
		if reason == "" {
			return resp, nil
		}
		if attempt >= t.policy.MaxAttempts {
			t.log.WarnContext(req.Context(), "github: giving up after retries", "method", req.Method, "url", req.URL.Redacted(), "status", resp.StatusCode, "attempts", attempt)
			return resp, nil
		}
		if time.Since(start)+wait > t.policy.MaxElapsed {
			t.log.WarnContext(req.Context(), "github: retry would exceed the time budget", "method", req.Method, "url", req.URL.Redacted(), "status", resp.StatusCode, "wait", wait)
			return resp, nil
		}
		drain(resp)
		t.log.InfoContext(req.Context(), "github: retrying", "reason", reason, "method", req.Method, "url", req.URL.Redacted(), "status", resp.StatusCode, "attempt", attempt, "wait", wait)
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// retryable says whether resp should be retried, after how long, and why.
func (t *retryTransport) retryable(resp *http.Response, attempt int) (time.Duration, string) {
	switch {
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
		return t.delay(resp, attempt), "server error"
	case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusForbidden && isSecondaryLimit(resp)):
		d := t.delay(resp, attempt)
		if resp.Header.Get("Retry-After") == "" && d < time.Minute {
			// GitHub asks for at least a minute when it names no wait.
			d = min(time.Minute, t.policy.MaxDelay)
		}
		return d, "secondary rate limit"
	case resp.StatusCode == http.StatusNotFound && t.policy.SettleWindow > 0:
		t.mu.Lock()
		recent := !t.lastCreated.IsZero() && time.Since(t.lastCreated) < t.policy.SettleWindow
		t.mu.Unlock()
		if recent {
			return t.policy.SettleDelay, "not found right after a create"
		}
	}
	return 0, ""
}

// delay honours Retry-After (seconds or an HTTP date) and otherwise backs
// off exponentially with jitter.
func (t *retryTransport) delay(resp *http.Response, attempt int) time.Duration {
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second
		}
		if when, err := http.ParseTime(ra); err == nil {
			return max(0, time.Until(when))
		}
	}
	if reset := resp.Header.Get("X-RateLimit-Reset"); reset != "" && resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if secs, err := strconv.ParseInt(reset, 10, 64); err == nil {
			return max(0, time.Until(time.Unix(secs, 0)))
		}
	}
	d := t.policy.BaseDelay << (attempt - 1)
	if d > t.policy.MaxDelay || d <= 0 {
		d = t.policy.MaxDelay
	}
	// Up to 25% jitter so parallel jobs do not retry in lockstep.
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// isSecondaryLimit reads the body (restoring it) to tell a secondary rate
// limit from a permission 403.
func isSecondaryLimit(resp *http.Response) bool {
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return false
	}
	var body struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	_ = json.Unmarshal(data, &body)
	return strings.Contains(strings.ToLower(body.Message), "secondary rate limit") ||
		strings.HasSuffix(body.DocumentationURL, "secondary-rate-limits") ||
		strings.HasSuffix(body.DocumentationURL, "#abuse-rate-limits")
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// rewound returns req with a fresh body so that a request can be sent more
// than once (by this transport or the rate limiter).
func rewound(req *http.Request) *http.Request {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody == nil {
		return req
	}
	body, err := req.GetBody()
	if err != nil {
		return req
	}
	r2 := req.Clone(req.Context())
	r2.Body = body
	return r2
}

// rewindTransport gives every attempt its own copy of the request body.
type rewindTransport struct{ base http.RoundTripper }

func (t rewindTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(rewound(req))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
