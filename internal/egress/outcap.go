package egress

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// bodyShape is where a model call's body names its model and limits its
// output, by byte offsets into the body, so the gateway can lower the
// limit to what the step's budget has left (capBody).
type bodyShape struct {
	// model is the top-level model member's value (Anthropic, OpenAI).
	model string
	// limits are the output limit's values (Anthropic's max_tokens,
	// OpenAI's max_output_tokens, Gemini's generationConfig
	// .maxOutputTokens; every copy of a member given twice), thinking
	// Anthropic's thinking.budget_tokens, which must stay below it.
	limits, thinking []span
	// top is the offset just past the body's opening brace, gen past
	// generationConfig's (0: none); topEmpty and genEmpty say whether
	// those objects have no member.
	top, gen           int64
	topEmpty, genEmpty bool
	// models counts the top-level model members.
	models int
	// tools are the call's Anthropic server tools that loop within the
	// call (advisors, web search); toolCalls an OpenAI call's
	// max_tool_calls values.
	tools     []serverTool
	toolCalls []span
	// builtinTools counts an OpenAI call's tools the provider runs
	// itself (any type but function and custom, which the caller runs):
	// only they loop within the call, and max_tool_calls bounds only
	// them. A call without one gets no max_tool_calls: an
	// OpenAI-compatible server behind --base-url that knows no such
	// member may refuse it, and the function tools it serves end the
	// call each time.
	builtinTools int
	// stored says the call's prompt holds what the provider keeps (an
	// OpenAI previous_response_id or conversation, a file_id anywhere),
	// or a document given inline (a PDF, OpenAI's file_data) whose text
	// the provider reads out: it may be far longer than the body.
	stored bool
	// compacts says the call has the provider compact the conversation
	// on its side (noteCompaction).
	compacts bool
	// extra is the tokens the body's strings may hold past a token per
	// three of their bytes (extraTokens): promptTokens.
	extra int64
	// tileExtra is the tokens the body's images may bill past extra's
	// reckoning to a model billing them by gpt-4o-mini's tiles:
	// promptTokensTo.
	tileExtra int64
	// nanoExtra is the tokens the body's images may bill past extra's
	// reckoning to a model billing them at OpenAI's nano rate
	// (nanoBilled), up to nanoImageTokens each: promptTokensTo.
	nanoExtra int64
	// tiers are an OpenAI or Anthropic call's top-level service_tier
	// values, each with the colon before it (n 1: "auto", "" or null,
	// which leave the tier to the key's project or organisation, and
	// for Anthropic any but "standard_only"; 0: another). pinTier, when set (Gateway.pinnedTier), replaces those
	// and is inserted where the call named none.
	tiers   []span
	pinTier string
	// geos counts an Anthropic call's top-level inference_geo members
	// but null ones, regional those naming a region (not "global"), and
	// nullGeo says one was null: the call runs anywhere (at the list
	// price) only where it named "global" in every copy (namesGlobal).
	geos, regional int
	nullGeo        bool
	// openAISearches counts an OpenAI call's web search tools.
	openAISearches int
	// searches is how many web searches the gateway lets the call make
	// (an OpenAI call's max_tool_calls, each Anthropic search tool's
	// max_uses): maxToolCalls, or fewer where the budget pays for fewer
	// (searchLimits); 0 is maxToolCalls.
	searches int64
}

// searchTools counts the web search tools of a call.
func (sh bodyShape) searchTools() int64 {
	n := int64(sh.openAISearches)
	for _, t := range sh.tools {
		if t.kind == toolSearch {
			n++
		}
	}
	return n
}

// toolKind is what an Anthropic tools entry runs on the provider's side,
// within the call.
type toolKind int

const (
	// toolOther is any other tool: the program's own, run by the
	// caller, or one the body check refuses.
	toolOther toolKind = iota
	// toolSearch is a web search: each search has the model sample
	// again, rereading the whole conversation (billed as input each time).
	toolSearch
	// toolAdvisor is an advisor: each consult runs another model (a
	// dearer one, as a rule) on the whole conversation, outside the
	// call's max_tokens, up to the advisor's own max_tokens or its
	// model's maximum output.
	toolAdvisor
)

