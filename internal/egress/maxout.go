package egress

import "strings"

// modelMaxOutput is the most output tokens a model takes as its limit,
// by the longest row whose name begins the model's (compared in lower
// case, dots read as dashes): the limit the gateway inserts into a call
// that set none is at most this, since a provider refuses a limit above
// its model's own. false: no row begins the name.
//
// A row must never be above what a model it matches accepts: a lower
// figure only inserts a lower limit (the call's answer is cut sooner),
// a higher one has the provider refuse the call. So a variant with a
// smaller maximum than its family's row (gpt-5-chat beside gpt-5) has a
// row of its own. Figures from the providers' model pages, checked
// 2026-11-28 (Anthropic's models overview, OpenAI's model pages,
// Google's Gemini model pages; Gemini counts thinking within it).
func modelMaxOutput(model string) (int64, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	dashed := strings.ReplaceAll(m, ".", "-")
	best, bestLen := int64(0), -1
	for _, r := range maxOutputRows() {
		prefix := strings.ReplaceAll(r.prefix, ".", "-")
		if strings.HasPrefix(dashed, prefix) && len(prefix) > bestLen {
			best, bestLen = r.most, len(prefix)
		}
	}
	return best, bestLen >= 0
}

// maxOutputRows is the table modelMaxOutput reads.
func maxOutputRows() []struct {
	prefix string
	most   int64
} {
	return []struct {
		prefix string
		most   int64
	}{
		// Anthropic (a Messages call must set max_tokens; a call without
		// one is refused unbilled whatever the gateway inserts).
		{"claude-fable-5-1", 128000},
		{"claude-opus-5", 128000},
		{"claude-sonnet-5", 128000},
		{"claude-haiku-5-5", 128000},
		{"claude-opus-4-6", 128000},
		{"claude-opus-4-7", 128000},
		{"claude-opus-4-8", 128000},
		{"claude-sonnet-4-6", 128000},
		{"claude-opus-4-5", 64000},
		{"claude-sonnet-4-5", 64000},
		{"claude-haiku-4-5", 64000},
		{"claude-sonnet-4", 64000},
		{"claude-opus-4", 32000},
		{"claude-3-7-sonnet", 64000},
		{"claude-3-5-sonnet", 8192},
		{"claude-3-5-haiku", 8192},
		{"claude-3-haiku", 4096},
		// OpenAI (max_output_tokens counts reasoning tokens too)
		{"gpt-6.1-sol", 128000},
		{"gpt-6.2-sol", 128000},
		{"gpt-6-sol", 128000},
		{"gpt-6-astra", 128000},
		{"gpt-6-luna", 128000},
		{"gpt-6.1-terra", 128000},
		{"gpt-5", 128000},
		{"gpt-5-chat", 16384},
		{"gpt-5.1-chat", 16384},
		{"gpt-5.2-chat", 16384},
		{"gpt-5-pro", 272000},
		{"gpt-4.1", 32768},
		{"gpt-4o", 16384},
		{"gpt-4.5", 16384},
		{"o1", 100000},
		{"o1-mini", 65536},
		{"o1-preview", 32768},
		{"o3", 100000},
		{"o4-mini", 100000},
		// Google (maxOutputTokens bounds thinking and answer together)
		{"gemini-3.8-flash", 65536},
		{"gemini-3.7-flash", 65536},
		{"gemini-3-flash", 65536},
		{"gemini-3.5-flash", 65536}, // and its Flash-Lite
		{"gemini-3.1-flash-lite", 65536},
		{"gemini-3-pro", 65536},
		{"gemini-3.1-pro", 65536},
		{"gemini-3-pro-image", 32768},
		{"gemini-2.5-pro", 65536},
		{"gemini-2.5-flash", 65536},
		{"gemini-2.5-flash-image", 32768},
		{"gemini-2.0-flash", 8192},
	}
}

// insertedLimit is the output limit the gateway adds to a call of model
// that set none, when the budget bounds its output to limit: limit, or
// the model's own maximum where that is lower. A model no row knows
// gets limit itself: spend stays bounded, and a provider whose model
// takes less refuses the call (unbilled, its message naming the limit)
// rather than running it to a maximum the gateway cannot see.
func insertedLimit(model string, limit int64) int64 {
	if most, ok := modelMaxOutput(model); ok {
		return min(limit, most)
	}
	return limit
}
