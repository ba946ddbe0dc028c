package egress

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxModelBody bounds the body of one model call the gateway reads
// before passing it on (the providers' own limits are about 32 MiB).
const maxModelBody = 64 << 20

// ErrServerFetch marks a model call that asks the provider to reach a
// place of the request's choosing (a remote MCP server, a URL fetch tool):
// the provider's servers would carry what the agent put in the request
// past the step's allow-list.
var ErrServerFetch = errors.New("the model call asks the provider to connect to a place of the request's choosing")

// ErrUnmetered marks a model call whose cost the gateway could not read
// from the answer: a background response (its tokens are spent after the
// answer), or a Gemini answer shaped otherwise by query parameters.
var ErrUnmetered = errors.New("the model call asks for an answer whose usage the gateway cannot meter")

// errBody marks a body the gateway cannot read as one JSON object.
var errBody = errors.New("the body of a model call must be one JSON object in UTF-8 (declared as application/json or not at all), nested at most 512 deep, without content encoding, of at most 64 MiB")

// spoolBody reads r's body, up to maxModelBody, into an unlinked
// temporary file (not memory: a call may carry megabytes of images)
// and returns it rewound, with its size.
func spoolBody(body io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "planex-gateway-body-")
	if err != nil {
		return nil, 0, fmt.Errorf("spooling a model call: %w", err)
	}
	os.Remove(f.Name())
	n, err := io.Copy(f, io.LimitReader(body, maxModelBody+1))
	if err == nil && n > maxModelBody {
		err = errBody
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("reading a model call's body: %w", err)
	}
	return f, n, nil
}

// fold spells a JSON member name the way lenient readers match it: lower
// case, without underscores (Gemini's API reads url_context and
// urlContext alike).
func fold(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "_", "")
}

// checkModelBody reads a model call's JSON body and refuses, with
// ErrServerFetch, the parts that make the provider connect somewhere the
// request names: Anthropic's mcp_servers and its MCP and web fetch tools,
// OpenAI's MCP tool, Gemini's URL context tool, a hosted container's
// network policy that lets it connect out (checkPolicy), and anywhere in
// the body a media or file source given as a web address for the
// provider to download (Anthropic's {"type":"url"} sources, OpenAI's
// image_url and file_url, Gemini's fileUri). Web search tools pass (Codex
// sends one by default): docs/security.md counts them with the model
// provider as a way out; OpenAI's only kept to the search index
// (external_web_access false), as with live access the model opens pages
// of its choosing. An empty body passes (a GET). The body is read token by token,
// without recursion and at most maxNesting deep, so neither its size nor
// its nesting costs memory beyond its largest string.
func checkModelBody(p Provider, body io.Reader) error {
	_, err := readModelBody(p, body)
	return err
}

// readModelBody is checkModelBody, also returning where the body sets
// the call's model and output limit (bodyShape).
func readModelBody(p Provider, body io.Reader) (bodyShape, error) {
	var text utf8Check
	dec := json.NewDecoder(bufio.NewReaderSize(io.TeeReader(body, &text), 32<<10))
	dec.UseNumber()
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return bodyShape{}, nil
	}
	if err != nil || tok != json.Delim('{') {
		return bodyShape{}, errBody
	}
	w := bodyWalk{p: p, stack: []frame{{obj: true}}}
	w.shape.top, w.shape.topEmpty = dec.InputOffset(), true
	for len(w.stack) > 0 {
		w.prev = dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return bodyShape{}, errBody
		}
		w.off = dec.InputOffset()
		if err := w.step(tok); err != nil {
			return bodyShape{}, err
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) || !text.valid() {
		return bodyShape{}, errBody
	}
	return w.shape, nil
}

// utf8Check sees a body go by and says whether it was all UTF-8. The
// JSON reader puts U+FFFD for a byte that is not, where a provider's may
// refuse the body or drop the byte ("network_\xffpolicy" would then be
// a name the check never saw), so such a body is not passed on.
type utf8Check struct {
	tail []byte // a rune begun at the end of the last write
	bad  bool
}

func (c *utf8Check) Write(p []byte) (int, error) {
	if c.bad {
		return len(p), nil
	}
	b := append(c.tail, p...)
	end := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				end = i
			}
			break
		}
	}
	c.bad = !utf8.Valid(b[:end])
	c.tail = append(c.tail[:0:0], b[end:]...)
	return len(p), nil
}

