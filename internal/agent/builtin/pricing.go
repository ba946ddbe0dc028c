package builtin

import "strings"

// Price is a model's list price in US dollars per million tokens.
type Price struct {
	InPerMTok  float64
	OutPerMTok float64
	// CacheReadPerMTok and CacheWritePerMTok price the input tokens read
	// from and written to the provider's prompt cache. Zero means the
	// input price: a cost is never made cheaper on a rate nobody knows.
	CacheReadPerMTok  float64
	CacheWritePerMTok float64
}

// Cost estimates the dollars of a usage at price p. Cache reads and
// writes are parts of the input tokens and are priced at their own
// rates; the rest of the input at the input price.
func (p Price) Cost(u TokenUsage) float64 {
	read, write := p.CacheReadPerMTok, p.CacheWritePerMTok
	if read == 0 {
		read = p.InPerMTok
	}
	if write == 0 {
		write = p.InPerMTok
	}
	// A source that counts cache tokens outside its input total would
	// make this negative; its cache tokens are still priced below.
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(plain)*p.InPerMTok + float64(u.CacheReadTokens)*read +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*p.OutPerMTok) / 1e6
}

// UserPrice is the price the user gave (--price-in/--price-out) for
// model. Cache reads and writes keep the ratios to the input price that
// the built-in table has for the model's family (say 0.1× and 1.25× for
// Claude), so an override of the list price does not lose the cache
// discount; for a model the table does not know they cost the input price.
func UserPrice(in, out float64, model string) Price {
	p := Price{InPerMTok: in, OutPerMTok: out}
	if known, ok := LookupPrice(model); ok && known.InPerMTok > 0 {
		if known.CacheReadPerMTok > 0 {
			p.CacheReadPerMTok = in * known.CacheReadPerMTok / known.InPerMTok
		}
		if known.CacheWritePerMTok > 0 {
			p.CacheWritePerMTok = in * known.CacheWritePerMTok / known.InPerMTok
		}
	}
	return p
}

