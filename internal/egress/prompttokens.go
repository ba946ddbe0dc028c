package egress

import (
	"slices"
	"strings"
)

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

// noteDense adds the tokens a string of the body may hold past a token
// per three of its bytes (extraTokens) to the shape: a member's name (key ""), or a value of the member key
// (folded; under: below a member naming a download source, a data:
// URL). The base64 of a medium (mediaKey) is held in its object until
// it closes, and counted only if the object said the medium is text;
// a data: URL counts unless it is an image's.
func (w *bodyWalk) noteDense(key, v string, under bool) {
	top := &w.stack[len(w.stack)-1]
	switch {
	case key != "" && mediaKey(key):
		w.shape.extra += extraTokens(v, false) + pixelTokens(v)
		w.shape.tileExtra += tileExtraTokens(v)
		w.shape.nanoExtra += nanoExtraTokens(v)
		top.media += extraTokens(v, true) - extraTokens(v, false)
	case under || key == "filedata":
		w.shape.extra += extraTokens(v, !strings.HasPrefix(strings.ToLower(v), "data:image/")) + pixelTokens(v)
		w.shape.tileExtra += tileExtraTokens(v)
		w.shape.nanoExtra += nanoExtraTokens(v)
	default:
		w.shape.extra += extraTokens(v, true)
	}
	if key == "filedata" && v != "" || (key == "mediatype" || key == "mimetype") && strings.EqualFold(v, "application/pdf") {
		// A document given inline (OpenAI's file_data, a PDF): the
		// provider reads out its text, compressed in the file and so of
		// any length, and an image of each page.
		w.shape.stored = true
	}
	if (key == "mediatype" || key == "mimetype") && mediaByLength(v) || (under || key == "filedata") && mediaByLength(strings.TrimPrefix(strings.ToLower(v), "data:")) {
		// Video or audio given inline bills by its length, which a
		// still picture or silence holds in a few bytes a second.
		w.shape.stored = true
	}
	switch {
	case key == "type" && fold(v) == "text",
		(key == "mediatype" || key == "mimetype") && strings.HasPrefix(strings.ToLower(v), "text/"):
		top.textMedia = true
	}
}

// pixelTokens is how many tokens the image v (its base64 or a data:
// URL) may be billed by its pixels (imageTokens) past a token per three
// of its bytes.
func pixelTokens(v string) int64 {
	return max(imageTokens(v)-int64(len(v))/bytesPerToken, 0)
}

// tileExtraTokens is how many tokens the image v may be billed by a
// model of tileBilled (tileImageTokens) past what promptTokens reckons
// it at (its pixels, or a token per three of its bytes).
func tileExtraTokens(v string) int64 {
	return max(tileImageTokens(v)-max(imageTokens(v), int64(len(v))/bytesPerToken), 0)
}

// nanoExtraTokens is how many tokens the image v may be billed by a
// model of nanoBilled past what promptTokens reckons it at: its pixels
// up to nanoImageTokens rather than maxImageTokens.
func nanoExtraTokens(v string) int64 {
	return max(imageTokensUpTo(v, nanoImageTokens)-max(imageTokens(v), int64(len(v))/bytesPerToken), 0)
}

// mediaByLength says whether the media type t names video or audio.
func mediaByLength(t string) bool {
	t = strings.ToLower(t)
	return strings.HasPrefix(t, "video/") || strings.HasPrefix(t, "audio/")
}

// promptTokens is how many tokens the gateway reckons a call's prompt
// (its body of size bytes) may hold, at most: a token per bytesPerToken
// bytes, and what its strings may hold beyond that (extraTokens).
func (sh bodyShape) promptTokens(size int64) int64 {
	return size/bytesPerToken + sh.extra
}

// promptTokensTo is promptTokens for a call to model: with, where the
// model bills images by gpt-4o-mini's tiles (tileBilled), what its
// images may bill past their pixels (tileExtra), and where it bills
// them at OpenAI's nano rate (nanoBilled), what they may bill past
// maxImageTokens (nanoExtra).
func (sh bodyShape) promptTokensTo(model string, size int64) int64 {
	switch {
	case tileBilled(model):
		return sh.promptTokens(size) + sh.tileExtra
	case nanoBilled(model):
		return sh.promptTokens(size) + sh.nanoExtra
	}
	return sh.promptTokens(size)
}

