package egress

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/planexhq/planex/internal/usage"
)

// Meter totals the tokens of the model calls a Gateway forwarded, as the
// provider's own answers count them, per model (as the answers name it;
// "" when none did). The agent's report of its own usage is a claim a
// contained program can make zero; the meter is what planex's key paid.
type Meter struct {
	mu      sync.Mutex
	byModel map[string]usage.Usage
	// geo says the answer to a call naming no region named the region
	// it ran in (global too): calls naming none run in the same one
	// (regionKnown).
	geo bool
}

// maxMeterModels bounds the models a Meter keeps apart, and
// maxMeterModel the length of a name it keeps: a Gemini call's model is
// its path's, the program's choice.
const (
	maxMeterModels = 32
	maxMeterModel  = 128
)

// OtherModels is the name a Meter counts calls under once it keeps
// maxMeterModels models apart, or for a longer name: which models they
// were is unknown, so they are priced at the provider's dearest.
const OtherModels = "\x00other models"

// Add counts one call's tokens under model; past maxMeterModels models
// (or with a longer name) under OtherModels (with its marks, a tier's
// and LongPrompt, kept).
func (m *Meter) Add(model string, u usage.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byModel == nil {
		m.byModel = map[string]usage.Usage{}
	}
	base, marks := splitMarks(model)
	if _, ok := m.byModel[model]; len(base) > maxMeterModel || strings.ContainsRune(base, 0) || !ok && len(m.byModel) >= maxMeterModels {
		model = OtherModels + marks
	}
	m.byModel[model] = m.byModel[model].Add(u.Bounded()).Bounded()
}

// LongPrompt marks, after its model's name, the tokens of the calls
// whose prompt held more than LongPromptTokens: above that Anthropic's
// long-context models, Gemini's Pro models and OpenAI's newest bill
// twice the input and 1.5 times the output price for the whole call.
// The gateway marks every model's, not knowing which do.
const (
	LongPrompt       = " (prompt over 200K tokens)"
	LongPromptTokens = 200_000
)

// PriorityTier marks, after its model's name (and before LongPrompt), the
// tokens of the calls whose answer says they ran in the provider's
// priority tier (OpenAI's priority processing, Anthropic's Priority
// Tier), which bills about twice the list price; PremiumTier those of a
// tier billed above the list price by an amount the meter does not know
// (OpenAI's scale and ultrafast tiers, a tier named later), priced as
// the dearest premium known, Anthropic's fast mode at six times the list
// price. A call need not ask for such a tier to run in it: a project's
// or organisation's default applies to a call that asks for none (or
// "auto"), and only the answer tells.
const (
	PriorityTier = " (priority tier)"
	PremiumTier  = " (premium tier)"
)

// tierMark is the mark an answer's service tier puts on its tokens
// (PriorityTier, PremiumTier; "" for a tier billed at most at the list
// price, or none named).
func tierMark(tier string) string {
	switch fold(tier) {
	case "", "auto", "default", "standard", "standardonly", "flex", "batch":
		return ""
	case "priority":
		return PriorityTier
	}
	return PremiumTier
}

// choseTier says whether an answer's service tier names the tier the
// call ran in: "auto" (and an empty one) is the request's own value,
// which OpenAI's response.created echoes before the provider has chosen.
func choseTier(tier string) bool {
	t := fold(tier)
	return t != "" && t != "auto"
}

// dearerMark is the dearer of two tier marks.
func dearerMark(a, b string) string {
	if a == PremiumTier || b == PremiumTier {
		return PremiumTier
	}
	return cmp.Or(a, b)
}

// RegionalInference marks, after a tier's mark, the tokens of the calls
// whose answer says they ran in one region (an Anthropic usage's
// inference_geo but global), which bills 1.1 times the list price: an
// organisation's or workspace's default_inference_geo applies to a call
// that names none.
const RegionalInference = " (regional inference)"

// geoMark is the mark an Anthropic usage's inference_geo puts on its
// tokens: RegionalInference for a region, "" for global or none.
func geoMark(geo string) string {
	switch fold(geo) {
	case "", "global", "notavailable":
		return ""
	}
	return RegionalInference
}

