package builtin

import "strings"

// Price is a model's list price in US dollars per million tokens.
type Price struct {
	InPerMTok  float64
	OutPerMTok float64
}

// Cost estimates the dollars of a usage at price p.
func (p Price) Cost(u TokenUsage) float64 {
	return float64(u.InputTokens)/1e6*p.InPerMTok + float64(u.OutputTokens)/1e6*p.OutPerMTok
}

// knownPrices returns the built-in price table, keyed by model-name
// prefix. Figures are public list prices at the time of writing and only
// feed estimates; --price-in/--price-out (Options.Price) override them.
// Cached-input discounts are ignored, so estimates err on the high side.
func knownPrices() []struct {
	prefix string
	price  Price
} {
	return []struct {
		prefix string
		price  Price
	}{
		// Anthropic (the newer rows as Claude Code 2.1.330 prices them)
		{"claude-opus-5-5", Price{4, 20}},
		{"claude-opus-5", Price{5, 25}},
		{"claude-opus-4-8", Price{5, 25}},
		{"claude-opus-4-7", Price{5, 25}},
		{"claude-opus-4-5", Price{5, 25}},
		{"claude-opus-4-6", Price{5, 25}},
		{"claude-sonnet-5", Price{2, 10}},
		{"claude-opus-4", Price{15, 75}},
		{"claude-sonnet-4", Price{3, 15}},
		{"claude-3-7-sonnet", Price{3, 15}},
		{"claude-3-5-sonnet", Price{3, 15}},
		{"claude-haiku-4", Price{1, 5}},
		{"claude-3-5-haiku", Price{0.8, 4}},
		{"claude-3-haiku", Price{0.25, 1.25}},
		// OpenAI
		{"gpt-5-nano", Price{0.05, 0.4}},
		{"gpt-5-mini", Price{0.25, 2}},
		{"gpt-5", Price{1.25, 10}},
		{"gpt-4.1-nano", Price{0.1, 0.4}},
		{"gpt-4.1-mini", Price{0.4, 1.6}},
		{"gpt-4.1", Price{2, 8}},
		{"gpt-4o-mini", Price{0.15, 0.6}},
		{"gpt-4o", Price{2.5, 10}},
		{"o4-mini", Price{1.1, 4.4}},
		{"o3-mini", Price{1.1, 4.4}},
		{"o3", Price{2, 8}},
		// Google (OpenAI-compatible endpoint)
		{"gemini-2.5-pro", Price{1.25, 10}},
		{"gemini-2.5-flash-lite", Price{0.1, 0.4}},
		{"gemini-2.5-flash", Price{0.3, 2.5}},
		{"gemini-2.0-flash", Price{0.1, 0.4}},
	}
}

// LookupPrice finds the price of a model by the longest matching prefix.
// Router prefixes such as "openai/" or "anthropic/" are ignored, and
// dots and dashes in version numbers are treated alike
// ("claude-sonnet-4.5" matches "claude-sonnet-4-5…").
func LookupPrice(model string) (Price, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	best, bestLen := Price{}, -1
	for _, e := range knownPrices() {
		for _, cand := range []string{m, strings.ReplaceAll(m, ".", "-")} {
			if strings.HasPrefix(cand, e.prefix) && len(e.prefix) > bestLen {
				best, bestLen = e.price, len(e.prefix)
			}
		}
	}
	return best, bestLen >= 0
}
