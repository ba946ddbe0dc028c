package clis

import (
	"testing"

	"github.com/planexhq/planex/internal/agent/builtin"
)

// TestRedTeamMeteredModelSpellings: a program names a model the way a
// provider's other front ends or aliases spell it, hoping the meter
// finds a cheap row or the step's own price for it: an alias
// (-latest), a Vertex version (@20251001), a Bedrock id with its region
// prefix and version suffix, a router's prefix, another case, a
// router's suffix (:online), Gemini's path form (models/…). Each is
// priced as the model it names when a row knows it as it is, else at
// the dearest row of its provider (never the step's price, which covers
// the step's model and its dated snapshots only). Held.
func TestRedTeamMeteredModelSpellings(t *testing.T) {
	t.Parallel()
	user := &builtin.Price{InPerMTok: 1, OutPerMTok: 1}
	checkMeteredPrices(t, []meteredPrice{
		{"claude", "claude-sonnet-5-5", nil, "claude-haiku-4-5@20251001", 90},
		{"claude", "claude-sonnet-5-5", nil, "us.anthropic.claude-haiku-4-5-20251001-v1:0", 90},
		{"claude", "claude-sonnet-5-5", nil, "anthropic.claude-haiku-4-5-20251001-v1:0", 90},
		{"claude", "claude-sonnet-5-5", nil, "CLAUDE-MYTHOS-5", 60},
		{"claude", "claude-sonnet-5-5", nil, "anthropic/claude-mythos-5", 60},
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5-latest", 90},
		{"claude", "claude-sonnet-5-5", user, "claude-sonnet-5-5-latest", 90},
		{"claude", "claude-sonnet-5-5", user, "claude-sonnet-5-5@20261001", 90},
		{"claude", "claude-sonnet-5-5", user, "claude-sonnet-5-5-20261001-v2", 90},
		{"claude", "claude-sonnet-5-5", user, "Claude-Sonnet-5-5", 2}, // the step's model, as the user priced it
		{"codex", "gpt-6.1-sol", nil, "GPT-5-PRO", 135},
		{"codex", "gpt-6.1-sol", nil, "openai/gpt-5-pro", 135},
		{"codex", "gpt-6.1-sol", nil, "gpt-6.1-sol:online", 750},
		{"codex", "gpt-6.1-sol", nil, "gpt-6.1-sol-latest", 750},
		{"gemini", "gemini-3.8-flash", nil, "gemini-flash-latest", 124},
		{"gemini", "gemini-3.8-flash", nil, "gemini-3.8-flash-preview", 124},
		{"gemini", "gemini-3.8-flash", nil, "models/gemini-3-pro-image", 122},
	})
}