// tellsRegion says whether an Anthropic usage's inference_geo tells
// the region a call naming none ran in, and so the region the key's
// other such calls run in (Meter.sawRegion): any but none and
// not_available, which a model that runs in no region (one before Opus
// 4.6) answers whatever the workspace's default, which a newer model's
// calls still run in.
func tellsRegion(geo string) bool {
	return geo != "" && fold(geo) != "notavailable"
}

// TierMarks is the marks of the tier and region a name the meter counts
// under carries (PriorityTier or PremiumTier, then RegionalInference; ""
// for none): what an answer said the key's calls run in, which later
// calls asking for no tier run in too.
func TierMarks(name string) string {
	_, marks := splitMarks(name)
	return strings.TrimSuffix(marks, LongPrompt)
}

// seenMarks is the dearest tier's mark and the region's mark (TierMarks)
// of the names counted so far: what the key's calls run in when they
// ask for nothing, by what their answers said.
func (m *Meter) seenMarks() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	tier, geo := "", ""
	for name := range m.byModel {
		t, regional := strings.CutSuffix(TierMarks(name), RegionalInference)
		tier = dearerMark(tier, t)
		if regional {
			geo = RegionalInference
		}
	}
	return tier + geo
}

// sawRegion notes that the answer to a call naming no region named the
// region it ran in.
func (m *Meter) sawRegion() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.geo = true
}

// regionKnown says whether the answer to a call naming no region,
// counted on m (not nil), named the region it ran in.
func (m *Meter) regionKnown() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.geo
}

// splitMarks splits a name the meter counts under into its model and
// its marks (a tier's, RegionalInference, then LongPrompt), as
// meterCall put them.
func splitMarks(model string) (base, marks string) {
	base = model
	for _, m := range []string{LongPrompt, RegionalInference, PriorityTier, PremiumTier} {
		if b, ok := strings.CutSuffix(base, m); ok {
			base, marks = b, m+marks
		}
	}
	return base, marks
}

// Totals returns a copy of the tokens counted so far, per model.
func (m *Meter) Totals() map[string]usage.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.byModel)
}