// knownPrices returns the built-in price table, keyed by model-name
// prefix. Figures are public list prices at the time of writing and only
// feed estimates; --price-in/--price-out (Options.Price) override them.
// The columns are input, output, cache read and cache write.
//
//   - Anthropic bills cache reads at 0.1× input and five-minute cache
//     writes (the kind planex's cache_control breakpoints make) at 1.25×
//     (Opus 5.5 reads at 0.05×), as on the models' pricing pages.
//   - OpenAI caches automatically and bills cached input at 0.1× for the
//     GPT-5 family, 0.25× for GPT-4.1, o3 and o4-mini, 0.5× for GPT-4o
//     and o3-mini. It charges no premium for writing the cache, and its
//     usage does not report writes, so they stay at the input price.
//   - Google bills implicit cache hits of Gemini 2.5 at 0.1× input and
//     context-cache reads of Gemini 2.0 Flash at 0.25×; writing the cache
//     costs the input price (explicit-cache storage fees are not counted).
func knownPrices() []struct {
	prefix string
	price  Price
} {
	return []struct {
		prefix string
		price  Price
	}{
		// The default model of every agent (agent.DefaultModel) has a row:
		// without one, a cost budget cannot hold. Checked 2026-11-27
		// against the providers' model and pricing pages:
		//   - claude-sonnet-5-5: $2 in, $10 out, 5-minute cache write $2.50;
		//     cache reads $0.10 since 2026-10-07 (Anthropic's pricing page).
		//   - gpt-6.1-sol: $2 in, $10 out, cached input $0.10 up to 272K
		//     input tokens (OpenAI's model page; longer prompts cost 2× in,
		//     1.5× out, not modelled here).
		//   - gemini-3.8-flash: $0.75 in, $3.75 out, cache reads $0.075,
		//     Google's introductory price through 2026-12-31; from
		//     2027-01-01 it is $1.50 / $7.50: change the row then.
		{"claude-sonnet-5-5", Price{2, 10, 0.1, 2.5}},
		{"gpt-6.1-sol", Price{2, 10, 0.1, 0}},
		{"gpt-6-sol", Price{2, 10, 0.2, 0}},
		{"gemini-3.8-flash", Price{0.75, 3.75, 0.075, 0}},
		// Anthropic (the newer rows as Claude Code 2.1.330 prices them)
		{"claude-opus-5-5", Price{4, 20, 0.2, 5}},
		{"claude-opus-5", Price{5, 25, 0.5, 6.25}},
		{"claude-opus-4-8", Price{5, 25, 0.5, 6.25}},
		{"claude-opus-4-7", Price{5, 25, 0.5, 6.25}},
		{"claude-opus-4-5", Price{5, 25, 0.5, 6.25}},
		{"claude-opus-4-6", Price{5, 25, 0.5, 6.25}},
		{"claude-sonnet-5", Price{2, 10, 0.2, 2.5}},
		{"claude-opus-4", Price{15, 75, 1.5, 18.75}},
		{"claude-sonnet-4", Price{3, 15, 0.3, 3.75}},
		{"claude-3-7-sonnet", Price{3, 15, 0.3, 3.75}},
		{"claude-3-5-sonnet", Price{3, 15, 0.3, 3.75}},
		{"claude-haiku-4", Price{1, 5, 0.1, 1.25}},
		// The point releases of Claude 4 that Claude Code names, each
		// priced as its family: a version after a row's prefix is not
		// taken as that row (LookupPriceStrict).
		{"claude-opus-4-1", Price{15, 75, 1.5, 18.75}},
		{"claude-sonnet-4-5", Price{3, 15, 0.3, 3.75}},
		{"claude-sonnet-4-6", Price{3, 15, 0.3, 3.75}},
		{"claude-haiku-4-5", Price{1, 5, 0.1, 1.25}},
		// The models Claude Code 2.1.330's catalog lists beyond the rows
		// above, at its prices: a call may name any of them (an advisor
		// tool's model, or the program's choice), and a model without a
		// row is metered at its provider's dearest row. Haiku 5.5 lists at
		// $0.10 in and $0.50 out, five times that for prompts above 100K
		// tokens: the row has the higher rates, as a row is never below
		// what a call may bill.
		{"claude-haiku-5-5", Price{0.5, 2.5, 0.05, 0.625}},
		{"claude-fable-5", Price{10, 50, 1, 12.5}},
		{"claude-fable-5-1", Price{10, 50, 0.25, 12.5}},
		{"claude-fable-5-2", Price{8, 40, 0.2, 10}},
		{"claude-mythos-5", Price{10, 50, 1, 12.5}},
		{"claude-mythos-5-1", Price{10, 50, 0.25, 12.5}},
		{"claude-mythos-5-2", Price{8, 40, 0.2, 10}},
		{"claude-3-5-haiku", Price{0.8, 4, 0.08, 1}},
		{"claude-3-haiku", Price{0.25, 1.25, 0.03, 0.3}},
		// OpenAI
		{"gpt-5-nano", Price{0.05, 0.4, 0.005, 0}},
		{"gpt-5-mini", Price{0.25, 2, 0.025, 0}},
		{"gpt-5", Price{1.25, 10, 0.125, 0}},
		{"gpt-5.1", Price{1.25, 10, 0.125, 0}},
		{"gpt-5.2", Price{1.75, 14, 0.175, 0}},
		{"gpt-4.1-nano", Price{0.1, 0.4, 0.025, 0}},
		{"gpt-4.1-mini", Price{0.4, 1.6, 0.1, 0}},
		{"gpt-4.1", Price{2, 8, 0.5, 0}},
		{"gpt-4o-mini", Price{0.15, 0.6, 0.075, 0}},
		{"gpt-4o", Price{2.5, 10, 1.25, 0}},
		// GPT-4o's first snapshot bills twice the input of the later ones.
		{"gpt-4o-2024-05-13", Price{5, 15, 0, 0}},
		// The dearest models OpenAI lists, which a call may name whatever
		// the step's model is: a model no row knows is metered at the
		// dearest row of its provider (MaxPrice), so these rows bound it.
		{"gpt-5-pro", Price{15, 120, 0, 0}},
		{"gpt-4.5", Price{75, 150, 37.5, 0}},
		{"o1-pro", Price{150, 600, 0, 0}},
		{"o1", Price{15, 60, 7.5, 0}},
		{"o3-pro", Price{20, 80, 0, 0}},
		{"o4-mini", Price{1.1, 4.4, 0.275, 0}},
		{"o3-mini", Price{1.1, 4.4, 0.55, 0}},
		{"o3", Price{2, 8, 0.5, 0}},
		// Google (OpenAI-compatible endpoint)
		{"gemini-2.5-pro", Price{1.25, 10, 0.125, 0}},
		// Gemini 3 Pro (preview): $2 in and $12 out up to 200K prompt
		// tokens, $4 and $18 above; the row has the higher rates.
		{"gemini-3-pro", Price{4, 18, 0.4, 0}},
		{"gemini-3-pro-preview", Price{4, 18, 0.4, 0}}, // its published id
		// The image models bill their output (an image is a few thousand
		// tokens) far above text: $30 a million for 2.5 Flash Image, $120
		// for 3 Pro Image; a call may name them like any other model.
		{"gemini-2.5-flash-image", Price{0.3, 30, 0, 0}},
		{"gemini-3-pro-image", Price{2, 120, 0, 0}},
		{"gemini-2.5-flash-lite", Price{0.1, 0.4, 0.01, 0}},
		{"gemini-2.5-flash", Price{0.3, 2.5, 0.03, 0}},
		{"gemini-2.0-flash", Price{0.1, 0.4, 0.025, 0}},
	}
}

