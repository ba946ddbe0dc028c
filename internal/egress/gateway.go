package egress

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/planexhq/planex/internal/usage"
	"golang.org/x/net/netutil"
)

// Provider is a model API whose key a Gateway holds: it decides where the
// key travels in a request and which calls are let through.
type Provider string

// The providers of the named CLIs.
const (
	ProviderAnthropic Provider = "anthropic" // Claude Code
	ProviderOpenAI    Provider = "openai"    // Codex (the Responses API)
	ProviderGemini    Provider = "gemini"    // Gemini CLI
)

// Gateway stands between a CLI in the sandbox and its model API: the CLI
// holds only Placeholder; the gateway, outside the sandbox, checks it,
// puts Key in its place and forwards the request to Upstream, streaming
// the answer back as it arrives. Only the calls a CLI makes to its model
// pass, so the key cannot be used for anything else through it.
type Gateway struct {
	Provider Provider
	// Upstream is the real base URL (the provider's or --base-url); the
	// CLI's base URL is the gateway's with Upstream's path.
	Upstream *url.URL
	// Key is the real key; Placeholder what the CLI was given instead.
	Key, Placeholder string
	// Transport sends the requests on; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Meter, when set, counts the tokens of every billed call forwarded
	// (see meterCall).
	Meter *Meter
	// Admit, when set, is asked before each billed call is forwarded; an
	// error refuses the call with it (the step's budget is spent). At
	// most MaxAdmitted billed calls run at once then (the others wait),
	// so calls admitted together overrun a spent budget by a few calls,
	// not by one per connection.
	Admit func() error
	// Cap, when set, is asked before each billed call is forwarded, with
	// the model the call names (marked LongPrompt when its body is
	// reckoned over LongPromptTokens, or its prompt is one the provider
	// holds, as its output then bills at the long-prompt rate): the most
	// output tokens the call may ask
	// for (0: no bound). A larger limit in the body, or none, is lowered
	// to it (capEdits), so calls running when the budget runs out
	// overrun it by their prompts, not by their whole output limits.
	// release (when not nil) is called once the call's answer is
	// metered: a bound holds its part of the budget for the call until
	// then, so bounds given to calls running together add up to what
	// the budget has left, not each to a part of it.
	Cap func(model string) (limit int64, release func())
	// Worth, when set, is what u (input tokens, and fees in CostUSD) of a
	// call to model costs in the units of Cap's bound: output tokens of
	// model (at its output price, where the budget is in dollars). The
	// gateway holds the provider's web searches to what the budget pays
	// for with it (searchLimits); nil counts an input token as an output
	// one and a fee as nothing.
	Worth func(model string, u usage.Usage) int64

	calls    inflight
	admitted chan struct{}
	// orphans holds a place for each call read on after its caller hung up.
	orphans chan struct{}
	once    sync.Once
}

// MaxAdmitted bounds the billed calls running at once through a gateway
// with Admit set.
const MaxAdmitted = 4

// maxOrphans bounds the calls a gateway reads on after their callers hung
// up (each holds its spooled body and an upstream connection, and no
// connection of the caller's counts it); past it such a call is cut and
// counted at the output limit it was sent with (cutShort).
const maxOrphans = 8

func (g *Gateway) init() {
	g.once.Do(func() {
		g.admitted = make(chan struct{}, MaxAdmitted)
		g.orphans = make(chan struct{}, maxOrphans)
	})
}

// adopt takes a place for a call whose caller hung up, if one is free;
// release gives it back.
func (g *Gateway) adopt() (release func(), ok bool) {
	g.init()
	select {
	case g.orphans <- struct{}{}:
		return func() { <-g.orphans }, true
	default:
		return nil, false
	}
}

// NewPlaceholder returns a random stand-in for a key, unlike any real one.
func NewPlaceholder() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a placeholder key: %w", err)
	}
	return "planex-placeholder-" + hex.EncodeToString(b), nil
}

// authHeaders are where a provider's clients put a key.
func (g *Gateway) authHeaders() []string {
	switch g.Provider {
	case ProviderAnthropic:
		return []string{"X-Api-Key", "Authorization"}
	case ProviderGemini:
		return []string{"X-Goog-Api-Key", "Authorization"}
	}
	return []string{"Authorization"}
}