// wireUsage is the usage object of any of the three providers' answers
// (the names do not overlap): Anthropic's Messages, OpenAI's Responses
// and Gemini's usageMetadata.
type wireUsage struct {
	InputTokens   int64 `json:"input_tokens"`
	OutputTokens  int64 `json:"output_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	// CacheByTTL splits CacheCreation by how long the cache is kept:
	// Anthropic bills a one-hour write twice the input price, a
	// five-minute one 1.25 times it.
	CacheByTTL cacheByTTL `json:"cache_creation"`
	// ServerToolUse counts an Anthropic answer's server tool calls,
	// billed per call on top of the tokens.
	ServerToolUse struct {
		WebSearch int64 `json:"web_search_requests"`
	} `json:"server_tool_use"`
	// ServiceTier is the tier an Anthropic answer ran in (tierMark),
	// Speed its speed (fast mode bills six times the list price) and
	// InferenceGeo where it ran (geoMark).
	ServiceTier  string `json:"service_tier"`
	Speed        string `json:"speed"`
	InferenceGeo string `json:"inference_geo"`
	InputDetails struct {
		Cached int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	Prompt     int64 `json:"promptTokenCount"`
	Candidates int64 `json:"candidatesTokenCount"`
	Thoughts   int64 `json:"thoughtsTokenCount"`
	ToolPrompt int64 `json:"toolUsePromptTokenCount"`
	Cached     int64 `json:"cachedContentTokenCount"`
	// Iterations are the parts of an Anthropic answer that ran as calls
	// of their own on the provider's side, each billed: its "message"
	// iterations are the ones the counts above add up; the others (an
	// advisor tool's calls of another model, a context compaction) are
	// billed on top of them, each under its own model.
	Iterations []wireIteration `json:"iterations"`
}

// wireIteration is one entry of an Anthropic usage's iterations.
type wireIteration struct {
	Type          string     `json:"type"`
	Model         string     `json:"model"`
	InputTokens   int64      `json:"input_tokens"`
	OutputTokens  int64      `json:"output_tokens"`
	CacheCreation int64      `json:"cache_creation_input_tokens"`
	CacheRead     int64      `json:"cache_read_input_tokens"`
	CacheByTTL    cacheByTTL `json:"cache_creation"`
}

// cacheByTTL is an Anthropic usage's cache_creation object.
type cacheByTTL struct {
	OneHour int64 `json:"ephemeral_1h_input_tokens"`
}

// cacheWrites is what an Anthropic usage's cache writes count as: usage
// has one rate for cache writes, the five-minute one (1.25 times the
// input price on every Claude row), so each one-hour write (twice the
// input price) counts as 1.6 five-minute writes, rounded up. The token
// counts overstate such writes by that much; the cost is what was
// billed. A one-hour count above the total is taken as the total.
func cacheWrites(total, oneHour int64) int64 {
	total = min(max(total, 0), usage.MaxTokens)
	oneHour = min(max(oneHour, 0), total)
	return total + (3*oneHour+4)/5
}

// maxIterationModels bounds the models one answer's iterations are kept
// apart under; the others count under OtherModels (priced as the
// provider's dearest: they may be dearer than the answer's own model).
const maxIterationModels = 4

// beyond sums, per model ("" for the answer's own, OtherModels past
// maxIterationModels), the iterations the usage's counts leave out:
// every kind but "message".
func (w wireUsage) beyond() map[string]usage.Usage {
	var out map[string]usage.Usage
	for _, it := range w.Iterations {
		out = it.addTo(out)
	}
	return out
}

// addTo adds an iteration to out (beyond's sums) unless it is of the
// "message" kind, returning out (made when nil).
func (it wireIteration) addTo(out map[string]usage.Usage) map[string]usage.Usage {
	if it.Type == "message" {
		return out
	}
	if out == nil {
		out = map[string]usage.Usage{}
	}
	m := it.Model
	if _, ok := out[m]; !ok && len(out) >= maxIterationModels || len(m) > maxMeterModel {
		m = OtherModels
	}
	u := wireUsage{InputTokens: it.InputTokens, OutputTokens: it.OutputTokens, CacheCreation: it.CacheCreation, CacheRead: it.CacheRead,
		CacheByTTL: it.CacheByTTL}.tokens(ProviderAnthropic)
	out[m] = out[m].Add(u.Bounded()).Bounded()
	return out
}

// namesTier says whether an Anthropic usage names what it ran in: a
// tier, a speed or a region.
func (w wireUsage) namesTier() bool {
	return choseTier(w.ServiceTier) || w.Speed != "" || w.InferenceGeo != ""
}

// tokens reads a provider's usage object as planex counts usage: every
// prompt token is input, cached or not (as the agents' own reports are
// read in internal/agent/clis).
func (w wireUsage) tokens(p Provider) usage.Usage {
	switch p {
	case ProviderAnthropic:
		// input_tokens leaves out the cached parts of the prompt.
		write := cacheWrites(w.CacheCreation, w.CacheByTTL.OneHour)
		return usage.Usage{InputTokens: w.InputTokens + write + w.CacheRead, OutputTokens: w.OutputTokens,
			CacheReadTokens: w.CacheRead, CacheWriteTokens: write}
	case ProviderGemini:
		return usage.Usage{InputTokens: w.Prompt + w.ToolPrompt, OutputTokens: w.Candidates + w.Thoughts, CacheReadTokens: w.Cached}
	}
	return usage.Usage{InputTokens: w.InputTokens, OutputTokens: w.OutputTokens, CacheReadTokens: w.InputDetails.Cached}
}

// answerUsage gathers the usage objects and model names found in one
// answer. Streams report usage more than once (Anthropic's message_start
// and message_delta, each Gemini chunk), each count running up to its
// total, so each field keeps the largest value seen.
type answerUsage struct {
	p     Provider
	found bool
	u     usage.Usage
	model string
	// beyond is what the answer's iterations billed past u, per model
	// ("" for the answer's own), each field the largest value seen.
	beyond map[string]usage.Usage
	// searches counts the web searches the answer bills per call:
	// Anthropic's server_tool_use (the largest count seen), OpenAI's
	// web_search_call items of the final output list (listed), or of
	// the output_item events, each item told twice (added, done).
	searches, listed, itemEvents int64
	// tier is the mark of the dearest service tier the answer named
	// (tierMark): in its usage (Anthropic) or beside it (OpenAI); geo
	// the mark of a region its usage named (geoMark); named says it named
	// a tier or a region at all (a standard one too).
	tier, geo string
	named     bool
	// geoNamed says the usage named the region the call ran in, global
	// too (tellsRegion).
	geoNamed bool
	// dropped says a usage object was too long to read (skimDropped):
	// what was found is not the whole answer's usage.
	dropped bool
	// iter sums the iterations of the usage object being read, handed
	// over one by one (skimIteration) so that a long list of them takes
	// no memory (beyond's sums).
	iter map[string]usage.Usage
}

// Per-call fees the gateway meters on top of tokens, in US dollars:
// Anthropic's web search ($10 a thousand), OpenAI's ($10 a thousand,
// $25 for the preview tool on models that do not reason: the dearer
// one, as the answer does not say which was billed).
const (
	anthropicSearchFee = 0.01
	openAISearchFee    = 0.025
)

// fee is what the answer's per-call tool uses bill beyond its tokens.
func (a *answerUsage) fee() float64 {
	if a.p == ProviderOpenAI {
		return float64(max(a.listed, (a.itemEvents+1)/2)) * openAISearchFee
	}
	return float64(a.searches) * anthropicSearchFee
}

// take reads one captured value: a usage object, a model name, an
// output item's type, or one iteration of the usage being read.
func (a *answerUsage) take(kind skimKind, raw []byte) {
	switch kind {
	case skimUsage:
		a.takeUsage(raw)
	case skimDropped, skimUsageBegins, skimIteration:
		a.takeIteration(kind, raw)
	default:
		a.takeName(kind, raw)
	}
}

// takeIteration reads the signals of a usage object's iterations: one
// of them (its sum kept in iter until the usage ends), a usage begun
// (iter emptied) or dropped as too long.
func (a *answerUsage) takeIteration(kind skimKind, raw []byte) {
	switch kind {
	case skimDropped:
		a.dropped, a.iter = true, nil
	case skimUsageBegins:
		a.iter = nil
	case skimIteration:
		var it wireIteration
		if json.Unmarshal(raw, &it) == nil {
			a.iter = it.addTo(a.iter)
		}
	}
}

// takeName reads a captured string: a model's name or an output item's
// type.
func (a *answerUsage) takeName(kind skimKind, raw []byte) {
	var m string
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	switch {
	case kind == skimModel && m != "":
		a.model = m
	case kind == skimTier:
		a.tier, a.named = dearerMark(a.tier, tierMark(m)), a.named || choseTier(m)
	case kind == skimListedItem && m == "web_search_call":
		a.listed = min(a.listed+1, usage.MaxTokens)
	case kind == skimEventItem && m == "web_search_call":
		a.itemEvents = min(a.itemEvents+1, usage.MaxTokens)
	}
}

// takeUsage reads a captured usage object, its iterations (handed over
// before it, one by one) with it.
func (a *answerUsage) takeUsage(raw []byte) {
	var w wireUsage
	if json.Unmarshal(raw, &w) != nil {
		return
	}
	u := w.tokens(a.p).Bounded()
	a.found = true
	a.u = largest(a.u, u)
	a.tier, a.named = dearerMark(a.tier, tierMark(w.ServiceTier)), a.named || w.namesTier()
	if fold(w.Speed) != "" && fold(w.Speed) != "standard" {
		a.tier = PremiumTier
	}
	a.geo = cmp.Or(a.geo, geoMark(w.InferenceGeo))
	a.geoNamed = a.geoNamed || tellsRegion(w.InferenceGeo)
	a.searches = max(a.searches, min(w.ServerToolUse.WebSearch, usage.MaxTokens))
	if a.p != ProviderAnthropic {
		return
	}
	// A stream's records each count the iterations so far: each model
	// keeps its largest count. The models one record names past those
	// already kept count under OtherModels, added up first.
	rec := map[string]usage.Usage{}
	iter := w.beyond() // none: each came on its own
	for m, x := range a.iter {
		iter = wireIteration{Model: m}.merge(iter, x)
	}
	a.iter = nil
	for m, x := range iter {
		if _, ok := a.beyond[m]; m != "" && m != OtherModels && !ok && len(a.beyond)+len(rec) >= maxIterationModels {
			if _, inRec := rec[m]; !inRec {
				m = OtherModels
			}
		}
		rec[m] = rec[m].Add(x).Bounded()
	}
	for m, x := range rec {
		if a.beyond == nil {
			a.beyond = map[string]usage.Usage{}
		}
		a.beyond[m] = largest(a.beyond[m], x)
	}
}

// merge adds x, the sum of iterations of model it.Model, to out as
// addTo adds one.
func (it wireIteration) merge(out map[string]usage.Usage, x usage.Usage) map[string]usage.Usage {
	if out == nil {
		out = map[string]usage.Usage{}
	}
	m := it.Model
	if _, ok := out[m]; !ok && len(out) >= maxIterationModels {
		m = OtherModels
	}
	out[m] = out[m].Add(x).Bounded()
	return out
}

// largest is, field by field, the larger of two counts of the same
// tokens (a stream's running counts); no cost is kept here.
func largest(a, b usage.Usage) usage.Usage {
	return usage.Usage{InputTokens: max(a.InputTokens, b.InputTokens), OutputTokens: max(a.OutputTokens, b.OutputTokens),
		CacheReadTokens: max(a.CacheReadTokens, b.CacheReadTokens), CacheWriteTokens: max(a.CacheWriteTokens, b.CacheWriteTokens)}
}

// answerScan reads an answer as it streams past the gateway, server-sent
// events or one JSON document (or a JSON array of them: Gemini's stream
// without alt=sse), and hands the usage objects and model names in it to
// an answerUsage. It keeps no more than a few bytes of a line and one
// captured value of at most maxCapture bytes, whatever the answer holds.
type answerScan struct {
	sse  bool
	json skim
	// SSE line state: the field name read so far (bounded), whether the
	// line is a data line whose value goes to the JSON reader, and
	// whether the last byte ended a line with a carriage return.
	field     []byte
	inValue   bool
	data      bool
	skipSpace bool
	lineEmpty bool
	cr        bool
	bytes     int64
}

func newAnswerScan(sse bool, a *answerUsage) *answerScan {
	s := &answerScan{sse: sse, lineEmpty: true}
	s.json.found = a.take
	return s
}

// Write implements io.Writer; it never fails.
func (s *answerScan) Write(p []byte) (int, error) {
	s.bytes += int64(len(p))
	if !s.sse {
		for _, c := range p {
			s.json.byte(c)
		}
		return len(p), nil
	}
	for _, c := range p {
		s.sseByte(c)
	}
	return len(p), nil
}

// sseByte takes one byte of an event stream: lines end with LF, CR or
// CRLF; an empty line ends an event; data lines go to the JSON reader
// (their line ends are JSON white space) and other fields are skipped.
func (s *answerScan) sseByte(c byte) {
	if c == '\n' && s.cr {
		s.cr = false
		return
	}
	s.cr = c == '\r'
	if c == '\n' || c == '\r' {
		if s.lineEmpty {
			s.json.reset() // the event ends
		} else if s.data {
			s.json.byte('\n')
		}
		s.field, s.inValue, s.data, s.skipSpace, s.lineEmpty = s.field[:0], false, false, false, true
		return
	}
	s.lineEmpty = false
	switch {
	case s.inValue && s.skipSpace && c == ' ':
		s.skipSpace = false
	case s.inValue:
		s.skipSpace = false
		if s.data {
			s.json.byte(c)
		}
	case c == ':':
		s.inValue, s.skipSpace, s.data = true, true, string(s.field) == "data"
	case len(s.field) < 8:
		s.field = append(s.field, c)
	default:
		s.field = append(s.field[:0], '-') // a long name is no field we read
	}
}

// skimKind says what a captured value is.
type skimKind int

const (
	skimUsage skimKind = iota
	skimModel
	// skimListedItem is the type of an item of an OpenAI answer's output
	// list, skimEventItem of an output_item event's item.
	skimListedItem
	skimEventItem
	// skimDropped reports a usage object longer than maxCapture, which
	// was not read: the answer's usage is not known in full.
	skimDropped
	// skimUsageBegins reports that a usage object begins, and
	// skimIteration one element of its iterations list, handed over
	// alone and left out of the usage object's capture.
	skimUsageBegins
	skimIteration
	// skimTier is the service tier an OpenAI answer names beside its
	// usage.
	skimTier
)

const (
	// maxCapture bounds a captured value (a usage object is a few hundred
	// bytes, and some 250 more for each of its iterations: an advisor
	// called a few hundred times in one answer still fits); a longer one
	// is dropped.
	maxCapture = 256 << 10
	// skimLevels is how many levels of member names the reader keeps;
	// what it looks for lies at most two objects deep.
	skimLevels = 4
	// maxSkimName bounds a member name the reader keeps.
	maxSkimName = 32
)

// skim reads JSON byte by byte, without holding any string or value but
// the ones it captures, and captures the usage objects and model names
// where the providers put them: at the top of a document (Anthropic's
// and OpenAI's usage and model, Gemini's usageMetadata and
// modelVersion) or below the message or response member of an event
// (Anthropic's message_start, OpenAI's response.completed). Arrays do
// not count as levels, so each element of a top-level array is a
// document. A model's own text and tool arguments lie deeper or inside
// strings, so nothing the model writes is read as usage.
type skim struct {
	found func(skimKind, []byte)
	// open is the kind of each open level ('{' or '['); names the member
	// being read at each object level, for the first skimLevels objects.
	open    []byte
	names   [skimLevels]string
	objects int // open objects
	deep    int // levels beyond maxNesting, only counted
	inStr   bool
	esc     bool
	wantKey bool
	key     []byte
	keyLong bool
	// capture is the value being captured, of kind kind, which ends when
	// the levels are back to capLevel (an object) or its string closes.
	capturing bool
	capture   []byte
	kind      skimKind
	capLevel  int
	capOver   bool
	// iterArr is the level of the captured usage object's iterations
	// array (0: none open); inElem says one of its elements is being
	// captured, from elemAt in capture.
	iterArr int
	inElem  bool
	elemAt  int
}

func (s *skim) reset() {
	found, key, capture := s.found, s.key[:0], s.capture[:0]
	*s = skim{found: found, key: key, capture: capture, open: s.open[:0]}
}

func (s *skim) byte(c byte) {
	if s.capturing {
		if len(s.capture) < maxCapture {
			s.capture = append(s.capture, c)
		} else {
			s.capOver = true
		}
	}
	if s.inStr {
		s.strByte(c)
		return
	}
	switch c {
	case '"':
		s.inStr, s.esc = true, false
		if s.wantKey {
			s.key, s.keyLong = s.key[:0], false
		} else {
			s.valueStart(c)
		}
	case '{', '[':
		s.valueStart(c)
		s.push(c)
		s.iterationOpens(c)
	case '}', ']':
		s.pop()
		s.iterationCloses()
	case ',':
		s.wantKey = len(s.open) > 0 && s.open[len(s.open)-1] == '{' && s.deep == 0
		if s.capturing && s.iterArr > 0 && len(s.open) == s.iterArr && !s.inElem &&
			bytes.HasSuffix(bytes.TrimRight(s.capture[:len(s.capture)-1], " \t\r\n"), []byte("[")) {
			s.capture = s.capture[:len(s.capture)-1] // after an element handed over alone
		}
	}
}

// iterationOpens sees c open a level: the iterations array of the usage
// object being captured, or one of its elements, which is captured on
// its own (iterationCloses), so that a usage with thousands of
// iterations is read whole without holding them all.
func (s *skim) iterationOpens(c byte) {
	if !s.capturing || s.kind != skimUsage || s.deep > 0 {
		return
	}
	switch n := len(s.open); {
	case c == '[' && n == s.capLevel+2 && s.objects <= skimLevels && s.names[s.objects-1] == "iterations":
		s.iterArr = n
	case c == '{' && s.iterArr > 0 && n == s.iterArr+1:
		s.inElem, s.elemAt = true, len(s.capture)-1
	}
}

// iterationCloses sees a level close: an element of the iterations
// array is handed over and cut out of the capture.
func (s *skim) iterationCloses() {
	switch n := len(s.open); {
	case s.inElem && n == s.iterArr:
		s.inElem = false
		if !s.capOver && s.found != nil {
			s.found(skimIteration, s.capture[s.elemAt:])
		}
		s.capture = bytes.TrimRight(s.capture[:s.elemAt], " \t\r\n")
		s.capture = bytes.TrimSuffix(s.capture, []byte(",")) // the comma before it, if any
	case s.iterArr > 0 && n < s.iterArr:
		s.iterArr = 0
	}
}

// strByte takes a byte inside a string: a member name is kept (bounded);
// a captured model name ends with its closing quote.
func (s *skim) strByte(c byte) {
	switch {
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		s.inStr = false
		if s.wantKey {
			s.wantKey = false
			s.name()
			return
		}
		if s.capturing && s.kind != skimUsage {
			s.finish()
		}
		return
	}
	if s.wantKey {
		if len(s.key) < maxSkimName {
			s.key = append(s.key, c)
		} else {
			s.keyLong = true
		}
	}
}

// name sets the member name of the innermost object.
func (s *skim) name() {
	if s.objects == 0 || s.objects > skimLevels || s.deep > 0 {
		return
	}
	n := string(s.key)
	if s.keyLong {
		n = ""
	}
	s.names[s.objects-1] = n
}

// valueStart sees a value begin ('{', '[' or '"') and starts capturing
// it when it lies where a provider puts usage or a model name.
func (s *skim) valueStart(c byte) {
	if s.capturing || s.deep > 0 || len(s.open) == 0 || s.open[len(s.open)-1] != '{' {
		return
	}
	name, item, ok := s.place()
	if !ok {
		return
	}
	switch {
	case item != skimUsage:
		if c != '"' || name != "type" {
			return
		}
		s.kind = item
	case c == '{' && (name == "usage" || name == "usageMetadata"):
		s.kind = skimUsage
	case c == '"' && (name == "model" || name == "modelVersion"):
		s.kind = skimModel
	case c == '"' && name == "service_tier":
		s.kind = skimTier
	default:
		return
	}
	s.capturing, s.capOver, s.capLevel = true, false, len(s.open)
	s.iterArr, s.inElem = 0, false
	s.capture = append(s.capture[:0], c)
	if s.kind == skimUsage && s.found != nil {
		s.found(skimUsageBegins, nil)
	}
}

// place is the member whose value begins: its name, and whether it
// lies in an OpenAI output item (skimListedItem, skimEventItem) or where
// usage and model names lie (skimUsage); not ok anywhere else.
func (s *skim) place() (name string, item skimKind, ok bool) {
	switch {
	case s.objects == 1:
		return s.names[0], skimUsage, true
	case s.objects == 2 && (s.names[0] == "message" || s.names[0] == "response"):
		return s.names[1], skimUsage, true
	case s.objects == 2 && s.names[0] == "output":
		return s.names[1], skimListedItem, true
	case s.objects == 2 && s.names[0] == "item":
		return s.names[1], skimEventItem, true
	case s.objects == 3 && s.names[0] == "response" && s.names[1] == "output":
		return s.names[2], skimListedItem, true
	}
	return "", skimUsage, false
}

func (s *skim) push(c byte) {
	if len(s.open) >= maxNesting {
		s.deep++
		return
	}
	s.open = append(s.open, c)
	if c == '{' {
		s.objects++
		if s.objects <= skimLevels {
			s.names[s.objects-1] = ""
		}
	}
	s.wantKey = c == '{'
}

func (s *skim) pop() {
	s.wantKey = false
	if s.deep > 0 {
		s.deep--
		return
	}
	if len(s.open) == 0 {
		return // not JSON; nothing below is read as usage
	}
	if s.open[len(s.open)-1] == '{' {
		s.objects--
	}
	s.open = s.open[:len(s.open)-1]
	if s.capturing && s.kind == skimUsage && len(s.open) == s.capLevel {
		s.finish()
	}
}

// finish hands a captured value on, unless it was cut short; a usage
// object cut short is reported as dropped.
func (s *skim) finish() {
	s.capturing = false
	switch {
	case s.found == nil:
	case !s.capOver:
		s.found(s.kind, s.capture)
	case s.kind == skimUsage:
		s.found(skimDropped, nil)
	}
	s.capture = s.capture[:0]
}

// billedCall says whether an allowed call (rel, below the base path) is
// one the provider bills tokens for: not counting tokens, not listing
// models.
func billedCall(rel string) bool {
	return !strings.HasSuffix(rel, "/count_tokens") && !strings.HasSuffix(rel, ":countTokens") && rel != "/models"
}

// dialFailed says whether a call failed before any byte of it left:
// the provider saw nothing to bill.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// isEventStream says whether an answer is server-sent events.
func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// meterRead is what the gateway read of an answer.
type meterRead struct {
	usage *answerUsage
	bytes int64
	// chose says the call named the region it runs in: its answer's
	// region tells nothing of where calls naming none run.
	chose bool
}

// meterCall counts one billed call on g.Meter: the usage the provider's
// answer reports, under the model it names, else the one the call asked
// for (asked: a Gemini call's path names it, the others' body). Where that cannot be read in full (the answer names no
// usage or one too long to read, its copy to the client was cut, or the call failed on the way)
// each count is at least a floor no real call stays under (floor): the request's
// bytes as input tokens (and the prompt as reckoned where no usage was
// read) and the answer's bytes as output tokens, and for a call cut
// before its answer's end (by the step's end, the provider, the
// network), the output it may be billed for (floor.cut: its output
// limit as the gateway held it, 0 when none was set), as the provider
// may have generated it unseen. Before, only a call the step's end cut
// counted its limit: a stream the provider's side cut after long hidden
// thinking counted the bytes it carried. An error answer without usage
// is not billed by the providers.
func (g *Gateway) meterCall(asked string, floor callFloor, resp *http.Response, read *meterRead, whole bool) {
	if g.Meter == nil {
		return
	}
	var u usage.Usage
	var model string
	if read != nil {
		u, model = read.usage.u, read.usage.model
	}
	if model == "" {
		model = asked
	}
	found := read != nil && (read.usage.found || read.usage.dropped)
	switch {
	case found && whole && !read.usage.dropped:
	case resp != nil && resp.StatusCode >= 400 && !found:
		return
	default:
		var out int64
		if read != nil {
			out = read.bytes
		}
		u.InputTokens, u.OutputTokens = max(u.InputTokens, floor.bytes), max(u.OutputTokens, out, floor.cut)
		if !found {
			u.InputTokens = max(u.InputTokens, floor.prompt)
		}
	}
	var tier string
	if read != nil {
		u.CostUSD, tier = read.usage.fee(), read.usage.tier+read.usage.geo
	}
	if read == nil || !read.usage.named {
		// An answer cut before it named its tier, or without one, ran
		// in the tier the key's other calls ran in.
		tier = g.unnamedMarks(read)
	}
	tier = g.endpointMarks(tier)
	g.Meter.Add(marked(model, tier, u), u)
	read.noteRegion(g.Meter)
	if read != nil {
		for m, x := range read.usage.beyond {
			// The parts run beside the answer's own model (an advisor's
			// consults) are taken to run in its tier.
			g.Meter.Add(marked(cmp.Or(m, model), tier, x), x)
		}
	}
}

// unnamedMarks is the marks of a call whose answer (read, nil for none)
// named no tier or region: the dearest tier and the region earlier
// answers named, and one region where the call may run in the key's
// default region, which no answer has told yet (defaultRegion).
func (g *Gateway) unnamedMarks(read *meterRead) string {
	marks := g.Meter.seenMarks()
	if !strings.HasSuffix(marks, RegionalInference) && g.defaultRegion(read != nil && read.chose) {
		marks += RegionalInference
	}
	return marks
}

// endpointMarks is marks (a tier's and a region's) with the region's
// where the upstream runs every call in one region (regionalEndpoint).
func (g *Gateway) endpointMarks(marks string) string {
	if g.regionalEndpoint() && !strings.HasSuffix(marks, RegionalInference) {
		marks += RegionalInference
	}
	return marks
}

// noteRegion notes on m that the key's calls run in a region read
// (nil: none read) named, where the call named none itself.
func (read *meterRead) noteRegion(m *Meter) {
	if read != nil && read.usage.geoNamed && !read.chose {
		m.sawRegion()
	}
}

// marked is the name the meter counts u, tokens of model, under: with
// the mark of the tier they ran in and LongPrompt after a long prompt.
func marked(model, tier string, u usage.Usage) string {
	model += tier
	if u.InputTokens > LongPromptTokens {
		model += LongPrompt
	}
	return model
}

// inflight counts the calls a gateway is serving, so that stopping it
// can wait for them; once closed it admits none.
type inflight struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   *sync.Cond
}

func (f *inflight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.n++
	return true
}

func (f *inflight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.idle != nil {
		f.idle.Broadcast()
	}
}

func (f *inflight) closeAndWait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.idle == nil {
		f.idle = sync.NewCond(&f.mu)
	}
	for f.n > 0 {
		f.idle.Wait()
	}
}