// LookupPriceStrict is LookupPrice for a name the price table must
// know as it is: what follows the matching row's prefix may only date
// it (Snapshot: "claude-sonnet-4-20250514", "gpt-4o-2024-08-06",
// "gemini-2.0-flash-001"). A variant of a known model ("gpt-5-pro"
// before its row, "gemini-2.5-flash-preview-05-20",
// "claude-3-5-sonnet-latest") is not known, nor is a later version
// ("gpt-5.2" under gpt-5's row, "claude-sonnet-5-9" under
// claude-sonnet-5's): either may bill more than the row its prefix finds.
func LookupPriceStrict(model string) (Price, bool) {
	p, rest, ok := lookup(model)
	if !ok || !Snapshot(rest) {
		return Price{}, false
	}
	return p, true
}

// Snapshot says whether rest, what follows a model's name, only dates a
// snapshot of that model: nothing, or a dash and a date (20250514,
// 2024-08-06) or a three-digit stable number (Gemini's 001). A version
// number (-1, .2, -5-9) names another model, at a price of its own.
func Snapshot(rest string) bool {
	digits := func(s string) bool { return strings.Trim(s, "0123456789") == "" }
	d, ok := strings.CutPrefix(rest, "-")
	switch {
	case rest == "":
		return true
	case !ok:
		return false
	case len(d) == 8 || len(d) == 3:
		return digits(d)
	case len(d) == 10:
		return d[4] == '-' && d[7] == '-' && digits(d[:4]+d[5:7]+d[8:])
	}
	return false
}

// MaxPrice is, rate by rate, the dearest of the rows whose prefix family
// accepts: the price of a model of that provider no row knows, so that a
// program naming one is never metered below what the table's dearest
// model bills. Rows without a cache rate count their input rate there.
func MaxPrice(family func(prefix string) bool) Price {
	var m Price
	for _, e := range knownPrices() {
		if !family(e.prefix) {
			continue
		}
		p := e.price
		read, write := p.CacheReadPerMTok, p.CacheWritePerMTok
		if read == 0 {
			read = p.InPerMTok
		}
		if write == 0 {
			write = p.InPerMTok
		}
		m.InPerMTok, m.OutPerMTok = max(m.InPerMTok, p.InPerMTok), max(m.OutPerMTok, p.OutPerMTok)
		m.CacheReadPerMTok, m.CacheWritePerMTok = max(m.CacheReadPerMTok, read), max(m.CacheWritePerMTok, write)
	}
	return m
}

// LookupPrice finds the price of a model by the longest matching prefix.
// Router prefixes such as "openai/" or "anthropic/" are ignored, and
// dots and dashes in version numbers are treated alike
// ("claude-sonnet-4.5" matches "claude-sonnet-4-5…").
func LookupPrice(model string) (Price, bool) {
	p, _, ok := lookup(model)
	return p, ok
}

// lookup is LookupPrice, also returning what follows the matching prefix.
func lookup(model string) (Price, string, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	best, rest, bestLen := Price{}, "", -1
	for _, e := range knownPrices() {
		for _, cand := range []string{m, strings.ReplaceAll(m, ".", "-")} {
			if strings.HasPrefix(cand, e.prefix) && len(e.prefix) > bestLen {
				best, rest, bestLen = e.price, cand[len(e.prefix):], len(e.prefix)
			}
		}
	}
	return best, rest, bestLen >= 0
}