// valid says whether everything written was UTF-8, to its last rune.
func (c *utf8Check) valid() bool { return !c.bad && len(c.tail) == 0 }

// maxNesting bounds how deep a model call's JSON may nest (the walk keeps
// one frame per level); real calls stay far below it.
const maxNesting = 512

// frame is one open object or array of a body being walked.
type frame struct {
	obj bool
	// key is the member being read (objects), folded; named says a
	// member's name was read and its value comes next (a name may be "").
	key   string
	named bool
	// url says the values below are a source the provider would fetch.
	url bool
	// container says the object configures a hosted container (the
	// value of a container or environment member); policy that it is
	// such a container's network_policy.
	container, policy bool
	// search says the object is an OpenAI web search tool; cached that
	// it set external_web_access to false, live to anything else (a
	// member given twice counts both ways).
	search, cached, live bool
	// env says the object is the environment of an OpenAI tool (the
	// shell's); local that its type was "local", hosted anything else.
	env, local, hosted bool
	// callerTool says the object is an OpenAI tools entry whose type
	// names a tool the caller runs (function, custom); builtinTool that
	// a type named another (or twice, one of them another).
	callerTool, builtinTool bool
	// tool is the shape of an Anthropic tools entry (nil otherwise),
	// which the gateway bounds where it is a server tool (serverTool).
	tool *serverTool
	// item says the object is an entry of an OpenAI call's top-level
	// input list; itemID that it has an id, itemTyped that a type other
	// than an item reference was given (see noteItem).
	item, itemID, itemTyped bool
	// reasoning says the input item's type is "reasoning" or
	// "compaction", whose content is encrypted; encrypted
	// that it carries its encrypted_content (a non-empty string).
	reasoning, encrypted bool
	// media is the tokens past a token per three bytes (extraTokens)
	// of the base64 runs of a medium's data (mediaKey) in the object, counted when it closes
	// if textMedia says the medium is text (noteDense).
	media     int64
	textMedia bool
}

type bodyWalk struct {
	p     Provider
	stack []frame
	// off is the body's offset just past the token being taken, prev
	// just past the one before it (a value's span then holds the colon
	// before it).
	off, prev int64
	shape     bodyShape
}

// urlKey says whether a member (folded) holds web addresses a provider
// downloads: images and files, and the audio and video that
// OpenAI-compatible servers (vLLM and the like, behind --base-url) fetch
// the same way.
func urlKey(key string) bool {
	switch key {
	case "imageurl", "fileurl", "fileuri", "audiourl", "videourl":
		return true
	}
	return false
}

// inTool says whether the innermost object is an entry of the top-level
// tools array.
func (w *bodyWalk) inTool() bool {
	n := len(w.stack)
	if n == 5 && w.p == ProviderOpenAI {
		// An entry of an OpenAI namespace's tools (a tools entry
		// holding tools of its own) is checked as a tools entry is.
		return w.stack[0].key == "tools" && !w.stack[1].obj && w.stack[2].obj && w.stack[2].key == "tools" &&
			!w.stack[3].obj && w.stack[4].obj
	}
	return n == 3 && w.stack[0].key == "tools" && !w.stack[1].obj && w.stack[2].obj
}

// inToolList says whether the innermost object is an entry of a tools
// array at any depth: countTokens nests a whole generateContent request,
// its tools with it, below generateContentRequest.
func (w *bodyWalk) inToolList() bool {
	n := len(w.stack)
	return n >= 3 && w.stack[n-3].obj && w.stack[n-3].key == "tools" && !w.stack[n-2].obj && w.stack[n-1].obj
}

// step takes the next token of the body.
func (w *bodyWalk) step(tok json.Token) error {
	top := &w.stack[len(w.stack)-1]
	if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
		return w.close()
	}
	if top.obj && !top.named {
		name, _ := tok.(string)
		w.noteDense("", name, false)
		return w.member(top, name)
	}
	under := top.url || top.obj && urlKey(top.key)
	policy := top.obj && top.container && top.key == "networkpolicy"
	if err := w.checkValue(top, policy, tok); err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); ok {
		return w.open(top, d == '{', frame{url: under, policy: policy})
	}
	key := top.key
	if top.obj {
		top.key, top.named = "", false
	}
	if key == "externalwebaccess" && w.inTool() {
		b, ok := tok.(bool)
		top.cached, top.live = top.cached || ok && !b, top.live || !ok || b
	}
	if v, ok := tok.(string); ok {
		w.noteDense(key, v, under)
		return w.value(key, v, under)
	}
	return nil
}

