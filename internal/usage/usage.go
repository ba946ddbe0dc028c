// Package usage is what an agent step consumed: tokens and cost. It sits
// below both the agents, which report it, and the session, which records
// it, so that state never depends on the agents.
package usage

import "fmt"

// Usage is what a step consumed.
type Usage struct {
	// InputTokens counts every prompt token, cached or not, so totals and
	// budgets read the same whether or not a provider caches.
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// CacheReadTokens and CacheWriteTokens are the parts of InputTokens
	// read from and written to the provider's prompt cache, which are
	// billed at other rates than plain input. Zero when the source does
	// not report them.
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
	}
}

// Max returns, field by field, the larger of two accounts of the same
// spending: what an agent reported and what planex's model gateway
// metered, of which neither may be trusted to be whole alone.
func (u Usage) Max(o Usage) Usage {
	return Usage{
		InputTokens:      max(u.InputTokens, o.InputTokens),
		OutputTokens:     max(u.OutputTokens, o.OutputTokens),
		CostUSD:          max(u.CostUSD, o.CostUSD),
		CacheReadTokens:  max(u.CacheReadTokens, o.CacheReadTokens),
		CacheWriteTokens: max(u.CacheWriteTokens, o.CacheWriteTokens),
	}
}

// MaxTokens bounds each token count a record of usage may hold: far
// above any one step's (a trillion), and low enough that millions of
// records cannot overflow the sum a budget compares.
const MaxTokens = 1 << 40

// MaxCostUSD bounds each cost a record may hold, for the same reason.
const MaxCostUSD = 1e9

// Check says what is wrong with u as a record of what a step spent: a
// negative, not-a-number or unbounded value. A session's records come
// back from files an agent without the sandbox, or whoever can push a
// state ref, may have written; a negative cost or one that is not a
// number made every budget check pass (NaN compares false).
func (u Usage) Check() error {
	for _, n := range []struct {
		name string
		v    int64
	}{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens}, {"cache_read_tokens", u.CacheReadTokens}, {"cache_write_tokens", u.CacheWriteTokens}} {
		if n.v < 0 || n.v > MaxTokens {
			return fmt.Errorf("%s is %d, not between 0 and %d", n.name, n.v, int64(MaxTokens))
		}
	}
	if !(u.CostUSD >= 0 && u.CostUSD <= MaxCostUSD) { // NaN fails both
		return fmt.Errorf("cost_usd is %v, not between 0 and %v", u.CostUSD, MaxCostUSD)
	}
	return nil
}

// Bounded is u as a record may hold it (Check passes): a negative or
// not-a-number value is 0 and one beyond the bounds is the bound. What an
// agent reports of its own usage is its claim: a negative cost would pay
// back what earlier steps spent, past every budget.
func (u Usage) Bounded() Usage {
	clamp := func(n int64) int64 { return min(max(n, 0), MaxTokens) }
	out := Usage{InputTokens: clamp(u.InputTokens), OutputTokens: clamp(u.OutputTokens),
		CacheReadTokens: clamp(u.CacheReadTokens), CacheWriteTokens: clamp(u.CacheWriteTokens), CostUSD: u.CostUSD}
	if !(out.CostUSD >= 0) { // negative or NaN
		out.CostUSD = 0
	}
	out.CostUSD = min(out.CostUSD, MaxCostUSD)
	return out
}