// serverLoops is how many times the provider's server-side loop lets
// the model sample within one Anthropic call before it ends the call
// with pause_turn (the documented default of 10): what a tool search,
// which nothing in the request bounds, may make the call read its
// prompt again at most.
const serverLoops = 10

// lookups says whether a call has an Anthropic tool search (a tool's
// lookup).
func (sh bodyShape) lookups() bool {
	return slices.ContainsFunc(sh.tools, func(t serverTool) bool { return t.lookup })
}

// isLookup says whether an Anthropic tool's type names a tool search
// (tool_search_tool_regex, tool_search_tool_bm25): each search has the
// model sample again, rereading the conversation with the tools it
// loaded, and the tool takes no max_uses, so only the provider's own
// limit on the samplings of one call (serverLoops) ends it.
func isLookup(typ string) bool {
	return strings.HasPrefix(fold(typ), "toolsearch")
}

// kindOf is the kind of an Anthropic tool of type typ.
func kindOf(typ string) toolKind {
	switch t := fold(typ); {
	case strings.HasPrefix(t, "advisor"):
		return toolAdvisor
	case strings.HasPrefix(t, "websearch"):
		return toolSearch
	}
	return toolOther
}

// serverTool is an entry of an Anthropic call's tools list, by byte
// offsets into the body: start is just past its opening brace (empty: it
// has no member), uses its max_uses values and outs its max_tokens ones.
// Without max_uses such a tool runs as often as the model asks within
// the call.
type serverTool struct {
	start      int64
	empty      bool
	kind       toolKind
	uses, outs []span
	// lookup says a type of the tool named a tool search (isLookup): a
	// tool whose type is given twice keeps the bounds of both.
	lookup bool
	// model is an advisor's model; limit the output its consult is held
	// to (0: the call's own bound), which the gateway asks of its Cap
	// for that model (advisorLimits).
	model string
	limit int64
}

// advisorUses is how many advisor calls the gateway lets one model call
// make under a budget: Claude Code consults its advisor about once a
// turn, and each consult reads the whole conversation again.
const advisorUses = 1

// maxToolCalls is how many calls of the provider's own tools (web
// searches: Anthropic's max_uses, OpenAI's max_tool_calls) the gateway
// lets one model call make under a budget, each having the model read
// the whole conversation again: Claude Code asks for at most 8 searches
// a call itself. Without it an OpenAI call searched as often as the
// model liked, its prompt billed again each time.
const maxToolCalls = 8

// span is a value of the body: its bytes [start, end) and, for a whole
// number, the number (else -1: null or anything a provider reads as no
// limit or refuses).
type span struct {
	start, end, n int64
}

// inGenerationConfig says whether the innermost object is a Gemini
// call's top-level generationConfig.
func (w *bodyWalk) inGenerationConfig() bool {
	return w.p == ProviderGemini && len(w.stack) == 2 && w.stack[0].key == "generationconfig" && w.stack[1].obj
}

// note records, in w.shape, a value of the body that names the model or
// limits the output (tok, the value of top's current member). It
// refuses, with ErrUnmetered, what would have the provider read a limit
// other than the one the gateway holds to the budget: a limit (or
// Anthropic thinking budget) given as anything but a number or null (a
// Gemini call's "1000000" is a number to Google's JSON reader, and a
// lax one reads it so too, past a check that lowers numbers only), a
// second model or generationConfig member (the provider reads one, the
// cap the other: a cheap model's rate for a dear one, or a limit set in
// the copy the provider drops), and a generationConfig not an object.
func (w *bodyWalk) note(top *frame, tok json.Token) error {
	if !top.obj {
		return nil
	}
	top0 := len(w.stack) == 1
	if into, what := w.boundSpans(top, top0); into != nil {
		s, ok := w.valueSpan(tok)
		if !ok {
			return fmt.Errorf("%w (%s %v: a number or null only)", ErrUnmetered, what, tok)
		}
		*into = append(*into, s)
		return nil
	}
	switch {
	case top0 && top.key == "model":
		if w.shape.models++; w.shape.models > 1 {
			return fmt.Errorf("%w (the member %q given twice)", ErrUnmetered, "model")
		}
		if v, ok := tok.(string); ok {
			w.shape.model = v
		}
	case top0 && w.p != ProviderGemini && top.key == "servicetier":
		return w.noteTier(tok)
	case top0 && w.p == ProviderGemini && top.key == "generationconfig":
		if w.shape.gen > 0 || tok != json.Delim('{') {
			return fmt.Errorf("%w (generationConfig given twice or not as an object)", ErrUnmetered)
		}
		w.shape.gen, w.shape.genEmpty = w.off, true
	case w.isLimit(top0, top.key):
		s, ok := w.valueSpan(tok)
		if !ok {
			return fmt.Errorf("%w (the output limit %v: a number or null only)", ErrUnmetered, tok)
		}
		if s.n < 1 {
			// 0 (or -0) bounds nothing a provider runs: Anthropic and
			// OpenAI refuse it, Gemini's proto3 field may read it as
			// unset, the model's own limit. It is lowered as null is.
			s.n = -1
		}
		w.shape.limits = append(w.shape.limits, s)
	}
	return nil
}