// geminiCall is a model call of the Gemini API, below the base path.
func geminiCall() *regexp.Regexp {
	return regexp.MustCompile(`^/v1(beta|alpha)?/models/[A-Za-z0-9][A-Za-z0-9._-]*:(generateContent|streamGenerateContent|countTokens)$`)
}

// allowedCall says whether method and path (below Upstream's path) are a
// model call of the provider's.
func (g *Gateway) allowedCall(method, rel string) bool {
	switch g.Provider {
	case ProviderAnthropic:
		return method == http.MethodPost && (rel == "/v1/messages" || rel == "/v1/messages/count_tokens")
	case ProviderOpenAI:
		// Not Chat Completions: Codex speaks only the Responses API, and
		// OpenAI's chat search models search the live web on every call.
		return method == http.MethodPost && rel == "/responses" ||
			method == http.MethodGet && rel == "/models"
	case ProviderGemini:
		return method == http.MethodPost && geminiCall().MatchString(rel)
	}
	return false
}

// ErrPlaceholder marks a request that did not carry the placeholder.
var ErrPlaceholder = errors.New("the request does not carry the key planex gave this step")

// swapKey finds the placeholder where the provider's clients put a key,
// removes every other credential and puts the real key in its place.
func (g *Gateway) swapKey(h http.Header, q url.Values) error {
	var carried string
	for _, name := range g.authHeaders() {
		v := h.Get(name)
		if v == "" {
			continue
		}
		token, bearer := strings.CutPrefix(v, "Bearer ")
		if subtle.ConstantTimeCompare([]byte(token), []byte(g.Placeholder)) == 1 {
			carried = name
			if bearer {
				carried += " bearer"
			}
		}
		h.Del(name)
	}
	if g.Provider == ProviderGemini && q.Has("key") {
		if subtle.ConstantTimeCompare([]byte(q.Get("key")), []byte(g.Placeholder)) == 1 && carried == "" {
			carried = "X-Goog-Api-Key"
		}
		q.Del("key")
	}
	// A credential header spelt with underscores (X_Api_Key) is a name of
	// its own to Go, which a CGI, PHP-FPM or WSGI server behind
	// --base-url reads as the dashed one: it goes too.
	for name := range h {
		dashed := strings.ReplaceAll(name, "_", "-")
		if dashed != name && slices.ContainsFunc(g.authHeaders(), func(a string) bool { return strings.EqualFold(a, dashed) }) {
			delete(h, name)
		}
	}
	switch name, bearer := strings.CutSuffix(carried, " bearer"); {
	case carried == "":
		return ErrPlaceholder
	case bearer:
		h.Set(name, "Bearer "+g.Key)
	default:
		h.Set(name, g.Key)
	}
	return nil
}

// shapeHeaders are headers the providers' front ends honour that make a
// call another method than the one the gateway let through, cut members
// out of the answer (a field mask leaving out usageMetadata or its output
// count, which the meter reads), or choose which of the key's
// organisations and projects the call is billed to and may reach (a
// user's OpenAI key reaches every project of every organisation the user
// belongs to): the key is used as planex was given it. The caller's
// Accept-Encoding goes too: Go's transport then asks for gzip itself and
// hands the meter the answer decoded (a compressed answer hid its usage,
// and its few bytes were all the floor counted of a long repetitive
// output), and so does a Range, by which a front end could answer a part
// of an answer the model wrote whole.
func shapeHeaders() []string {
	return []string{"X-Http-Method-Override", "X-Http-Method", "X-Method-Override", "X-Goog-Fieldmask",
		"Openai-Organization", "Openai-Project", "X-Goog-User-Project", "Accept-Encoding", "Range", "If-Range"}
}

// checkQuery refuses a Gemini call's query parameters but alt=sse (the
// key, if any, is already swapped): Google's system parameters change
// the answer's shape (fields, $fields, alt=proto) so that its usage
// cannot be read, or whose project pays (userProject).
func (g *Gateway) checkQuery(q url.Values) error {
	if g.Provider != ProviderGemini {
		return nil
	}
	for name, vs := range q {
		if name == "key" {
			continue
		}
		if name != "alt" || len(vs) != 1 || vs[0] != "sse" {
			return fmt.Errorf("%w (the query parameter %q: only alt=sse is passed on)", ErrUnmetered, name)
		}
	}
	return nil
}

// ServeHTTP forwards one model call; a call whose caller hangs up is cut.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.serve(w, r, r.Context(), nil)
}