// extraTokens is how many tokens s may hold (textTokens) past a token
// per bytesPerToken of its bytes.
func extraTokens(s string, runs bool) int64 {
	return textTokens(s, runs) - int64(len(s))/bytesPerToken
}

// lower is c in lower case, where c is an ASCII letter.
func lower(c byte) byte { return c | 0x20 }

// wordShaped says whether w, a run of ASCII letters in one case (or
// capitalised), has only pairs and triples of letters common in words
// (commonPairs, commonTriples).
func wordShaped(w string) bool {
	for i := 0; i+1 < len(w); i++ {
		if commonPairs[int(lower(w[i])-'a')*26+int(lower(w[i+1])-'a')] == '.' {
			return false
		}
	}
	for i := 0; i+2 < len(w); i++ {
		if !commonTriple(lower(w[i]), lower(w[i+1]), lower(w[i+2])) {
			return false
		}
	}
	return true
}

// commonTriple says whether a, b and c (lower case letters) are a
// triple of commonTriples.
func commonTriple(a, b, c byte) bool {
	return commonTriples[(int(a-'a')*26+int(b-'a'))*26+int(c-'a')] != '.'
}

// commonPairs marks, row by first letter and column by second, the
// pairs of letters common in words (the letter where the pair is
// common, '.' where it is not): met more than 16 times in planex's own
// documentation.
const commonPairs = "" +
	".bcd.fg.i.klmn.p.rstuvwxyz" +
	"a...e...ij.lm.o..rs.u...y." +
	"a.c.e.ghi.klm.op.rstu...y." +
	"ab.de.g.i.klmnop.rs.uv..y." +
	"abcdefghi..lmnopqrstuvwxy." +
	"a..def..i..l..o..rstu...y." +
	"a...e.ghi..lmnop.rstu....." +
	"a...e...i.....o..rstu...y." +
	"abcdefg...klmnop.rst.v.x.z" +
	"a...e.........o...s.u....." +
	"a...ef..i....no...stu....." +
	"a.cdef..i.klm.op.rstuv..y." +
	"abcdef..i..lmnop.rs.u....." +
	"a.cdefg.i.klmnop.rstuv..y." +
	"abcdefg.ijklmnop.rstuvwxy." +
	"abcdefghi..lm.op.rstu...y." +
	"....................u....." +
	"abcdefg.i.klmnop.rstuvw.y." +
	"a.cde.ghi.klmnop.rstuvw.y." +
	"a.cdef.hi..lm.op.rstu.w.y." +
	"abcde.g.i..lmnop.rst...x.." +
	"a...e...i...m.....s......." +
	"a...e..hi....no..rs......." +
	"a.cde...i......p...t....y." +
	"a...e...i...m.op..st..w..." +
	"....e...............u....."

// wordTokens reckons the tokens of w, a run of ASCII letters in one
// case (or capitalised): a word of knownWord one; any other word-shaped
// one (its pairs and triples of letters common in words: made-up words,
// rare words and names) a token per two letters and one more; any other
// (random letters, which a tokenizer cuts into pieces of about two
// letters or fewer) two tokens per three letters. Measured with
// js-tiktoken's o200k_base and cl100k_base on every word-shaped word of
// two to four letters (alone, after a space, capitalised), the most
// either made of one was that (2, 2 and 3). Before, a word-shaped word
// was a token per six letters: made-up words of common triples hold
// about a token per 2.3 letters, and were reckoned at a token per three
// bytes, up to 1.8 times under their count when joined in camelCase.
func wordTokens(w string) int64 {
	switch {
	case len(w) >= 4 && periodTwo(w):
		// A pair of letters repeated (abab…): a vocabulary holds few
		// such runs, and cl100k cuts them a pair a token.
		return int64(len(w)+2) / 2
	case knownWord(w):
		return 1
	case wordShaped(w):
		return int64(len(w))/2 + 1
	}
	return int64(2*len(w)+2) / 3
}

// knownWord says whether w, a run of ASCII letters, is one of the
// common words of knownWordsOfLength, in lower case or capitalised: a
// word of up to packedLetters letters is looked up in knownWordSlots,
// a longer one in its list (listedWord).
func knownWord(w string) bool {
	if len(w) > packedLetters {
		return listedWord(w)
	}
	key, ok := packWord(w)
	if !ok {
		return false
	}
	for i := slotOf(key); ; i = (i + 1) & (knownSlots - 1) {
		switch knownWordSlots[i] {
		case key:
			return true
		case 0:
			return false
		}
	}
}

