package gh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/backoff"
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
	// AttemptTimeout bounds one attempt, from sending the request to the
	// end of its answer (default 1 minute). A request that times out is
	// retried when that is safe; a create that timed out may have been
	// applied, which the client checks before sending it again.
	AttemptTimeout time.Duration
	// MaxRateLimitWait is the longest the client waits, in all, for the
	// primary rate limit (the token's hourly budget) to reset (default 15
	// minutes). A later reset fails the request with a *RateLimitError
	// that says when to try again.
	MaxRateLimitWait time.Duration
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
	if p.AttemptTimeout <= 0 {
		p.AttemptTimeout = time.Minute
	}
	if p.MaxRateLimitWait <= 0 {
		p.MaxRateLimitWait = 15 * time.Minute
	}
	return p
}

// backoff is the wait before attempt+1 when GitHub names none (see
// backoff.Policy: exponential, capped, with jitter).
func (p RetryPolicy) backoff(attempt int) time.Duration {
	return backoff.Policy{Base: p.BaseDelay, Max: p.MaxDelay}.Delay(attempt)
}

// ErrAmbiguous marks a write whose answer was lost (a reset connection,
// a timeout): GitHub may or may not have applied it. It is not re-sent
// blindly; see Client.createOnce.
var ErrAmbiguous = errors.New("the answer from GitHub was lost, so the write may or may not have been applied")

// RateLimitError is a rate limit planex does not wait out: the primary
// limit (the token's hourly budget) resetting later than
// RetryPolicy.MaxRateLimitWait, or a secondary limit asking for longer
// than RetryPolicy.MaxElapsed.
type RateLimitError struct {
	Primary bool
	Reset   time.Time // when GitHub takes requests again
	Message string    // GitHub's message
}

func (e *RateLimitError) Error() string {
	kind := "secondary rate limit"
	if e.Primary {
		kind = "API rate limit for this token"
	}
	return fmt.Sprintf("GitHub's %s is exhausted until %s (%s)", kind, e.Reset.UTC().Format("2006-01-02 15:04:05 UTC"), e.Message)
}

// replayKey marks a request as safe to send again after a lost answer.
type replayKey struct{}

// replayable marks ctx's requests as safe to repeat: GitHub deduplicates
// them (a reaction, a label, a reviewer that is already there) or a
// repeat does no harm.
func replayable(ctx context.Context) context.Context {
	return context.WithValue(ctx, replayKey{}, true)
}

// canReplay says whether req may be sent again after an answer that
// leaves unknown whether it was applied.
func canReplay(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	on, _ := req.Context().Value(replayKey{}).(bool)
	return on
}

