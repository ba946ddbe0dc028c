package egress

import (
	"os"
	"strings"
	"testing"
)

// randomText is words (n of them, each of lo to hi bytes of alphabet,
// a fixed pseudo-random stream's choice) joined by sep.
func randomText(n, lo, hi int, alphabet, sep string) string {
	x := uint32(88172645)
	next := func(k int) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(k))
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		for range lo + next(hi-lo+1) {
			b.WriteByte(alphabet[next(len(alphabet))])
		}
	}
	return b.String()
}

// madeUpWords is n words of lo to hi letters each, joined by sep, made
// of common pairs and triples of letters alone (wordShaped: no word of
// any language, but shaped like one), capitalised where caps is true,
// a fixed pseudo-random stream's choice.
func madeUpWords(n, lo, hi int, caps bool, sep string) string {
	x := uint32(2654435761)
	next := func(k int) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(k))
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		w := []byte{byte('a' + next(26))}
		for size := lo + next(hi-lo+1); len(w) < size; {
			var fits []byte
			for c := byte('a'); c <= 'z'; c++ {
				p := w[len(w)-1]
				if commonPairs[int(p-'a')*26+int(c-'a')] != '.' && (len(w) < 2 || commonTriple(w[len(w)-2], p, c)) {
					fits = append(fits, c)
				}
			}
			if len(fits) == 0 {
				w = w[:1]
				continue
			}
			w = append(w, fits[next(len(fits))])
		}
		if caps {
			w[0] -= 'a' - 'A'
		}
		b.Write(w)
	}
	return b.String()
}

// joinEvery joins the words of s (separated by single spaces) in runs of
// k, camelCase identifiers where s's words are capitalised.
func joinEvery(s string, k int) string {
	words := strings.Split(s, " ")
	var b strings.Builder
	for i, w := range words {
		if i > 0 && i%k == 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

const (
	lowerLetters = "abcdefghijklmnopqrstuvwxyz"
	upperLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits       = "0123456789"
	marks        = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
)

// TestTextTokens: random text, which a tokenizer cuts into pieces of two
// bytes or fewer, is reckoned at least at the tokens a tokenizer makes
// of it (perByte: the fewest bytes a token of OpenAI's o200k_base and
// cl100k_base tokenizers held for such text, measured on text of the
// same kind), where a token per three bytes reckoned half of that or
// less; English and code stay near a token per three bytes (at most
// within: the most it may reckon, as a multiple of that), which is
// already above what they hold (about four bytes a token).
func TestTextTokens(t *testing.T) {
	t.Parallel()
	readme := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	uuids := strings.ReplaceAll(randomText(4000, 8, 8, "0123456789abcdef", " "), " ", "-")
	for _, r := range []struct {
		name    string
		s       string
		perByte float64 // bytes a token held at the fewest (0: not random)
		within  float64
	}{
		{"random lower case words of 8 to 15 letters", randomText(3000, 8, 15, lowerLetters, " "), 1.95, 0},
		{"random lower case words of 1 to 15 letters", randomText(3000, 1, 15, lowerLetters, " "), 1.98, 0},
		{"random words of 3 to 6 letters", randomText(3000, 3, 6, lowerLetters, " "), 2.07, 0},
		{"random letters, one a word", randomText(3000, 1, 1, lowerLetters, " "), 2, 0},
		{"random lower case words joined by dots", randomText(3000, 8, 15, lowerLetters, "."), 1.88, 0},
		{"random upper case words", randomText(3000, 8, 15, upperLetters, " "), 1.79, 0},
		{"random mixed case words", randomText(3000, 8, 15, lowerLetters+upperLetters, " "), 1.61, 0},
		{"random identifiers of 1 to 15 letters and digits", randomText(3000, 1, 15, lowerLetters+upperLetters+digits, " "), 1.48, 0},
		{"random snake case", randomText(3000, 3, 8, lowerLetters, "_"), 1.9, 0},
		{"random numbers", randomText(3000, 1, 15, digits, " "), 2.25, 0},
		{"random numbers in CSV", randomText(8000, 1, 7, digits, ","), 1.84, 0},
		{"random signed decimals in CSV", randomText(8000, 1, 7, digits+".-", ","), 1.68, 0},
		{"random hex words", randomText(3000, 8, 15, "0123456789abcdef", " "), 1.66, 0},
		{"hex words joined by dashes", uuids, 1.59, 0},
		{"random marks", randomText(1, 30000, 30000, marks, ""), 1.51, 0},
		{"random printable ASCII", randomText(1, 30000, 30000, lowerLetters+upperLetters+digits+marks+" ", ""), 1.32, 0},
		{"random white space", randomText(1, 30000, 30000, " \t\n\r", ""), 1.97, 0},
		{"random spaces and carriage returns", randomText(1, 30000, 30000, " \r", ""), 1.31, 0},
		{"letters on lines of their own", randomText(10000, 1, 1, lowerLetters, "\n"), 1, 0},
		{"words of one to three letters on lines of their own", randomText(10000, 1, 3, lowerLetters, "\n"), 1.3, 0},
		{"a pair of letters repeated", strings.Repeat("ab", 30000), 2, 0},
		{"words of a pair of letters repeated", strings.Repeat(strings.Repeat("ab", 12)+" ", 2400), 2.07, 0},
		{"short runs of Q after spaces", strings.Repeat("QQQQ ", 6000), 1.67, 0},
		{"short runs of Z after spaces", strings.Repeat("ZZZZ ", 6000), 1.67, 0},
		{"short runs of k after spaces", strings.Repeat("kkkk ", 6000), 1.67, 0},
		{"made-up lower case words", madeUpWords(8000, 3, 10, false, " "), 2.44, 0},
		{"made-up capitalised words", madeUpWords(8000, 3, 10, true, " "), 2.34, 0},
		{"made-up camelCase of three-letter pieces", joinEvery(madeUpWords(16000, 3, 3, true, " "), 8), 1.72, 0},
		{"made-up camelCase of two- to four-letter pieces", joinEvery(madeUpWords(16000, 2, 4, true, " "), 8), 1.74, 0},
		{"made-up two-letter words after commas", madeUpWords(20000, 2, 2, false, ","), 1.53, 0},
		{"made-up two-letter words after colons", madeUpWords(20000, 2, 2, false, ":"), 1.5, 0},
		{"made-up two-letter words after a space and a parenthesis", madeUpWords(15000, 2, 2, false, " ("), 2, 0},
		{"made-up words of three letters after slashes", madeUpWords(15000, 3, 3, false, "/"), 1.94, 0},
		{"made-up long words", madeUpWords(2000, 20, 40, false, " "), 2.37, 0},
		{"StdBat repeated", strings.Repeat("StdBat ", 6000), 2.3334, 0},
		{"a pair of marks no vocabulary holds", strings.Repeat("&|", 15000), 1, 0},
		{"pairs of marks after spaces", strings.Repeat(" )]", 10000), 1.5, 0},
		{"pairs of marks alternating", strings.Repeat("a>=>=", 6000), 1.25, 0},
		{"pairs of marks alternating, the other way", strings.Repeat("a*/*/", 6000), 1.25, 0},
		{"English", readme("../../docs/architecture.md"), 0, 1.07},
		{"Go", readme("gateway.go"), 0, 1.22},
		{"Go tests", readme("gateway_test.go"), 0, 1.4},
		{"lines of dashes", strings.Repeat(strings.Repeat("-", 79)+"\n", 100), 0, 1.05},
		{"a letter held down", strings.Repeat("x", 60000), 0, 1.01},
		{"short words", strings.Repeat("the cat sat on a mat, and it was not a dog. ", 1000), 0, 1.15},
	} {
		got := textTokens(r.s, true)
		third := float64(len(r.s)) / bytesPerToken
		switch {
		case r.perByte > 0 && float64(got) < float64(len(r.s))/r.perByte:
			t.Errorf("%s: reckoned %d tokens, a tokenizer makes %.0f", r.name, got, float64(len(r.s))/r.perByte)
		case r.within > 0 && float64(got) > r.within*third:
			t.Errorf("%s: reckoned %d tokens, %.2f times a token per three bytes, over %.2f", r.name, got, float64(got)/third, r.within)
		}
	}
}

// BenchmarkTextTokens: the reckoning of a prompt's text (textTokens,
// run on every string of every call's body) against one pass over the
// same bytes (denseBytes, the floor's), on planex's documentation and
// on made-up camelCase.
func BenchmarkTextTokens(b *testing.B) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, s string }{
		{"English", string(doc)},
		{"made-up camelCase", joinEvery(madeUpWords(4000, 3, 3, true, " "), 8)},
	} {
		b.Run(c.name+"/floor", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				denseBytes(c.s, true)
			}
		})
		b.Run(c.name+"/reckon", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				textTokens(c.s, true)
			}
		})
	}
}

