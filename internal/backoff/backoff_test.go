package backoff

import (
	"net/http"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	t.Parallel()
	none := func(int64) int64 { return 0 }
	most := func(k int64) int64 { return k - 1 }
	p := Policy{Base: time.Second, Max: 30 * time.Second}
	cases := []struct {
		name   string
		p      Policy
		n      int
		jitter func(int64) int64
		want   time.Duration
	}{
		{"first retry waits Base", p, 1, none, time.Second},
		{"doubles", p, 2, none, 2 * time.Second},
		{"doubles again", p, 4, none, 8 * time.Second},
		{"capped at Max", p, 6, none, 30 * time.Second},
		{"no overflow far out", p, 200, none, 30 * time.Second},
		{"shift that overflows is capped", Policy{Base: time.Hour, Max: 2 * time.Hour}, 40, none, 2 * time.Hour},
		{"attempt 0 is the first", p, 0, none, time.Second},
		{"jitter takes at most a quarter", p, 3, most, 4*time.Second - time.Second},
		{"no policy, no wait", Policy{}, 3, none, 0},
	}
	for _, c := range cases {
		if got := c.p.delay(c.n, c.jitter); got != c.want {
			t.Errorf("%s: delay(%d) = %s, want %s", c.name, c.n, got, c.want)
		}
	}
	for n := 1; n < 10; n++ {
		d := p.Delay(n)
		hi := min(p.Base<<(n-1), p.Max)
		if d > hi || d < hi-hi/4 {
			t.Errorf("Delay(%d) = %s, want within [%s, %s]", n, d, hi-hi/4, hi)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{"spaces", http.Header{"Retry-After": {" 7 "}}, 7 * time.Second, true},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, true},
		{"negative is zero", http.Header{"Retry-After": {"-4"}}, 0, true},
		{"milliseconds first", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{"bad milliseconds fall back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"9"}}, 9 * time.Second, true},
		{"HTTP date", http.Header{"Retry-After": {now.Add(10 * time.Second).Format(http.TimeFormat)}}, 10 * time.Second, true},
		{"past date is zero", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"huge is bounded", http.Header{"Retry-After": {"1e30"}}, maxWait, true},
		{"NaN", http.Header{"Retry-After": {"NaN"}}, 0, false},
		{"words", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"absent", http.Header{}, 0, false},
		{"nil", nil, 0, false},
	}
	for _, c := range cases {
		got, ok := RetryAfter(c.h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: RetryAfter = %s, %v; want %s, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