// checkValue refuses the value tok of top's current member where it
// would have the provider connect out (checkPolicy) or bill where the
// gateway cannot meter: an OpenAI call's background member other than
// false (the answer comes at once, queued; the model runs and bills
// afterwards, where the gateway sees none of it) or service_tier other
// than the ones billed at most at the list prices the meter is priced by
// (priority processing costs about twice as much for the same usage),
// and an Anthropic call's speed other than standard (fast mode bills six
// times the list price for the same usage) or inference_geo other than
// global (inference kept to one region bills 1.1 times it).
func (w *bodyWalk) checkValue(top *frame, policy bool, tok json.Token) error {
	if err := w.checkShape(top, tok); err != nil {
		return err
	}
	if len(w.stack) != 1 || w.p == ProviderGemini {
		return checkPolicy(top, policy, tok)
	}
	if w.p == ProviderAnthropic {
		v, _ := tok.(string)
		if top.key == "speed" && tok != nil && v != "standard" || top.key == "inferencegeo" && tok != nil && v != "global" {
			return fmt.Errorf("%w (the %s %v, billed above the list price)", ErrUnmetered, top.key, tok)
		}
		return checkPolicy(top, policy, tok)
	}
	switch top.key {
	case "background":
		if tok != nil && tok != false {
			return fmt.Errorf("%w (a background response)", ErrUnmetered)
		}
	case "servicetier":
		if v, _ := tok.(string); tok != nil && v != "auto" && v != "default" && v != "flex" {
			return fmt.Errorf("%w (the service tier %v, billed above the list price)", ErrUnmetered, tok)
		}
	}
	return checkPolicy(top, policy, tok)
}

// checkShape notes the value tok of top's current member where it names
// the model or limits the output (note), refusing it where the provider
// would read another than the gateway, and refuses a hosted tool
// environment (checkEnvironment) and several Gemini candidates.
func (w *bodyWalk) checkShape(top *frame, tok json.Token) error {
	if err := w.note(top, tok); err != nil {
		return err
	}
	w.noteGeo(top, tok)
	if err := w.checkEnvironment(top, tok); err != nil {
		return err
	}
	if err := w.checkGeminiTier(top, tok); err != nil {
		return err
	}
	return w.checkCandidates(top, tok)
}

// checkGeminiTier refuses a Gemini call's service tier (at the top of
// the body or in its generationConfig, in any spelling) but the standard
// and flex ones: priority inference bills at a premium above the list
// price the meter prices the call at.
func (w *bodyWalk) checkGeminiTier(top *frame, tok json.Token) error {
	if w.p != ProviderGemini || top.key != "servicetier" || !(len(w.stack) == 1 || w.inGenerationConfig()) || tok == nil {
		return nil
	}
	v, _ := tok.(string)
	switch strings.TrimPrefix(fold(v), "servicetier") {
	case "standard", "flex", "unspecified":
		return nil
	}
	return fmt.Errorf("%w (the service tier %v, billed above the list price)", ErrUnmetered, tok)
}

// checkCandidates refuses a Gemini call's generationConfig.candidateCount
// but 1: each candidate is an answer of its own up to the output limit,
// which the gateway holds to the budget (capEdits) for one answer.
func (w *bodyWalk) checkCandidates(top *frame, tok json.Token) error {
	if !w.inGenerationConfig() || top.key != "candidatecount" || tok == nil || tok == json.Number("1") {
		return nil
	}
	return fmt.Errorf("%w (a candidateCount of %v: one answer a call)", ErrUnmetered, tok)
}