// packedLetters is the most letters packWord packs into a key.
const packedLetters = 12

// knownSlots is the size of knownWordSlots: a power of two, over twice
// the words it holds, so a look-up seldom passes more than a slot.
const (
	knownSlotBits = 13
	knownSlots    = 1 << knownSlotBits
)

// knownWordSlots holds the key (packWord) of every word of up to
// packedLetters letters that knownWordsOfLength lists, at the slot its
// key names (slotOf) or the first free one after it; 0 is a free slot.
// Before, every word was found by a binary search of its length's list:
// over half the reckoning's time on English.
var knownWordSlots = fillKnownWordSlots()

// fillKnownWordSlots makes knownWordSlots.
func fillKnownWordSlots() [knownSlots]uint64 {
	var slots [knownSlots]uint64
	for n := 2; n <= packedLetters; n++ {
		list := knownWordsOfLength(n)
		for k := 0; k+n <= len(list); k += n {
			key, _ := packWord(list[k : k+n])
			i := slotOf(key)
			for slots[i] != 0 {
				i = (i + 1) & (knownSlots - 1)
			}
			slots[i] = key
		}
	}
	return slots
}

// packWord is w's letters, folded to lower case, five bits each (a is
// 1), in a number: w, of at most packedLetters letters, in lower case
// or capitalised. false: an upper case letter past the first.
func packWord(w string) (uint64, bool) {
	var key uint64
	for i := 0; i < len(w); i++ {
		if i > 0 && isUpper(w[i]) {
			return 0, false
		}
		key = key<<5 | uint64(lower(w[i])-'a'+1)
	}
	return key, true
}

// slotOf is the slot of knownWordSlots a key is looked for from.
func slotOf(key uint64) uint64 {
	return key * 0x9e3779b97f4a7c15 >> (64 - knownSlotBits)
}

// listedWord says whether w is listed by knownWordsOfLength, in lower
// case or capitalised, by a binary search of its length's list.
func listedWord(w string) bool {
	list := knownWordsOfLength(len(w))
	if list == "" {
		return false
	}
	var folded [16]byte // no list holds longer words
	for i := 0; i < len(w); i++ {
		if i > 0 && isUpper(w[i]) {
			return false
		}
		folded[i] = lower(w[i])
	}
	key, n := string(folded[:len(w)]), len(w)
	lo, hi := 0, len(list)/n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if list[m*n:m*n+n] < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(list)/n && list[lo*n:lo*n+n] == key
}

// periodTwo says whether w repeats its first two letters to its end.
func periodTwo(w string) bool {
	for i := 2; i < len(w); i++ {
		if w[i] != w[i-2] {
			return false
		}
	}
	return true
}

// isRunByte says whether c is one of base64's characters (either
// alphabet, with its padding): a run of them is a word, a number, an
// identifier or an encoded blob.
func isRunByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' ||
		c == '+' || c == '/' || c == '=' || c == '-' || c == '_'
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// textTokens reckons at most how many tokens s (a string the JSON
// reader decoded) holds, by the pieces a tokenizer cuts text into before
// it looks them up in its vocabulary: a word (wordTokens; a space, or a
// mark before a word-shaped word, joins it), a number (a token per two
// digits), a mark (one, a pair common in code one: markTokens), a run of
// spaces (one, but for a single space before a word or a mark, which
// joins it), a run of one character repeated (a token per three bytes),
// a byte of a non-ASCII
// character one, and each byte of a run of base64 at least denseRun
// long holding a digit and a letter one. Random text is cut into far
// shorter pieces than English: random letters about two a token, random
// printable ASCII under one and a half bytes a token, where a token per
// three bytes reckoned half of that or less. The reckoning is at least
// that of a token per three bytes with a token for each denseBytes byte
// (English and code, reckoned at most a few tenths above it by the
// pieces, stay there). Where runs is false (a medium's base64, billed
// by the medium) only the non-ASCII characters count beyond a token per
// three bytes.
func textTokens(s string, runs bool) int64 {
	d := denseBytes(s, runs)
	floor := (int64(len(s))-d)/bytesPerToken + d
	if !runs {
		return floor
	}
	var n int64
	for i := 0; i < len(s); {
		if k := repeats(s, i); k >= minRepeat {
			n += repeatTokens(s[i], k)
			i += k
			continue
		}
		j := i + 1
		switch c := s[i]; {
		case c >= 0x80:
			n++
		case isRunByte(c):
			for j < len(s) && isRunByte(s[j]) {
				j++
			}
			n += runTokens(s[i:j])
		case isSpace(c):
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			n += spaceTokens(s[i:j], s[j:])
		default:
			for j < len(s) && isMark(s[j]) {
				j++
			}
			n += markTokens(s[i:j], i > 0 && s[i-1] == ' ')
		}
		i = j
	}
	return max(n, floor)
}