// serve forwards one model call; scans, when not nil, bounds how many
// bodies are spooled and checked at once (each takes up to 64 MiB of
// disk and may hold one large string in memory). The call to the
// provider lasts until its answer ends or stop ends, not only while the
// caller listens: a caller that hangs up mid-answer would otherwise have
// the meter count the bytes it saw while the provider billed what it had
// generated (a reasoning model's hidden thinking first of all), so the
// rest is read and metered without a reader.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, stop context.Context, scans chan struct{}) {
	base := strings.TrimRight(g.Upstream.Path, "/")
	rel, ok := strings.CutPrefix(r.URL.Path, base)
	if !ok || !g.allowedCall(r.Method, rel) {
		http.Error(w, fmt.Sprintf("planex model gateway: %s %s is not a model call planex passes on", r.Method, r.URL.Path), http.StatusForbidden)
		return
	}
	if !g.calls.enter() {
		http.Error(w, "planex model gateway: the step is over", http.StatusServiceUnavailable)
		return
	}
	defer g.calls.leave()
	billed := billedCall(rel)
	if billed && g.Admit != nil {
		release, err := g.admit(r.Context())
		if err != nil {
			http.Error(w, "planex model gateway: "+err.Error(), http.StatusPaymentRequired)
			return
		}
		defer release()
	}
	body, size, shape, err := g.readBody(r, rel, scans)
	if err != nil {
		refuseCall(w, err)
		return
	}
	defer body.Close()
	upCtx, orphan, done := g.upstreamContext(r.Context(), stop)
	defer done()
	out := r.Clone(upCtx)
	out.RequestURI = ""
	sent, size, uncap, bound, err := g.capped(billed, rel, body, size, shape)
	defer uncap() // after the call is metered, below
	if err != nil {
		refuseCall(w, err)
		return
	}
	out.Body, out.ContentLength, out.GetBody = io.NopCloser(sent), size, nil
	out.Header.Del("Content-Length")
	out.Header.Del("Content-Encoding") // identity alone, which says nothing
	out.TransferEncoding, out.Trailer = nil, nil
	if size == 0 {
		out.Body = http.NoBody
	}
	q := out.URL.Query()
	if err := g.swapKey(out.Header, q); err != nil {
		http.Error(w, "planex model gateway: "+err.Error(), http.StatusUnauthorized)
		return
	}
	if err := g.checkQuery(q); err != nil {
		http.Error(w, "planex model gateway: "+err.Error(), http.StatusForbidden)
		return
	}
	dropHeaders(out.Header, shapeHeaders())
	out.URL = &url.URL{Scheme: g.Upstream.Scheme, Host: g.Upstream.Host, Path: r.URL.Path, RawQuery: q.Encode()}
	out.Host = g.Upstream.Host
	dropHop(out.Header)
	dropRouting(out.Header)
	rt := g.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(out)
	if err != nil {
		if billed && !dialFailed(err) {
			// The call may have reached the provider, which bills it.
			g.meterCall(g.askedModel(rel, shape), g.floorOf(rel, shape, size, bound), nil, nil, false)
		}
		// The transport's error may quote what the upstream sent (a
		// malformed header line), the key among it.
		http.Error(w, "planex model gateway: "+newRedactor(g.Key).line(err.Error()), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if enc := answerEncoding(resp); enc != "" {
		g.refuseEncoded(w, g.askedModel(rel, shape), g.floorOf(rel, shape, size, 0), resp, billed, enc)
		return
	}
	if !billed || g.Meter == nil {
		streamAnswer(w, resp, nil, nil, g.Key)
		return
	}
	a := &answerUsage{p: g.Provider}
	scan := newAnswerScan(isEventStream(resp.Header), a)
	whole := streamAnswer(w, resp, scan, orphan, g.Key)
	floor := g.floorOf(rel, shape, size, 0)
	if !whole {
		floor.cut = bound
	}
	floor.cut = max(floor.cut, cutShort(upCtx, bound))
	g.meterCall(g.askedModel(rel, shape), floor, resp, &meterRead{usage: a, bytes: scan.bytes, chose: shape.namesGlobal()}, whole)
}

// callFloor is what the meter counts a billed call at least where its
// answer's usage cannot be read in full (meterCall).
type callFloor struct {
	// bytes is the request's size, counted as input tokens.
	bytes int64
	// prompt is the prompt's tokens as the gateway reckons them
	// (reckonedPrompt), counted as input where no usage was read.
	prompt int64
	// cut is the output the call may be billed for unseen: its bound
	// where the answer was cut before its end (0 where none was set).
	cut int64
}

// floorOf is the floor of a call (shape, of size bytes, to rel) whose
// output may be billed up to cut unseen.
func (g *Gateway) floorOf(rel string, shape bodyShape, size, cut int64) callFloor {
	return callFloor{bytes: size, prompt: shape.reckonedPrompt(g.askedModel(rel, shape), size), cut: cut}
}

// reckonedPrompt is the most tokens the gateway reckons the prompt of a
// call (sh, of size bytes) to model holds: promptTokensTo, and a prompt
// the provider holds (sh.stored), which the body does not show, as long
// as any model's may be (storedPromptTokens).
func (sh bodyShape) reckonedPrompt(model string, size int64) int64 {
	n := sh.promptTokensTo(model, size)
	if sh.stored {
		n = max(n, storedPromptTokens)
	}
	return n
}

// refuseCall answers a call the gateway does not pass on for err: 403
// for what it never passes, 402 for what the budget does not pay for,
// 400 for a body it cannot read.
func refuseCall(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, ErrServerFetch), errors.Is(err, ErrUnmetered):
		status = http.StatusForbidden
	case errors.Is(err, ErrSearchBudget):
		status = http.StatusPaymentRequired
	}
	http.Error(w, "planex model gateway: "+err.Error(), status)
}