// noteTier records an OpenAI or Anthropic call's top-level service tier
// (tok, its value) where pinTier may replace it, refusing one given as
// anything but a string or null.
func (w *bodyWalk) noteTier(tok json.Token) error {
	v, ok := tok.(string)
	if !ok && tok != nil {
		return fmt.Errorf("%w (the service tier %v: a string or null only)", ErrUnmetered, tok)
	}
	s := span{start: w.prev, end: w.off}
	if t := fold(v); t == "" || t == "auto" || w.p == ProviderAnthropic && v != "standard_only" {
		s.n = 1 // Anthropic's tiers but standard_only may run at priority
	}
	w.shape.tiers = append(w.shape.tiers, s)
	return nil
}

// noteGeo records an Anthropic call's top-level inference_geo (tok,
// the value of top's current member, if it is one).
func (w *bodyWalk) noteGeo(top *frame, tok json.Token) {
	if w.p != ProviderAnthropic || len(w.stack) != 1 || !top.obj || top.key != "inferencegeo" {
		return
	}
	if tok == nil {
		w.shape.nullGeo = true
		return
	}
	if w.shape.geos++; tok != "global" {
		w.shape.regional++
	}
}

// namesGlobal says whether an Anthropic call asks to run in any
// region, "global" in each copy of its inference_geo: one naming none
// (or null) runs where the key's workspace defaults to, which may be one
// region, billed 1.1 times the list price.
func (sh bodyShape) namesGlobal() bool {
	return sh.geos > 0 && sh.regional == 0 && !sh.nullGeo
}

// boundSpans is where the value of top's current member is recorded
// when it bounds what the call may spend other than its output limit,
// and what it is (for a refusal): an Anthropic thinking budget, an
// Anthropic tool's max_uses or max_tokens, an OpenAI call's
// max_tool_calls. nil: it is none of those.
func (w *bodyWalk) boundSpans(top *frame, top0 bool) (*[]span, string) {
	switch {
	case top.tool != nil && top.key == "maxuses":
		return &top.tool.uses, "a tool's max_uses"
	case top.tool != nil && top.key == "maxtokens":
		return &top.tool.outs, "a tool's max_tokens"
	case top0 && w.p == ProviderOpenAI && top.key == "maxtoolcalls":
		return &w.shape.toolCalls, "max_tool_calls"
	case w.p == ProviderAnthropic && len(w.stack) == 2 && w.stack[0].key == "thinking" && top.key == "budgettokens":
		return &w.shape.thinking, "the thinking budget"
	}
	return nil, ""
}

// isLimit says whether key (folded) is the provider's output limit, in
// the top-level object (top0) or Gemini's generationConfig.
func (w *bodyWalk) isLimit(top0 bool, key string) bool {
	switch w.p {
	case ProviderAnthropic:
		return top0 && key == "maxtokens"
	case ProviderOpenAI:
		return top0 && key == "maxoutputtokens"
	}
	return w.inGenerationConfig() && key == "maxoutputtokens"
}

