package egress

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// rareCJK is n characters of CJK Extension B, each different from the
// last.
func rareCJK(n int) string {
	b := make([]byte, 0, 4*n)
	for i := range n {
		b = utf8.AppendRune(b, rune(0x20000+i%40000))
	}
	return string(b)
}

// randomBase64 is n bytes of base64 of a fixed pseudo-random stream.
func randomBase64(n int) string {
	raw := make([]byte, n*3/4+3)
	x := uint32(2463534242)
	for i := range raw {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		raw[i] = byte(x)
	}
	return base64.StdEncoding.EncodeToString(raw)[:n]
}

// TestRedTeamOutputBoundAtTheLongPromptRate: with the budget nearly
// spent, the program sends a prompt of over 200K tokens, whose output the
// provider bills at 1.5 times the list price. The gateway asked its Cap
// for the call's bound at the model's ordinary rate, so the calls running
// when the budget ran out wrote half again what it set aside. A body
// reckoned over 200K tokens (a token per three bytes), or one whose
// prompt the provider holds, is now bounded at the long-prompt rate: Cap
// is asked for the model marked LongPrompt, which the meter's prices
// know.
func TestRedTeamOutputBoundAtTheLongPromptRate(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, body, want string
	}{
		{"long", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("x", 3*LongPromptTokens+30) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"stored", `{"model":"gpt-5","previous_response_id":"resp_1","input":"again"}`, "gpt-5" + LongPrompt},
		{"short", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"hi"}]}`, "claude-sonnet-5-5"},
		// One character repeated is a token per three bytes or fewer
		// only for characters the vocabularies merge: 590 KB of DEL (a
		// token a byte to o200k and cl100k) or of Q (a token per two),
		// and carriage returns (a token a byte, two bytes each escaped).
		{"DEL repeated", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("\x7f", 590000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"Q repeated", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("Q", 590000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"carriage returns", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat(`\r`, 250000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		// A PDF given inline: the provider reads out its text (compressed
		// in the file, so of any length) and an image of each page.
		{"anthropic, a PDF", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjcK"}}]}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"openai, a PDF", `{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjcK"}]}]}`, "gpt-5" + LongPrompt},
		{"gemini, a PDF", `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"Application/PDF","data":"JVBERi0xLjcK"}}]}]}`, "gemini-3-pro" + LongPrompt},
		// A Gemini context cache the key's project holds, of any length.
		{"gemini, a cached content", `{"cachedContent":"cachedContents/c1","contents":[{"role":"user","parts":[{"text":"again"}]}]}`, "gemini-3-pro" + LongPrompt},
		// A file of the key's project's Files API named without an
		// address (files/…), of up to a million tokens.
		{"gemini, a file by its name", `{"contents":[{"role":"user","parts":[{"fileData":{"mimeType":"text/plain","fileUri":"files/abc123"}}]}]}`, "gemini-3-pro" + LongPrompt},
		{"gemini, short", `{"contents":[{"role":"user","parts":[{"text":"again"}]}]}`, "gemini-3-pro"},
		// Dense text holds far more tokens a byte than English: 140,000
		// characters of CJK Extension B (4 bytes each, none a token of
		// its own, several tokens each) in 560 KB, random base64 in
		// 550 KB: each is over 200K tokens under the 600 KB a token per
		// three bytes lets through. (Escaped, \uXXXX is 6 bytes a
		// character, reckoned at 2 tokens, enough for 3 bytes of UTF-8.)
		{"rare CJK", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + rareCJK(140000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"base64", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + randomBase64(550000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"base64 in a member's name", `{"model":"claude-sonnet-5-5","max_tokens":2000,"metadata":{"` + randomBase64(550000) + `":1},"messages":[]}`, "claude-sonnet-5-5" + LongPrompt},
		// Random words of letters alone, or random printable ASCII (its
		// quotes and backslashes escaped), hold a token per two bytes
		// or fewer: over 300K tokens in 590 KB, reckoned 196K at a
		// token per three bytes.
		{"random words", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + randomText(47000, 8, 15, lowerLetters, " ") + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"random printable ASCII", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":` + quoted(randomText(1, 560000, 560000, lowerLetters+upperLetters+digits+marks+" ", "")) + `}]}`, "claude-sonnet-5-5" + LongPrompt},
		// White space a tokenizer cuts finely: a letter on each line
		// is a token a byte (240K tokens in 360 KB escaped), random
		// spaces and carriage returns a token per 1.3 bytes (230K in
		// 450 KB escaped), reckoned 160K and 150K before.
		{"letters on lines of their own", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":` + quoted(randomText(120000, 1, 1, lowerLetters, "\n")) + `}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"random spaces and carriage returns", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":` + quoted(randomText(1, 300000, 300000, " \r", "")) + `}]}`, "claude-sonnet-5-5" + LongPrompt},
		// A pair of letters repeated is a token a pair to cl100k: 225K
		// tokens in 450 KB, reckoned 150K before.
		{"a pair of letters repeated", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("ab", 225000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		// Short runs of a character the vocabularies merge poorly, each
		// after a space: the space joins the run's first character, and
		// the rest is a token per two, three tokens a run of four (240K
		// tokens in 400 KB), reckoned 160K before as if the space were
		// free.
		{"short runs of Q", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("QQQQ ", 80000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		// Made-up words of common pairs and triples of letters, which
		// the rule for words took for English at a token per six
		// letters: camelCase joins of three-letter pieces (some 209K
		// tokens to cl100k in 360 KB) and two-letter words after
		// colons (318K in 480 KB), reckoned 120K and 160K before.
		{"made-up camelCase", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + joinEvery(madeUpWords(115000, 3, 3, true, " "), 8) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"made-up words after colons", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + madeUpWords(160000, 2, 2, false, ":") + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		// Marks the tokenizers cut a token each, which the rule for
		// pairs of marks took for one token a pair: a pair no
		// vocabulary holds (&| from a list read out of step) and a pair
		// after a space (the space joins its first mark, the second
		// goes alone): 360K and 240K tokens to o200k and cl100k,
		// reckoned 180K and 120K before.
		{"a pair of marks no vocabulary holds", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("&|", 180000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		{"pairs of marks after spaces", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat(" )]", 120000) + `"}]}`, "claude-sonnet-5-5" + LongPrompt},
		// An image's base64 is billed by its size in pixels, not its
		// bytes, and English text stays at a token per three bytes.
		{"an image", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + randomBase64(550000) + `"}}]}]}`, "claude-sonnet-5-5"},
		{"english", `{"model":"claude-sonnet-5-5","max_tokens":2000,"messages":[{"role":"user","content":"` + strings.Repeat("the quick brown fox jumps over 12 lazy dogs, ", 12000) + `"}]}`, "claude-sonnet-5-5"},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			status, msg, asked := capsAsked(t, r.body)
			if status != http.StatusOK || len(asked) == 0 || asked[0] != r.want {
				t.Errorf("status %d (%s), Cap asked for %q, want %q first", status, msg, asked, r.want)
			}
		})
	}
}