// checkPolicy refuses the value tok of a hosted container's network
// policy (policy: tok is the network_policy member's value) or of its
// type (top is the policy object) unless it keeps the container off the
// network: only null, "disabled" and {"type":"disabled"} pass. OpenAI's
// hosted shell and code interpreter (and Anthropic's containers) take
// an allow-list of domains the code the model writes there may reach,
// past the step's own.
func checkPolicy(top *frame, policy bool, tok json.Token) error {
	if !policy && !(top.policy && top.obj && top.key == "type") {
		return nil
	}
	if d, ok := tok.(json.Delim); ok && d == '{' && policy {
		return nil // its members are checked as they come
	}
	if v, ok := tok.(string); tok == nil || ok && fold(v) == "disabled" {
		return nil
	}
	return fmt.Errorf("%w (a container network policy other than \"disabled\")", ErrServerFetch)
}

// toolEnvironment says whether top's current member is the environment
// of an OpenAI tool (the shell's): only a local one passes (see close),
// as a hosted one runs in a container OpenAI bills per session, which
// no answer's usage counts.
func (w *bodyWalk) toolEnvironment(top *frame) bool {
	return w.p == ProviderOpenAI && w.inTool() && top.key == "environment"
}

// checkEnvironment refuses a tool environment (toolEnvironment) given
// otherwise than as an object or null: a container's id.
func (w *bodyWalk) checkEnvironment(top *frame, tok json.Token) error {
	if tok == nil || tok == json.Delim('{') || !w.toolEnvironment(top) {
		return nil
	}
	return fmt.Errorf("%w (a tool environment %v: only a local one)", ErrUnmetered, tok)
}

// open starts an object (obj) or array inside top, as f says.
func (w *bodyWalk) open(top *frame, obj bool, f frame) error {
	if len(w.stack) >= maxNesting {
		return errBody
	}
	f.obj = obj
	f.container = top.obj && (top.key == "container" || top.key == "environment")
	f.env = obj && w.toolEnvironment(top)
	f.item = obj && w.p == ProviderOpenAI && len(w.stack) == 2 && w.stack[0].key == "input" && !top.obj
	w.stack = append(w.stack, f)
	if obj && w.p == ProviderAnthropic && w.inTool() {
		w.stack[len(w.stack)-1].tool = &serverTool{start: w.off, empty: true}
	}
	return nil
}

// close ends the innermost object or array; an OpenAI web search tool
// ends refused unless it was kept to the search index.
func (w *bodyWalk) close() error {
	w.closeNotes(w.stack[len(w.stack)-1])
	if top := w.stack[len(w.stack)-1]; top.search && (!top.cached || top.live) {
		return fmt.Errorf("%w (a web search tool with live web access: set external_web_access to false)", ErrServerFetch)
	} else if top.env && (top.hosted || !top.local) {
		return fmt.Errorf("%w (a tool environment other than local: a hosted container, billed per session beyond its tokens)", ErrUnmetered)
	}
	if top := w.stack[len(w.stack)-1]; top.search {
		w.shape.openAISearches++
	}
	if top := w.stack[len(w.stack)-1]; w.p == ProviderOpenAI && w.inTool() && (top.builtinTool || !top.callerTool) {
		w.shape.builtinTools++
	}
	if t := w.stack[len(w.stack)-1].tool; t != nil && (t.kind != toolOther || t.lookup) {
		w.shape.tools = append(w.shape.tools, *t)
	}
	w.stack = w.stack[:len(w.stack)-1]
	if len(w.stack) > 0 {
		w.stack[len(w.stack)-1].key, w.stack[len(w.stack)-1].named = "", false
	}
	return nil
}

// closeNotes notes, as an object (top) closes, what only its whole
// tells: an input item that refers to what the provider stored (an item
// reference without its type, or a reasoning item by its id alone,
// which the provider restores), and a text medium's dense bytes.
func (w *bodyWalk) closeNotes(top frame) {
	if top.item && top.itemID && (!top.itemTyped || top.reasoning && !top.encrypted) {
		w.shape.stored = true
	}
	if top.textMedia {
		w.shape.extra += top.media
	}
}

