// Package usage is what an agent step consumed: tokens and cost. It sits
// below both the agents, which report it, and the session, which records
// it, so that state never depends on the agents.
package usage

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
