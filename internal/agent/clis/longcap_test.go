package clis

import (
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/egress"
)

// TestOutputCapAtTheLongPromptRate: the gateway asks for a long prompt's
// bound under the model marked egress.LongPrompt (its output bills at 1.5
// times), and the bound is priced so, in the tier seen as well.
func TestOutputCapAtTheLongPromptRate(t *testing.T) {
	t.Parallel()
	a := &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}
	for _, c := range []struct {
		name, seen string
		want       int64
	}{
		// A quarter of what is left of $1 after 100,000 tokens in, at
		// Sonnet's long-prompt output price ($15, $30 at priority).
		{"list price", "claude-sonnet-5-5", 13333},
		{"a priority answer", "claude-sonnet-5-5" + egress.PriorityTier, 5000},
	} {
		meter := &egress.Meter{}
		meter.Add(c.seen, agent.Usage{InputTokens: 100_000})
		if got, _ := a.outputCap("step", agent.Limit{CostUSD: 1}, meter)("claude-sonnet-5-5" + egress.LongPrompt); got != c.want {
			t.Errorf("%s: bound %d, want %d", c.name, got, c.want)
		}
	}
}
