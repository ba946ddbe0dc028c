package egress

import "strings"

// denseRun is the shortest run of base64's characters (either
// alphabet, with its padding) holding a digit and a letter that the
// gateway reckons at a token a byte: random base64 or hex, which a
// model's tokenizer cuts into far shorter pieces than words.
const denseRun = 16

// denseBytes counts the bytes of s (a string the JSON reader decoded)
// that may each be a token of their own: those of every non-ASCII
// character (CJK, emoji: a byte-level tokenizer makes at most a token
// of each byte, and a character its vocabulary lacks takes one for
// each) and, unless runs is false, those of each run of base64's
// characters at least denseRun long holding a digit and a letter.
func denseBytes(s string, runs bool) int64 {
	n, run := int64(0), 0
	digit, letter := false, false
	end := func() {
		if run >= denseRun && digit && letter {
			n += int64(run)
		}
		run, digit, letter = 0, false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			n++
			end()
		case !runs:
		case '0' <= c && c <= '9':
			run, digit = run+1, true
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			run, letter = run+1, true
		case c == '+' || c == '/' || c == '=' || c == '-' || c == '_':
			run++
		default:
			end()
		}
	}
	end()
	return n
}

// mediaKey says whether a member (folded) holds a medium's bytes in
// base64, which the provider bills by the medium (an image by its size
// in pixels), not by the base64's length: Anthropic's and Gemini's
// data. Its runs count only where the medium is text (noteMedia).
func mediaKey(key string) bool {
	return key == "data"
}

// noteDense adds the dense bytes (denseBytes) of a string of the body
// to the shape: a member's name (key ""), or a value of the member key
// (folded; under: below a member naming a download source, a data:
// URL). The base64 of a medium (mediaKey) is held in its object until
// it closes, and counted only if the object said the medium is text;
// a data: URL counts unless it is an image's.
func (w *bodyWalk) noteDense(key, v string, under bool) {
	top := &w.stack[len(w.stack)-1]
	switch {
	case key != "" && mediaKey(key):
		w.shape.dense += denseBytes(v, false)
		top.media += denseBytes(v, true) - denseBytes(v, false)
	case under || key == "filedata":
		w.shape.dense += denseBytes(v, !strings.HasPrefix(strings.ToLower(v), "data:image/"))
	default:
		w.shape.dense += denseBytes(v, true)
	}
	if key == "filedata" && v != "" || (key == "mediatype" || key == "mimetype") && strings.EqualFold(v, "application/pdf") {
		// A document given inline (OpenAI's file_data, a PDF): the
		// provider reads out its text, compressed in the file and so of
		// any length, and an image of each page.
		w.shape.stored = true
	}
	switch {
	case key == "type" && fold(v) == "text",
		(key == "mediatype" || key == "mimetype") && strings.HasPrefix(strings.ToLower(v), "text/"):
		top.textMedia = true
	}
}

// promptTokens is how many tokens the gateway reckons a call's prompt
// (its body of size bytes) may hold, at most: a token per bytesPerToken
// bytes, and a token for each dense byte (denseBytes) besides.
func (sh bodyShape) promptTokens(size int64) int64 {
	return size/bytesPerToken + sh.dense - sh.dense/bytesPerToken
}