// notSent says whether a transport error happened before the request
// left: nothing can have been applied.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// retryTransport retries 5xx answers, lost answers, rate limits the
// rate limiter below did not absorb, and 404s shortly after a create. A
// write GitHub does not deduplicate is never re-sent here after an answer
// that may hide its success; the client looks for its result first.
type retryTransport struct {
	base   http.RoundTripper
	policy RetryPolicy
	log    *slog.Logger
	sleep  func(context.Context, time.Duration) error

	mu          sync.Mutex
	lastCreated time.Time
	// spentUntil is when the primary budget, found spent by a successful
	// answer (x-ratelimit-remaining: 0), resets, per resource.
	spentUntil map[string]time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	start := time.Now()
	var limitWaited time.Duration
	if err := t.awaitBudget(req, &limitWaited); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		resp, err := t.base.RoundTrip(rewound(req))
		if err != nil {
			wait, err := t.afterTransportError(req, err, attempt, start)
			if err != nil {
				return nil, err
			}
			if err := t.sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode == http.StatusCreated {
			t.mu.Lock()
			t.lastCreated = time.Now()
			t.mu.Unlock()
		}
		if reset, ok := primaryLimit(resp); ok {
			if err := t.awaitReset(req, resp, reset, &limitWaited); err != nil {
				return nil, err
			}
			attempt-- // waiting for a reset is not a failed attempt
			continue
		}
		wait, reason := t.retryable(resp, attempt)
		if reason == "" {
			t.noteBudget(resp)
			return resp, nil
		}
		if reason == "server error" && !canReplay(req) {
			// The client decides: the write may have been applied.
			return resp, nil
		}
		if t.exhausted(attempt, start, wait) {
			return t.giveUp(req, resp, reason, attempt, wait)
		}
		drain(resp)
		t.log.InfoContext(ctx, "github: retrying", "reason", reason, "method", req.Method, "url", req.URL.Redacted(), "status", resp.StatusCode, "attempt", attempt, "wait", wait)
		if err := t.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// exhausted says whether another attempt, after waiting wait, would go
// past the policy's attempts or time.
func (t *retryTransport) exhausted(attempt int, start time.Time, wait time.Duration) bool {
	return attempt >= t.policy.MaxAttempts || time.Since(start)+wait > t.policy.MaxElapsed
}

// afterTransportError decides what follows a request that got no answer:
// how long to wait before sending it again, or the error to return (a
// write that may have been applied is ErrAmbiguous, never re-sent).
func (t *retryTransport) afterTransportError(req *http.Request, err error, attempt int, start time.Time) (time.Duration, error) {
	ctx := req.Context()
	if ctx.Err() != nil {
		return 0, err
	}
	if !canReplay(req) && !notSent(err) {
		t.log.WarnContext(ctx, "github: answer lost", "method", req.Method, "url", req.URL.Redacted(), "err", err)
		return 0, fmt.Errorf("%w: %w", ErrAmbiguous, err)
	}
	wait := t.policy.backoff(attempt)
	if t.exhausted(attempt, start, wait) {
		return 0, err
	}
	t.log.InfoContext(ctx, "github: retrying", "reason", "transport error", "method", req.Method, "url", req.URL.Redacted(), "err", err, "attempt", attempt, "wait", wait)
	return wait, nil
}

// awaitReset waits for a spent primary rate limit to reset, unless the
// waits of this request would then exceed the policy's limit.
func (t *retryTransport) awaitReset(req *http.Request, resp *http.Response, reset time.Time, waited *time.Duration) error {
	ctx := req.Context()
	wait := time.Until(reset) + time.Second
	msg := errorMessage(resp)
	drain(resp)
	if *waited+wait > t.policy.MaxRateLimitWait {
		t.log.WarnContext(ctx, "github: primary rate limit resets too late to wait", "method", req.Method, "url", req.URL.Redacted(), "reset", reset)
		return &RateLimitError{Primary: true, Reset: reset, Message: msg}
	}
	t.log.InfoContext(ctx, "github: primary rate limit; waiting for the reset", "method", req.Method, "url", req.URL.Redacted(), "reset", reset, "wait", wait)
	*waited += wait
	return t.sleep(ctx, wait)
}

// giveUp returns the last answer of a request retried as often as the
// policy allows; a secondary rate limit becomes a RateLimitError.
func (t *retryTransport) giveUp(req *http.Request, resp *http.Response, reason string, attempt int, wait time.Duration) (*http.Response, error) {
	t.log.WarnContext(req.Context(), "github: giving up", "reason", reason, "method", req.Method, "url", req.URL.Redacted(), "status", resp.StatusCode, "attempts", attempt, "wait", wait)
	if reason == "secondary rate limit" {
		msg := errorMessage(resp)
		drain(resp)
		return nil, &RateLimitError{Reset: time.Now().Add(wait), Message: msg}
	}
	return resp, nil
}

// awaitBudget waits, before a request, for a primary budget that an
// earlier answer said is spent, when it resets soon enough; otherwise
// the request goes out and GitHub's answer decides.
func (t *retryTransport) awaitBudget(req *http.Request, waited *time.Duration) error {
	t.mu.Lock()
	until := t.spentUntil["core"]
	t.mu.Unlock()
	wait := time.Until(until) + time.Second
	if until.IsZero() || wait <= time.Second || wait > t.policy.MaxRateLimitWait {
		return nil
	}
	t.log.InfoContext(req.Context(), "github: rate limit budget spent; waiting for the reset", "reset", until, "wait", wait)
	*waited += wait
	return t.sleep(req.Context(), wait)
}

// noteBudget remembers a spent primary budget from a successful answer
// and hides it from go-github, which would otherwise refuse every later
// request on its own until the reset instead of letting this transport
// wait for it.
func (t *retryTransport) noteBudget(resp *http.Response) {
	if resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	secs, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err == nil {
		res := resp.Header.Get("X-RateLimit-Resource")
		if res == "" {
			res = "core"
		}
		t.mu.Lock()
		if t.spentUntil == nil {
			t.spentUntil = map[string]time.Time{}
		}
		t.spentUntil[res] = time.Unix(secs, 0)
		t.mu.Unlock()
	}
	resp.Header.Del("X-RateLimit-Remaining")
	resp.Header.Del("X-RateLimit-Reset")
}

// primaryLimit reports a primary rate limit answer and its reset: 403 or
// 429 with x-ratelimit-remaining 0.
func primaryLimit(resp *http.Response) (time.Time, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return time.Time{}, false
	}
	if resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return time.Time{}, false
	}
	secs, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		// No reset named: GitHub asks for at least a minute.
		return time.Now().Add(time.Minute), true
	}
	return time.Unix(secs, 0), true
}

// retryable says whether resp should be retried, after how long, and why.
func (t *retryTransport) retryable(resp *http.Response, attempt int) (time.Duration, string) {
	switch {
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
		return t.delay(resp, attempt), "server error"
	case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusForbidden && isSecondaryLimit(resp)):
		d := t.delay(resp, attempt)
		if _, named := backoff.RetryAfter(resp.Header, time.Now()); !named && d < time.Minute {
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
	if d, ok := backoff.RetryAfter(resp.Header, time.Now()); ok {
		return d
	}
	return t.policy.backoff(attempt)
}

// errorMessage reads GitHub's message from an error answer (restoring
// the body).
func errorMessage(resp *http.Response) string {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &body)
	return body.Message
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

// attemptTimeout bounds one attempt; the deadline covers the answer's
// body too, and ends when the body is closed.
type attemptTimeout struct {
	base http.RoundTripper
	d    time.Duration
}

func (t attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.d)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			err = fmt.Errorf("no answer within %s: %w", t.d, err)
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
