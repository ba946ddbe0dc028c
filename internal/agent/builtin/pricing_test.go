package builtin

import (
	"testing"

	"github.com/planexhq/planex/internal/agent"
)

// Every agent's default model has a price, so that a cost budget holds
// without --price-in/--price-out.
func TestEveryDefaultModelHasAPrice(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"anthropic", "claude", "openai", "codex", "gemini"} {
		model := agent.DefaultModel(name)
		p, ok := LookupPrice(model)
		if !ok || p.InPerMTok <= 0 || p.OutPerMTok <= 0 {
			t.Errorf("agent %s: default model %q has no price (%+v, %v)", name, model, p, ok)
		}
	}
	if _, ok := LookupPrice("no-such-model-7"); ok {
		t.Error("an unknown model has a price")
	}
}
