// Package backoff says how long to wait before trying a remote call again:
// exponential backoff with jitter when the server names no wait, and the
// server's own Retry-After when it does. The GitHub client and the
// built-in agents' model calls both use it, so that the two agree.
package backoff

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy is exponential backoff: Base before the first retry, doubling
// with each retry up to Max.
type Policy struct {
	Base, Max time.Duration
}

// Delay is the wait before retry n (1 for the first): Base·2^(n-1), at
// most Max, less up to a quarter of it at random so that clients failing
// together do not retry in lockstep. It never exceeds Max.
func (p Policy) Delay(n int) time.Duration {
	return p.delay(n, rand.Int64N)
}

// delay is Delay with the random source given: jitter(k) returns a
// number in [0, k).
func (p Policy) delay(n int, jitter func(int64) int64) time.Duration {
	if p.Base <= 0 || p.Max <= 0 {
		return 0
	}
	d := p.Max
	if n < 1 {
		n = 1
	}
	if n <= 62 {
		if e := p.Base << (n - 1); e > 0 && e>>(n-1) == p.Base && e < p.Max {
			d = e
		}
	}
	return d - time.Duration(jitter(int64(d)/4+1))
}

// RetryAfter reads the wait a server asked for: retry-after-ms (the
// model APIs' milliseconds), else Retry-After as seconds (whole or
// fractional) or as an HTTP date. ok is false when neither header is
// there or neither parses; a date in the past or a negative number is a
// wait of zero.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < float64(maxWait/time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case secs != secs: // NaN
			return 0, false
		case secs <= 0:
			return 0, true
		case secs >= float64(maxWait/time.Second):
			return maxWait, true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(0, t.Sub(now)), maxWait), true
	}
	return 0, false
}

// maxWait bounds what RetryAfter returns, so that a huge number cannot
// overflow a Duration; callers compare it with their own limits anyway.
const maxWait = 24 * time.Hour