// TestKnownWordSlots: the table knownWord looks words up in finds what a
// binary search of the lists finds (listedWord): every listed word in
// lower case and capitalised, none in upper case, and the same answer
// for random and made-up letters of each length.
func TestKnownWordSlots(t *testing.T) {
	t.Parallel()
	var words []string
	for n := 1; n <= 16; n++ {
		list := knownWordsOfLength(n)
		for k := 0; k+n <= len(list); k += n {
			w := list[k : k+n]
			words = append(words, w, strings.ToUpper(w[:1])+w[1:], strings.ToUpper(w))
		}
		words = append(words, strings.Fields(randomText(2000, n, n, lowerLetters, " "))...)
		words = append(words, strings.Fields(madeUpWords(2000, n, n, true, " "))...)
	}
	found := 0
	for _, w := range words {
		got, want := knownWord(w), listedWord(w)
		if got != want {
			t.Errorf("knownWord(%q) = %v, the list's search %v", w, got, want)
		}
		if got {
			found++
		}
	}
	if found < 2*2687 {
		t.Errorf("found %d words, fewer than the lists' twice 2,687", found)
	}
}

// TestDenseRunOf: the check runTokens makes of a run of base64's
// characters says what denseBytes says of it.
func TestDenseRunOf(t *testing.T) {
	t.Parallel()
	runs := strings.Fields(randomText(4000, 1, 40, lowerLetters+upperLetters+digits+"+/=-_", " "))
	runs = append(runs, strings.Fields(randomText(500, 14, 18, lowerLetters+"+", " "))...)
	runs = append(runs, strings.Fields(randomText(500, 14, 18, digits+"-", " "))...)
	for _, r := range runs {
		if got, want := denseRunOf(r), denseBytes(r, true) > 0; got != want {
			t.Errorf("denseRunOf(%q) = %v, denseBytes says %v", r, got, want)
		}
	}
}