// valueSpan is the span of a number or null value just taken; other
// values (a string, an object) are left as they are, for the provider
// to refuse.
func (w *bodyWalk) valueSpan(tok json.Token) (span, bool) {
	switch v := tok.(type) {
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			n = -1
		}
		return span{start: w.off - int64(len(v)), end: w.off, n: n}, true
	case nil:
		return span{start: w.off - 4, end: w.off, n: -1}, true
	}
	return span{}, false
}

// edit replaces a body's bytes [at, end) with text (end == at inserts).
type edit struct {
	at, end int64
	text    string
}

// capEdits are the edits that hold a call to limit output tokens: every
// larger (or null) output limit becomes limit, ins (insertedLimit) is
// added where the call set none, and an Anthropic thinking budget not
// below the limit becomes one less. Before, a limit was inserted only
// while the bound was at most 8,192 tokens (the smallest any model
// takes), and above it a call that set none was billed for up to its
// model's own maximum, far past the bound the budget had set aside. The
// provider's own tools that loop within the call are held too (an
// Anthropic server tool's capEdits, an OpenAI call's max_tool_calls).
func capEdits(p Provider, sh bodyShape, limit, ins int64) []edit {
	edits := lowered(sh.limits, limit)
	for _, s := range sh.thinking {
		if s.n < 0 || s.n >= limit {
			edits = append(edits, edit{s.start, s.end, strconv.FormatInt(max(limit-1, 0), 10)})
		}
	}
	searches := cmp.Or(sh.searches, maxToolCalls)
	for _, a := range sh.tools {
		edits = append(edits, a.capEdits(limit, searches)...)
	}
	var top []string // members added at the top of the body
	if sh.pinTier != "" {
		for _, s := range sh.tiers {
			if s.n == 1 {
				edits = append(edits, edit{s.start, s.end, `:"` + sh.pinTier + `"`})
			}
		}
		if len(sh.tiers) == 0 {
			top = append(top, `"service_tier":"`+sh.pinTier+`"`)
		}
	}
	if p == ProviderOpenAI {
		edits = append(edits, lowered(sh.toolCalls, searches)...)
		if len(sh.toolCalls) == 0 && sh.builtinTools > 0 {
			top = append(top, `"max_tool_calls":`+strconv.FormatInt(searches, 10))
		}
	}
	if len(sh.limits) == 0 {
		in := strconv.FormatInt(ins, 10)
		switch {
		case p == ProviderOpenAI:
			top = append(top, `"max_output_tokens":`+in)
		case p == ProviderGemini && sh.gen > 0:
			edits = append(edits, inserted(sh.gen, sh.genEmpty, []string{`"maxOutputTokens":` + in}))
		case p == ProviderGemini:
			top = append(top, `"generationConfig":{"maxOutputTokens":`+in+`}`)
		default:
			top = append(top, `"max_tokens":`+in)
		}
	}
	if len(top) > 0 {
		edits = append(edits, inserted(sh.top, sh.topEmpty, top))
	}
	slices.SortFunc(edits, func(a, b edit) int { return int(a.at - b.at) })
	return edits
}

// capEdits are the edits that hold a server tool to its calls: an
// advisor to advisorUses consults of at most limit output tokens each, a
// web search to searches searches. A larger (or null) max_uses or
// max_tokens is lowered, and either is inserted where the tool set none.
// A limit below the advisor's minimum (1,024) has the provider refuse
// the call, unbilled, as near the end of a budget a thinking budget does.
func (a serverTool) capEdits(limit, searches int64) []edit {
	type bound struct {
		name  string
		spans []span
		most  int64
	}
	bounds := []bound{{"max_uses", a.uses, searches}}
	switch a.kind {
	case toolOther:
		return nil // a tool search alone takes no max_uses: searchLimits reckons serverLoops
	case toolAdvisor:
		if a.limit > 0 {
			limit = a.limit
		}
		bounds = []bound{{"max_uses", a.uses, advisorUses}, {"max_tokens", a.outs, limit}}
	}
	var edits []edit
	var add []string
	for _, m := range bounds {
		edits = append(edits, lowered(m.spans, m.most)...)
		if len(m.spans) == 0 {
			add = append(add, `"`+m.name+`":`+strconv.FormatInt(m.most, 10))
		}
	}
	if len(add) > 0 {
		edits = append(edits, inserted(a.start, a.empty, add))
	}
	return edits
}