// cutShort is the output a call bounded to bound (0: none) may be billed
// for unseen, if the gateway cut it (up, the call's upstream context,
// ended): the step's end, or its caller's hang-up when no place was
// left to read it on (maxOrphans). The program may exit or hang up with
// calls under way, and the provider need not stop when the connection
// goes, least of all before it answers.
func cutShort(up context.Context, bound int64) int64 {
	if up.Err() != nil {
		return bound
	}
	return 0
}

// answerEncoding is the content encoding of an answer the transport
// did not decode (it decodes the gzip it asked for itself), or "" for
// identity: an upstream that compresses unasked (br, deflate, x-gzip,
// gzip twice) would hide the key from the masker and the usage from the
// meter, while the caller's HTTP client decodes it.
func answerEncoding(resp *http.Response) string {
	for _, ce := range resp.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(ce, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return ce
			}
		}
	}
	return ""
}

// refuseEncoded answers a call (of the model asked) whose answer came
// encoded (enc) with a 502 and none of the answer, which it reads to the
// end so that a billed call is metered at the floor of its bytes.
func (g *Gateway) refuseEncoded(w http.ResponseWriter, asked string, floor callFloor, resp *http.Response, billed bool, enc string) {
	n, _ := io.Copy(io.Discard, resp.Body)
	if billed {
		g.meterCall(asked, floor, nil, &meterRead{usage: &answerUsage{p: g.Provider}, bytes: n}, false)
	}
	http.Error(w, fmt.Sprintf("planex model gateway: the provider's answer came encoded (%.40q), which the gateway cannot read", enc), http.StatusBadGateway)
}

// upstreamContext is the context of a call's request to the provider
// (caller is the caller's): it ends with stop, or when the caller hangs
// up unless the call is adopted then (adopt), so that its answer is read
// on and metered. orphan adopts the call once its caller is gone and says
// whether it was; done ends the call and gives its place back.
func (g *Gateway) upstreamContext(caller, stop context.Context) (ctx context.Context, orphan func() bool, done func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(caller))
	var once sync.Once
	var release func()
	adopted := false
	orphan = func() bool {
		once.Do(func() { release, adopted = g.adopt() })
		return adopted
	}
	stopAtEnd := context.AfterFunc(stop, cancel)
	stopAtHangUp := context.AfterFunc(caller, func() {
		if !orphan() {
			cancel()
		}
	})
	return ctx, orphan, func() {
		stopAtHangUp()
		stopAtEnd()
		cancel()
		once.Do(func() {}) // after an orphan() under way
		if release != nil {
			release()
		}
	}
}

