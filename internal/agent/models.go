package agent

// The models each agent uses when --model names none, in one place so
// they are kept current together: when a vendor announces a model's
// retirement, replace it here and in docs/agents.md. Each was checked
// against the model list the pinned CLI ships (see docs/agents.md,
// "Tested CLI versions"); none of them is announced for retirement.
const (
	// DefaultAnthropicModel serves --agent anthropic and --agent claude
	// (Claude Code 2.1.330 lists claude-sonnet-4-5 as retiring on
	// 2026-11-30; its current Sonnet is claude-sonnet-5-5).
	DefaultAnthropicModel = "claude-sonnet-5-5"
	// DefaultOpenAIModel serves --agent openai and --agent codex: the
	// model Codex 0.169.0 lists first.
	DefaultOpenAIModel = "gpt-6.1-sol"
	// DefaultGeminiModel serves --agent gemini: the newest generally
	// available (not preview) model Gemini CLI 0.61.0 knows.
	DefaultGeminiModel = "gemini-3.8-flash"
)

// DefaultModel returns the default model of a named agent, or "" for
// agents without one (the command agent).
func DefaultModel(agentName string) string {
	switch agentName {
	case "anthropic", "claude":
		return DefaultAnthropicModel
	case "openai", "codex":
		return DefaultOpenAIModel
	case "gemini":
		return DefaultGeminiModel
	}
	return ""
}