// minRepeat is the shortest run of one ASCII character repeated that
// textTokens reckons at a token per three bytes: a tokenizer's
// vocabulary holds such runs (a line of dashes, padding, a letter held
// down) at three bytes a token or more (digits) or far more (the rest).
const minRepeat = 4

// cheapRepeats are the ASCII characters a run of which (of any length
// from minRepeat on) o200k and cl100k both make at most a token per
// three bytes of: white space but the carriage return, most marks and
// digits, and the letters whose runs their vocabularies hold.
const cheapRepeats = "\t\n !#$%()*+,-./0123456789:;<=>?@ABCEFLMXY\\^_abcdefoxy|~"

// repeatTokens reckons the tokens of a run of k of the ASCII character
// c: a token per three bytes for cheapRepeats, a token a byte for a
// control character (the carriage return among them) or DEL, which no
// vocabulary merges, and a token per two for the rest (Q, G, brackets,
// quotes: measured with js-tiktoken's o200k_base and cl100k_base on
// runs of 4 to 3,000 of each). Before, every run was a token per three
// bytes: 590 KB of DEL, 590K tokens, was reckoned at 197K.
func repeatTokens(c byte, k int) int64 {
	switch {
	case strings.IndexByte(cheapRepeats, c) >= 0:
		return int64(k+2) / 3
	case c < ' ' || c == 0x7f:
		return int64(k)
	}
	return int64(k+1) / 2
}

// repeats is how many times s[i], an ASCII character, is repeated from
// i on (0 for a byte of a non-ASCII character).
func repeats(s string, i int) int {
	if s[i] >= 0x80 {
		return 0
	}
	k := i + 1
	for k < len(s) && s[k] == s[i] {
		k++
	}
	return k - i
}

// isMark says whether c is ASCII punctuation but base64's characters.
func isMark(c byte) bool {
	return c < 0x80 && !isRunByte(c) && !isSpace(c) && c > ' '
}

// wordStarts says whether a word starts at r[j], a letter after a
// letter: an upper case one after a lower case one (camelCase), or
// before one (the Server of HTTPServer).
func wordStarts(r string, j int) bool {
	return isUpper(r[j]) && (!isUpper(r[j-1]) || j+1 < len(r) && isLetter(r[j+1]) && !isUpper(r[j+1]))
}

// runTokens reckons the tokens of a run of base64's characters (see
// textTokens): all of it dense where it is at least denseRun long and
// holds a digit and a letter; otherwise its words (split where a lower
// case letter meets an upper case one, as camelCase and HTTPServer are),
// numbers and marks.
func runTokens(r string) int64 {
	if denseRunOf(r) {
		return int64(len(r))
	}
	var n int64
	for i := 0; i < len(r); {
		if k := repeats(r, i); k >= minRepeat {
			n += repeatTokens(r[i], k)
			i += k
			continue
		}
		j := i + 1
		switch c := r[i]; {
		case isLetter(c):
			for j < len(r) && isLetter(r[j]) && !wordStarts(r, j) {
				j++
			}
			n += wordTokens(r[i:j])
		case isDigit(c):
			for j < len(r) && isDigit(r[j]) {
				j++
			}
			n += int64(j-i+1) / 2
		default:
			n++
		}
		i = j
	}
	return n
}