// admit waits for a turn among the MaxAdmitted billed calls that may run
// at once, then asks Admit; release ends the turn once the call's answer
// is metered.
func (g *Gateway) admit(ctx context.Context) (release func(), err error) {
	g.init()
	select {
	case g.admitted <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release = func() { <-g.admitted }
	if err := g.Admit(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// readBody spools r's body (of the call rel) and checks it
// (checkModelBody, checkGeminiModel), returning it rewound: the body
// passed on is the one checked, byte for byte.
func (g *Gateway) readBody(r *http.Request, rel string, scans chan struct{}) (*os.File, int64, bodyShape, error) {
	if !plainJSON(r.Header) {
		return nil, 0, bodyShape{}, errBody
	}
	if scans != nil {
		select {
		case scans <- struct{}{}:
			defer func() { <-scans }()
		case <-r.Context().Done():
			return nil, 0, bodyShape{}, r.Context().Err()
		}
	}
	f, size, err := spoolBody(r.Body)
	if err != nil {
		return nil, 0, bodyShape{}, err
	}
	shape, err := readModelBody(g.Provider, f)
	if err == nil {
		err = g.checkGeminiModel(rel, shape)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, bodyShape{}, err
	}
	return f, size, shape, nil
}

// capped is the body of a call (rel) with, when it is billed, its output
// limit held to what Cap allows for the model it names (a Gemini call's
// path names it); release gives the bound's part of the budget back, and
// bound is the most output the call may then be billed for (0: no bound
// was set).
func (g *Gateway) capped(billed bool, rel string, f *os.File, size int64, shape bodyShape) (body io.Reader, n int64, release func(), bound int64, err error) {
	release = func() {}
	if !billed || g.Cap == nil || size == 0 {
		return f, size, release, 0, nil
	}
	model := g.askedModel(rel, shape)
	priced := model
	if g.defaultRegion(shape.namesGlobal()) {
		priced += RegionalInference
	}
	if shape.stored || shape.promptTokensTo(model, size) > LongPromptTokens {
		// Its output and its readings bill at the long-prompt rates.
		priced += LongPrompt
	}
	limit, held := g.Cap(priced)
	if held != nil {
		release = held
	}
	if limit <= 0 {
		return f, size, release, 0, nil
	}
	shape.pinTier = g.pinnedTier()
	shape, release = g.advisorLimits(shape, priced, release)
	if shape, release, err = g.searchLimits(shape, priced, size, release); err != nil {
		return nil, 0, release, 0, err
	}
	inserted := insertedLimit(model, limit)
	body, n = capBody(f, size, capEdits(g.Provider, shape, limit, inserted))
	return body, n, release, shape.boundUnder(limit, inserted), nil
}

// defaultRegion says whether a call (global: naming the global region
// in each copy of its inference_geo, bodyShape.namesGlobal) may run in
// one region,
// billed 1.1 times the list price, with nothing yet to tell: an
// Anthropic call to the provider's own API that does not name the
// global region, before any answer through the gateway named the
// region it ran in. Such a call runs where the key's workspace
// defaults to (default_inference_geo), and its output bound, priced at
// the list price, let the calls running when the budget ran out write a
// tenth more than it set aside. The gateway does not pin "global" as it
// pins the tier: a workspace may forbid it, and models before Opus 4.6
// refuse the member. A call to an OpenAI data residency endpoint
// (regionalEndpoint) runs in one region whatever it asks.
func (g *Gateway) defaultRegion(global bool) bool {
	return g.Provider == ProviderAnthropic && g.pinnedTier() != "" && !global && !g.Meter.regionKnown() || g.regionalEndpoint()
}

// pinnedTier is the service tier a bounded call to the provider's own
// API is sent in where it asks for none (or "auto", or null): OpenAI's
// "default" and Anthropic's "standard_only", billed at the list price.
// A call asking for none runs in the key's project's or organisation's
// default tier, priority processing (about twice the list price) where
// one was set, and only its answer tells; its output bound, set before,
// was priced at the list price, so the first calls of a step wrote up to
// twice what the budget set aside. A server behind another base URL
// (vLLM, a proxy) gets none, as it may refuse the member or read it
// otherwise (""). The host is compared in any case and without the
// trailing dot of its absolute form (api.openai.com.), which reaches the
// same API.
// OpenAI's data residency endpoints (eu.api.openai.com and the like,
// regionalEndpoint) reach the same projects and get it too.
func (g *Gateway) pinnedTier() string {
	switch host := g.upstreamHost(); {
	case g.Provider == ProviderOpenAI && (host == "api.openai.com" || g.regionalEndpoint()):
		return "default"
	case g.Provider == ProviderAnthropic && host == "api.anthropic.com":
		return "standard_only"
	}
	return ""
}

// upstreamHost is the upstream's host name in lower case, without the
// trailing dot of its absolute form.
func (g *Gateway) upstreamHost() string {
	return strings.TrimSuffix(strings.ToLower(g.Upstream.Hostname()), ".")
}

// regionalEndpoint says whether the upstream is one of OpenAI's data
// residency endpoints (us., eu., jp.api.openai.com and the like), which
// run every call in one region and bill the newer models a tenth above
// the list price: the gateway bounds and meters all its calls in one
// region (RegionalInference).
func (g *Gateway) regionalEndpoint() bool {
	return g.Provider == ProviderOpenAI && strings.HasSuffix(g.upstreamHost(), ".api.openai.com")
}

// ErrSearchBudget marks a model call with the provider's web search or
// compaction whose readings of the prompt on the provider's side the
// budget's remainder pays for none of.
var ErrSearchBudget = errors.New("what the budget has left pays for no web search or compaction of this call's prompt")

// storedPromptTokens is how long a prompt the provider holds (shape
// .stored) is reckoned at least, when its readings are: the longest any
// of the providers' models takes (a million tokens, OpenAI's a little
// over). A chain of stored responses, a conversation, a context cache
// or an uploaded file may hold that much; reckoned at 200K before, a
// call with search let five times as many readings through as its part
// of the budget paid for.
const storedPromptTokens = 1_050_000

// bytesPerToken is how many bytes of a call's body the gateway reckons a
// token of its prompt: about four of English text, three of code; fewer
// makes more tokens, so a reading is reckoned dearer.
const bytesPerToken = 3

// searchLimits asks Cap, for a call (shape, of size bytes) to model
// with the provider's web search or compaction (or, for OpenAI, any
// tool it runs itself, which max_tool_calls bounds with the searches:
// each call of one a reading, without the fee), for a part of the
// budget set aside for what they read (held beside the call's own
// bound until it is metered), and returns the shape holding the call to
// the searches that part pays for, maxToolCalls at most, shared among
// its search tools, with a release that gives back release's part and
// this one. Each search has the model read the whole prompt again,
// billed as input, and bills a fee, and a compaction reads it again too,
// once and after each search (Worth prices them in the bound's units; a
// prompt the provider holds, shape.stored, is reckoned at
// storedPromptTokens at least): with 8 searches let through whatever was
// left, one call overran a nearly spent budget by nine readings of its
// prompt. Where the part pays for no search each tool may make, or not
// for a compaction's reading, the call is refused (ErrSearchBudget).
func (g *Gateway) searchLimits(shape bodyShape, model string, size int64, release func()) (bodyShape, func(), error) {
	tools := shape.searchTools()
	loops := tools
	if g.Provider == ProviderOpenAI && shape.builtinTools > 0 {
		// max_tool_calls bounds every tool OpenAI runs itself (its
		// hosted tool search too), each call of one a reading of the
		// prompt.
		loops = max(loops, 1)
	}
	lookups := g.Provider == ProviderAnthropic && shape.lookups()
	if loops == 0 && !shape.compacts && !lookups {
		return shape, release, nil
	}
	limit, held := g.Cap(model)
	both := release
	if held != nil {
		both = func() { release(); held() }
	}
	if limit <= 0 {
		return shape, both, nil
	}
	reading, search := g.readingWorth(shape, model, size)
	if tools == 0 {
		search = reading // no search fee
	}
	if lookups {
		// A tool search's samplings, which its web searches' are among:
		// those then add only their fee.
		limit -= serverLoops * reading
		search -= reading
	}
	if shape.compacts {
		limit -= reading  // the first compaction
		search += reading // one after each search
	}
	if limit < 0 && (lookups || shape.compacts) {
		return shape, both, ErrSearchBudget
	}
	if loops == 0 {
		return shape, both, nil
	}
	searches := min(max(limit, 0)/max(search, 1), maxToolCalls)
	if g.Provider != ProviderOpenAI {
		searches /= tools // each Anthropic tool has max_uses of its own
	}
	if searches < 1 {
		return shape, both, ErrSearchBudget
	}
	shape.searches = searches
	return shape, both, nil
}

// readingWorth is what one reading of a call's prompt (shape, of size
// bytes, to model) costs in Cap's units, and what one web search does
// (a reading and its fee).
func (g *Gateway) readingWorth(shape bodyShape, model string, size int64) (reading, search int64) {
	fee := anthropicSearchFee
	if g.Provider == ProviderOpenAI {
		fee = openAISearchFee
	}
	u := usage.Usage{InputTokens: shape.reckonedPrompt(model, size) + 1}
	if g.Worth == nil {
		return u.InputTokens, u.InputTokens
	}
	reading = g.Worth(model, u)
	u.CostUSD = fee
	return reading, g.Worth(model, u)
}

// advisorLimits asks Cap, for each advisor tool of a call (shape) to
// model, the output its consult may write, at the advisor's model's own
// rate (its part of the budget held beside the call's own), and returns
// the shape with those limits and a release that gives back the call's
// (release) and theirs: an advisor's model is commonly dearer than the
// call's, so the call's own bound in tokens would buy more there than
// the budget set aside.
func (g *Gateway) advisorLimits(shape bodyShape, model string, release func()) (bodyShape, func()) {
	releases := []func(){release}
	tools := slices.Clone(shape.tools)
	for i, t := range tools {
		if t.kind != toolAdvisor {
			continue
		}
		limit, held := g.Cap(cmp.Or(t.model, model))
		tools[i].limit = max(limit, 0)
		if held != nil {
			releases = append(releases, held)
		}
	}
	shape.tools = tools
	return shape, func() {
		for _, r := range releases {
			r()
		}
	}
}

// askedModel is the model a call (rel, below the base path) asks for: a
// Gemini call's path names it, the others' body (shape).
func (g *Gateway) askedModel(rel string, shape bodyShape) string {
	if g.Provider == ProviderGemini {
		_, after, _ := strings.Cut(rel, "/models/")
		model, _, _ := strings.Cut(after, ":")
		return model
	}
	return shape.model
}

// checkGeminiModel refuses a Gemini call whose body names a model (its
// model member, with or without "models/") other than its path's, which
// the gateway prices the call at: a front end taking the body's would
// run a model the bound was not priced for.
func (g *Gateway) checkGeminiModel(rel string, shape bodyShape) error {
	if g.Provider != ProviderGemini || shape.models == 0 {
		return nil
	}
	if m := strings.TrimPrefix(shape.model, "models/"); m != g.askedModel(rel, shape) {
		return fmt.Errorf("%w (the model %.60q in the body, another than the path's)", ErrUnmetered, shape.model)
	}
	return nil
}

// plainJSON says whether a request's header declares its body as the
// check reads it: no content encoding but identity, in any of its lines
// (a server may decode by any of them, the last most often), and JSON
// in UTF-8 or no type at all. A body in another character set (UTF-7
// spells a quote +ACI-) or a form could read otherwise upstream.
func plainJSON(h http.Header) bool {
	for _, ce := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(ce, ",") {
			if !strings.EqualFold(strings.TrimSpace(c), "identity") {
				return false
			}
		}
	}
	types := h.Values("Content-Type")
	if len(types) == 0 {
		return true
	}
	mt, params, err := mime.ParseMediaType(types[0])
	if err != nil || len(types) > 1 || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return false
		}
	}
	return true
}

