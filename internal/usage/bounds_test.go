package usage

import (
	"math"
	"testing"
)

// TestBounds: Check refuses what no step spends, and Bounded turns any
// claim into a record Check takes.
func TestBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, bounded Usage
		ok          bool
	}{
		{Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.5}, Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.5}, true},
		{Usage{CostUSD: -1}, Usage{}, false},
		{Usage{CostUSD: math.NaN()}, Usage{}, false},
		{Usage{CostUSD: math.Inf(1)}, Usage{CostUSD: MaxCostUSD}, false},
		{Usage{InputTokens: -3, CacheWriteTokens: math.MaxInt64}, Usage{CacheWriteTokens: MaxTokens}, false},
	}
	for _, c := range cases {
		if err := c.in.Check(); (err == nil) != c.ok {
			t.Errorf("Check(%+v) = %v, want ok %v", c.in, err, c.ok)
		}
		b := c.in.Bounded()
		if b != c.bounded || b.Check() != nil {
			t.Errorf("Bounded(%+v) = %+v, want %+v", c.in, b, c.bounded)
		}
	}
}