// denseRunOf says whether r, a run of base64's characters, is dense
// (denseBytes counts its every byte): at least denseRun long, holding a
// digit and a letter. Before, runTokens called denseBytes on every run,
// a second pass over each word.
func denseRunOf(r string) bool {
	if len(r) < denseRun {
		return false
	}
	digit, letter := false, false
	for i := 0; i < len(r) && !(digit && letter); i++ {
		digit = digit || isDigit(r[i])
		letter = letter || isLetter(r[i])
	}
	return digit && letter
}

// commonMarks is pairs of marks common in code and JSON, each a token
// of o200k's and cl100k's vocabularies, alone, repeated, after a letter
// and after a line feed (measured with js-tiktoken). Before, the list
// had slipped a place, so that it paired &|, |/, -+, =!, =< and .:,
// which both tokenizers cut a token a mark.
const commonMarks = `":",{}()[]);),].},};])})))]]}}:===!=<=&&||///*->=><-++--..::("")[""]{""}""\"(*&(!(*)',')('` +
	"`,`)];:\".($(#[${/></%s%d:()[]()-.,"

// markTokens reckons the tokens of a run of marks: a token for each
// mark, or for a pair of commonMarks where its second mark does not
// make a pair with the mark after it (a tokenizer may pair that way
// instead, leaving the first mark and the last alone: a)]()] ). spaced
// says a space before the run joins its first mark (spaceTokens
// reckoned it free), which then pairs with nothing. Before, a space and
// a pair were reckoned one token, " )]" two to o200k and cl100k.
func markTokens(m string, spaced bool) int64 {
	var n int64
	for i := 0; i < len(m); i++ {
		n++
		if spaced && i == 0 {
			continue
		}
		if i+1 < len(m) && commonMark(m[i], m[i+1]) && (i+2 >= len(m) || !commonMark(m[i+1], m[i+2])) {
			i++
		}
	}
	return n
}

// commonMark says whether a and b are a pair of commonMarks.
func commonMark(a, b byte) bool {
	for i := 0; i+1 < len(commonMarks); i += 2 {
		if commonMarks[i] == a && commonMarks[i+1] == b {
			return true
		}
	}
	return false
}

// spaceTokens reckons the tokens of a run of white space followed by
// next (the rest of the string, "" at its end). A tokenizer cuts the run
// where its character changes (a run of one kind, spaces, tabs, line
// feeds or CRLF pairs, is one token per several: a token per eight
// reckoned, per two CRLF pairs), a run holding a lone carriage return
// is cut into about a token a character, and
// before something else the run's last character goes apart: a space
// joins a word or a mark after it, anything else is a token. Before,
// a run was one token per eight bytes whatever it held: 600 bytes of
// carriage returns and spaces at random were some 475 tokens to
// cl100k and reckoned at 200 (the least, a token per three bytes), a
// line feed before each letter at nothing.
func spaceTokens(run, next string) int64 {
	if len(run) == 1 {
		// The most common run, between two words: no list made.
		if run == " " && spaceJoins(next) {
			return 0
		}
		return 1
	}
	var units []string // a CRLF pair or a byte
	for k := 0; k < len(run); k++ {
		if run[k] == '\r' && k+1 < len(run) && run[k+1] == '\n' {
			units, k = append(units, run[k:k+2]), k+1
			continue
		}
		units = append(units, run[k:k+1])
	}
	var n int64
	if next != "" {
		last := units[len(units)-1]
		units = units[:len(units)-1]
		if last != " " || !spaceJoins(next) {
			n++
		}
	}
	if slices.Contains(units, "\r") {
		return n + int64(len(units)) // a token a character, or near it
	}
	for k := 0; k < len(units); {
		m := k + 1
		for m < len(units) && units[m] == units[k] {
			m++
		}
		if r := int64(m - k); units[k] == "\r\n" {
			n += 1 + (r-1)/2
		} else {
			n += 1 + (r-1)/8
		}
		k = m
	}
	return n
}

// spaceJoins says whether a space before next (a string's rest after
// it) joins next's first token: a word's or a mark's, but not a run of
// one character repeated (repeatTokens), whose first character the
// space takes as a token apart from the rest's. Before, such a space
// was free: "QQQQ " repeated, three tokens a run to o200k and cl100k,
// was reckoned at two.
func spaceJoins(next string) bool {
	return next != "" && (isLetter(next[0]) || isMark(next[0])) && repeats(next, 0) < minRepeat
}