// lowered are the edits that make each of spans larger than most (or
// not a whole number) most.
func lowered(spans []span, most int64) []edit {
	var edits []edit
	for _, s := range spans {
		if s.n < 0 || s.n > most {
			edits = append(edits, edit{s.start, s.end, strconv.FormatInt(most, 10)})
		}
	}
	return edits
}

// inserted is the edit that adds members at the start of an object
// (at, just past its brace; empty: it has none yet).
func inserted(at int64, empty bool, members []string) edit {
	text := strings.Join(members, ",")
	if !empty {
		text += ","
	}
	return edit{at, at, text}
}

// boundUnder is the most output a call of this shape may be billed for
// once capEdits held it to limit, ins where it set none: the
// largest of its own limits where each was a whole number within it,
// else limit (a limit lowered); and the output of its advisor tools'
// calls, each held to limit.
func (sh bodyShape) boundUnder(limit, ins int64) int64 {
	advised := int64(0)
	for _, a := range sh.tools {
		if a.kind == toolAdvisor {
			advised += advisorUses * cmp.Or(a.limit, limit)
		}
	}
	if len(sh.limits) == 0 {
		return ins + advised
	}
	most := int64(0)
	for _, s := range sh.limits {
		if s.n < 0 || s.n > limit {
			return limit + advised
		}
		most = max(most, s.n)
	}
	return most + advised
}

// capBody returns f's body (of size bytes) with edits applied, and its
// new size.
func capBody(f io.ReaderAt, size int64, edits []edit) (io.Reader, int64) {
	var parts []io.Reader
	pos, out := int64(0), size
	for _, e := range edits {
		parts = append(parts, io.NewSectionReader(f, pos, e.at-pos), strings.NewReader(e.text))
		out += int64(len(e.text)) - (e.end - e.at)
		pos = e.end
	}
	parts = append(parts, io.NewSectionReader(f, pos, size-pos))
	return io.MultiReader(parts...), out
}

// boundNames are the members the gateway reads to bound or price a call
// (by folded name: its output limit, tool-call and tool-use limits,
// thinking budget, model, service tier, speed, region, background,
// Gemini's generationConfig and candidate count), as the providers spell
// them in snake_case.
var boundNames = map[string]string{
	"maxtokens": "max_tokens", "maxoutputtokens": "max_output_tokens", "maxtoolcalls": "max_tool_calls",
	"maxuses": "max_uses", "budgettokens": "budget_tokens", "model": "model", "servicetier": "service_tier",
	"speed": "speed", "inferencegeo": "inference_geo", "background": "background",
	"generationconfig": "generation_config", "candidatecount": "candidate_count",
}

// readAs says whether a member named name, where the gateway reads the
// members that bound a call (boundsAt), is one the provider reads as the
// gateway does: a bound member (boundNames) only as the provider spells
// it, snake_case, or for Gemini, whose JSON reader takes both, its
// lowerCamelCase form. The gateway folds case and underscores to find
// them, so "Max_Output_Tokens" was taken for the output limit, lowered,
// and no limit inserted; an OpenAI-compatible server behind --base-url
// that ignores members it does not know then ran the call without one.
func readAs(p Provider, name string) bool {
	snake, ok := boundNames[fold(name)]
	if !ok || name == snake {
		return true
	}
	if p != ProviderGemini {
		return false
	}
	camel, up := []byte{}, false
	for i := 0; i < len(snake); i++ {
		switch c := snake[i]; {
		case c == '_':
			up = true
		case up:
			camel, up = append(camel, c-'a'+'A'), false
		default:
			camel = append(camel, c)
		}
	}
	return name == string(camel)
}

// boundsAt says whether the innermost object is one whose members the
// gateway reads to bound or price the call: the body's top, Gemini's
// generationConfig, an Anthropic tools entry and Anthropic's thinking.
func (w *bodyWalk) boundsAt() bool {
	top := w.stack[len(w.stack)-1]
	return len(w.stack) == 1 || w.inGenerationConfig() || top.tool != nil ||
		w.p == ProviderAnthropic && len(w.stack) == 2 && w.stack[0].key == "thinking"
}