// member takes the name of the next member of the innermost object.
func (w *bodyWalk) member(top *frame, name string) error {
	top.key, top.named = fold(name), true
	switch {
	case len(w.stack) == 1:
		w.shape.topEmpty = false
	case w.inGenerationConfig():
		w.shape.genEmpty = false
	case top.tool != nil:
		top.tool.empty = false
	}
	w.noteStored(top.key)
	if err := w.checkName(top, name); err != nil {
		return err
	}
	// Chat Completions' web_search_options has a search model search
	// live, with no way to keep it to the index (see close); the path
	// itself is not passed either (allowedCall).
	if len(w.stack) == 1 && (top.key == "mcpservers" || w.p == ProviderOpenAI && top.key == "websearchoptions") ||
		w.p == ProviderGemini && w.inToolList() && top.key == "urlcontext" {
		return fmt.Errorf("%w (%q)", ErrServerFetch, name)
	}
	if len(w.stack) == 1 && w.p == ProviderOpenAI && top.key == "prompt" {
		// A stored prompt brings the tools it was saved with (file
		// search, a code interpreter, live web search, MCP servers),
		// which no check here sees; its id may stand in the repository.
		return fmt.Errorf("%w (%q: a stored prompt, whose tools the gateway cannot see)", ErrServerFetch, name)
	}
	if w.p == ProviderGemini && w.inToolList() {
		switch top.key {
		case "googlesearch", "googlesearchretrieval", "googlemaps", "enterprisewebsearch":
			// Grounding bills per prompt or per search query, and the
			// answer's usageMetadata counts none of it.
			return fmt.Errorf("%w (the tool %q bills per use beyond its tokens)", ErrUnmetered, name)
		}
	}
	return nil
}

// checkName refuses a member's name (of top, the innermost object)
// where the gateway reads bounds and the provider would not read it as
// the gateway does (readAs), and in a container's network policy any
// member but its type.
func (w *bodyWalk) checkName(top *frame, name string) error {
	if w.boundsAt() && !readAs(w.p, name) {
		return fmt.Errorf("%w (the member %q: spelled otherwise than the provider reads it)", ErrUnmetered, name)
	}
	if top.policy && top.key != "type" {
		// allowed_domains, domain_secrets: the container may connect out.
		return fmt.Errorf("%w (%q in a container network policy)", ErrServerFetch, name)
	}
	return nil
}

// noteToolType notes a tools entry's type: one its caller runs, or
// another (callerTool, builtinTool).
func (f *frame) noteToolType(typ string) {
	if t := fold(typ); t == "function" || t == "custom" {
		f.callerTool = true
	} else {
		f.builtinTool = true
	}
}

// noteCompaction notes, from a value (v, of the member key), that the
// call has the provider compact the conversation on its side: a type
// beginning "compact" below the top-level context_management
// (Anthropic's compact edits, OpenAI's compaction entries). Each
// compaction reads the whole prompt again.
func (w *bodyWalk) noteCompaction(key, v string) {
	if key == "type" && len(w.stack) > 1 && w.stack[0].key == "contextmanagement" && strings.HasPrefix(fold(v), "compact") {
		w.shape.compacts = true
	}
}

// noteStored notes, from a member's name (key, folded), a prompt that
// holds what the provider keeps (an earlier response's conversation, a
// stored conversation, an uploaded file, a context cache), longer than
// the body shows;
// an input item's id is noted for noteItem.
func (w *bodyWalk) noteStored(key string) {
	if top := &w.stack[len(w.stack)-1]; top.item && key == "id" {
		top.itemID = true
	}
	top0 := len(w.stack) == 1 && w.p == ProviderOpenAI
	// A Gemini call's cachedContent names a context cache the key's
	// project holds, read as part of the prompt.
	gemini := len(w.stack) == 1 && w.p == ProviderGemini && key == "cachedcontent"
	// A Gemini fileUri that passed the download check (a file of the
	// Files API by its name, files/…, which no address names) is an
	// uploaded file as a file_id is.
	if key == "fileid" || key == "fileuri" || gemini || top0 && (key == "previousresponseid" || key == "conversation") {
		w.shape.stored = true
	}
}

// noteItem notes, from a value (v, of the member key) of an OpenAI
// input item, an item reference: an item of an earlier response the
// provider stored (a message of any length), which the body names by
// its id alone. Its type is "item_reference" or left out (or null), so
// an item with an id counts as one unless it names another type.
//
// A reasoning (or compaction) item given by its id without its
// encrypted_content has the provider (under store:true) restore what it
// stored, read as input, of any length: it counts as a reference too
// (close).
func (w *bodyWalk) noteItem(key, v string) {
	top := &w.stack[len(w.stack)-1]
	if !top.item {
		return
	}
	if key == "encryptedcontent" && v != "" {
		top.encrypted = true
	}
	if key != "type" {
		return
	}
	switch fold(v) {
	case "itemreference":
		w.shape.stored = true
	case "":
	case "reasoning", "compaction":
		top.itemTyped, top.reasoning = true, true
	default:
		top.itemTyped = true
	}
}