// streamResponse copies a response's header and body, flushing every
// chunk as it arrives (server-sent events reach the client unbuffered),
// and shows the body to seen (when not nil) as it goes; once the client
// is gone the rest is shown to seen alone if orphan (when not nil) says
// so, else not read. It says whether the whole body was read.
func streamResponse(w http.ResponseWriter, resp *http.Response, seen io.Writer, orphan func() bool) bool {
	return streamAnswer(w, resp, seen, orphan, "")
}

// streamAnswer is streamResponse with every occurrence of key (when at
// least minRedacted bytes long) in the answer's header and body masked,
// byte for byte, before the client sees it: a server behind --base-url
// (a LiteLLM or vLLM front, a misconfigured proxy) may echo the key it
// was sent in an error, a header or a debug field, and the gateway's
// caller is the contained program the key is kept from. The meter
// (seen) reads the answer as it came.
func streamAnswer(w http.ResponseWriter, resp *http.Response, seen io.Writer, orphan func() bool, key string) bool {
	dropHop(resp.Header)
	red := newRedactor(key)
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(red.name(k), red.line(v))
		}
	}
	if seen != nil {
		// A metered answer goes without its length, so that the caller
		// sees its end only when this call's handler returns, after the
		// call is metered and its hold on the budget released: with the
		// length, a program calling in a loop had the whole answer, and
		// sent its next call, before this one counted.
		w.Header().Del("Content-Length")
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	gone := false
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if seen != nil {
				seen.Write(buf[:n])
			}
			if !gone {
				_, werr := w.Write(red.filter(buf[:n]))
				_ = rc.Flush()
				if gone = werr != nil; gone && (orphan == nil || !orphan()) {
					return false
				}
			}
		}
		if err != nil {
			if !gone {
				w.Write(red.carry) // a tail that only began like the key
				_ = rc.Flush()
			}
			return errors.Is(err, io.EOF)
		}
	}
}