// capsAsked sends body through a gateway to a provider that answers
// every call with a token of usage: OpenAI's for a gpt-5 body, Gemini's
// for one with contents, else Anthropic's. It returns the answer's status
// and text and the models Cap was asked for, in order (a long prompt's
// with LongPrompt on its name).
func capsAsked(t *testing.T, body string) (int, string, []string) {
	t.Helper()
	p, path := ProviderAnthropic, "/v1/messages"
	switch {
	case strings.Contains(body, "gpt-5"):
		p, path = ProviderOpenAI, "/responses"
	case strings.Contains(body, "contents"):
		p, path = ProviderGemini, "/v1beta/models/gemini-3-pro:generateContent"
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	var mu sync.Mutex
	var asked []string
	g := &Gateway{Provider: p, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
		Cap: func(model string) (int64, func()) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, model)
			return 100000, nil
		}}
	c, stop := ServeGatewayForTest(t, g)
	req, _ := http.NewRequest(http.MethodPost, "http://gateway"+path, strings.NewReader(body))
	req.Header.Set("X-Api-Key", "ph")
	req.Header.Set("Authorization", "Bearer ph")
	status, msg := statusOf(t, c, req)
	stop()
	mu.Lock()
	defer mu.Unlock()
	return status, msg, slices.Clone(asked)
}

// quoted is s as a JSON string.
func quoted(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// TestDenseBytes: the bytes of a string the gateway reckons a token
// each: non-ASCII characters' and long runs of base64 holding a digit
// and a letter, not words, repeated letters or short identifiers.
func TestDenseBytes(t *testing.T) {
	t.Parallel()
	b64 := randomBase64(40)
	for _, r := range []struct {
		s    string
		runs bool
		want int64
	}{
		{"plain English words, 1234 and a_snake_case_name.", true, 0},
		{strings.Repeat("x", 100), true, 0},
		{"中文", true, 6},
		{"😀 ok", true, 4},
		{b64, true, 40},
		{b64, false, 0},
		{"sha " + strings.Repeat("0123456789abcdef", 2) + " ok", true, 32},
		{"0123456789abcdef"[:15] + " TestRedTeamGatewayPins", true, 0},
		{"a3f9c2e1d4b5a6c7", true, 16},
		{b64 + "中" + b64, true, 83},
	} {
		if got := denseBytes(r.s, r.runs); got != r.want {
			t.Errorf("denseBytes(%.30q, %v) = %d, want %d", r.s, r.runs, got, r.want)
		}
	}
}