// checkToolFee refuses a hosted tool whose per-use fee the answer's
// usage does not count and the meter does not read: OpenAI's file
// search, code interpreter (a container per session) and image
// generation, and Anthropic's code execution (container hours). The
// web searches of both are metered from the answer instead (answerUsage).
func checkToolFee(p Provider, typ string) error {
	t := fold(typ)
	switch {
	case p == ProviderOpenAI && (strings.HasPrefix(t, "filesearch") || strings.HasPrefix(t, "codeinterpreter") || strings.HasPrefix(t, "imagegeneration")),
		p == ProviderAnthropic && strings.HasPrefix(t, "codeexecution"):
		return fmt.Errorf("%w (a tool of type %q, billed per use beyond its tokens)", ErrUnmetered, typ)
	}
	return nil
}

// value takes a string value, the member key's (folded; "" in an
// array); under says it lies below a member naming a download source.
func (w *bodyWalk) value(key, v string, under bool) error {
	w.noteCompaction(key, v)
	w.noteItem(key, v)
	switch {
	case key == "model" && w.stack[len(w.stack)-1].tool != nil:
		// An advisor's model, which its consult's bound is priced at:
		// given twice, the provider may run the one the bound did not
		// price (a dear one behind a cheap one).
		t := w.stack[len(w.stack)-1].tool
		if t.model != "" || v == "" {
			return fmt.Errorf("%w (a tool's model given twice or empty)", ErrUnmetered)
		}
		t.model = v
	case key == "type" && fold(v) == "url":
		return fmt.Errorf("%w (a source of type %q)", ErrServerFetch, v)
	case key == "type" && w.inTool():
		// OpenAI's web search opens pages of the model's choosing
		// (open_page) unless the request keeps it to the search index.
		top := &w.stack[len(w.stack)-1]
		top.search = top.search || w.p == ProviderOpenAI && strings.HasPrefix(fold(v), "websearch")
		top.noteToolType(v)
		if top.tool != nil {
			top.tool.kind = max(top.tool.kind, kindOf(v))
			top.tool.lookup = top.tool.lookup || isLookup(v)
		}
		if err := checkToolType(v); err != nil {
			return err
		}
		return checkToolFee(w.p, v)
	case key == "type" && w.stack[len(w.stack)-1].env:
		top := &w.stack[len(w.stack)-1]
		top.local, top.hosted = top.local || fold(v) == "local", top.hosted || fold(v) != "local"
	case under && remoteSource(v):
		return fmt.Errorf("%w (a source the provider would download from %.60q)", ErrServerFetch, v)
	}
	return nil
}

// remoteSource says whether s, a value below a member naming a download
// source, is a place for the provider to fetch from: an address with any
// scheme but data: (which carries its content; gs: and file: name
// places too), or one starting with a slash (scheme-relative). It reads
// s as URL parsers do, which drop tabs and newlines anywhere and control
// characters and spaces at either end (so "ht\ttps:" is https:), by
// dropping every control character and space first. Plain words pass
// (an image's detail, a file id).
func remoteSource(s string) bool {
	t := strings.ToLower(strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s))
	if strings.HasPrefix(t, "data:") {
		return false
	}
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, `\`) {
		return true
	}
	scheme, _, found := strings.Cut(t, ":")
	return found && scheme != "" && !strings.ContainsFunc(scheme, func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '+' || r == '-' || r == '.')
	})
}

// checkToolType refuses a tool type that connects to an address the
// request gives: MCP (Anthropic's toolset, OpenAI's remote server) and
// URL fetch.
func checkToolType(typ string) error {
	t := fold(typ)
	if strings.HasPrefix(t, "mcp") || strings.HasPrefix(t, "webfetch") {
		return fmt.Errorf("%w (a tool of type %q)", ErrServerFetch, typ)
	}
	return nil
}