// Serve answers model calls on ln until ctx ends or ln is closed.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	scans := make(chan struct{}, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.serve(w, r, ctx, scans) })
	srv := &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	err := srv.Serve(netutil.LimitListener(ln, DefaultMaxConns))
	// The calls still running when the gateway stops are cut and metered
	// before Serve returns, so a Meter read after it is the step's whole.
	srv.Close()
	g.calls.closeAndWait()
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// minRedacted is the shortest key an answer is searched for: a shorter
// one (a test's) would mask ordinary text.
const minRedacted = 8

// redactor masks a key in a stream cut into chunks anywhere: it holds
// back the end of a chunk that may be the start of the key or of one of
// its encodings (never more than the longest one's length less one
// byte, and none at the end of a server-sent event, which ends in a line
// break) until the next chunk shows whether it is.
type redactor struct {
	// forms are the key and the encodings of it an answer may carry it
	// in (keyForms), each masked with as many '*'.
	forms [][]byte
	carry []byte
}

func newRedactor(key string) *redactor {
	if len(key) < minRedacted {
		return &redactor{}
	}
	return &redactor{forms: keyForms(key)}
}

// keyForms are key and the forms an upstream that echoes what it was
// sent may encode it in: hexadecimal (either case) and base64 (the
// standard and URL alphabets). A key inside base64 text is encoded by
// groups of three bytes counted from the text's start, so only the
// groups wholly of the key are known, and which bytes start them
// depends on where the key stands: each of the three alignments is a
// form of its own, the bytes before and after it (at most two each
// side) not masked.
func keyForms(key string) [][]byte {
	forms := [][]byte{[]byte(key), []byte(hex.EncodeToString([]byte(key))), []byte(strings.ToUpper(hex.EncodeToString([]byte(key))))}
	for skip := range 3 {
		whole := key[skip:]
		whole = whole[:len(whole)/3*3]
		if len(whole) < minRedacted {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if f := []byte(enc.EncodeToString([]byte(whole))); !slices.ContainsFunc(forms, func(g []byte) bool { return bytes.Equal(f, g) }) {
				forms = append(forms, f)
			}
		}
	}
	return forms
}

