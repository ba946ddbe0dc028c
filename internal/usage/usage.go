// Package usage is what an agent step consumed: tokens and cost. It sits
// below both the agents, which report it, and the session, which records
// it, so that state never depends on the agents.
package usage

// Usage is what a step consumed.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens, u.CostUSD + o.CostUSD}
}