// line masks the key's forms in a header value.
func (r *redactor) line(v string) string {
	for _, f := range r.forms {
		v = strings.ReplaceAll(v, string(f), strings.Repeat("*", len(f)))
	}
	return v
}

// name masks the key's forms in a header name, in any case: Go's
// transport gives a name canonical case ("X-Seen-Sk-Real-…"), which
// changes the letters after each dash of a key echoed in it ('*' is a
// valid name byte).
func (r *redactor) name(k string) string {
	b := []byte(k)
	lower := bytes.ToLower(b)
	if len(lower) != len(b) {
		return k
	}
	for _, f := range r.forms {
		maskAll(b, lower, bytes.ToLower(f))
	}
	return string(b)
}

// maskAll masks in b every place where find occurs in in (b itself, or
// a copy of it of the same length in another case).
func maskAll(b, in, find []byte) {
	for i := 0; ; {
		j := bytes.Index(in[i:], find)
		if j < 0 {
			return
		}
		for k := i + j; k < i+j+len(find); k++ {
			b[k] = '*'
		}
		i += j + len(find)
	}
}

// filter returns what of the stream can be passed on after p: the
// carried bytes and p, the key's forms masked, less a new tail to carry.
// It may change p.
func (r *redactor) filter(p []byte) []byte {
	if r.forms == nil {
		return p
	}
	b := p // masked in place: the meter has read it already
	if len(r.carry) > 0 {
		b = append(r.carry, p...)
	}
	r.carry = nil
	hold := 0
	for _, f := range r.forms {
		maskAll(b, b, f)
	}
	for _, f := range r.forms {
		for n := min(len(f)-1, len(b)); n > hold; n-- {
			if bytes.HasSuffix(b, f[:n]) {
				hold = n
				break
			}
		}
	}
	r.carry = append([]byte(nil), b[len(b)-hold:]...)
	return b[:len(b)-hold]
}
