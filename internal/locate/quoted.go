package locate

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/repomap"
)

// An issue often quotes what the program printed ("alias of ...", a
// warning's words); the file that holds those words verbatim is where a
// maintainer looks first. Only rare quotes count: one found in many files
// is a common phrase, not a message.
const (
	// quoteMaxFiles is how many files may hold a quote for it to count.
	quoteMaxFiles = 10
	// quoteReadMax caps the files read per query: the index narrows each
	// quote to the files holding all its words before any is read.
	quoteReadMax = 600
	// quoteScale is the summed rarity that sets the signal to 1-1/e.
	quoteScale = 5.0
)

var (
	quoteSpanRe = regexp.MustCompile("``([^`\n]+)``|`([^`\n]+)`|\"([^\"\n]{6,120})\"|'([^'\n]{6,120})'")
	// quoteSplitRe cuts a quote at what a program fills in: format
	// placeholders, ellipses, and values quoted inside it (`unexpected
	// character "/"`), which would otherwise make the whole quote read
	// as code.
	quoteSplitRe = regexp.MustCompile(`\.\.\.|…|%s|%r|\{[^}]*\}|"[^"]*"|\B'[^']*'\B`)
	quoteWordRe  = regexp.MustCompile(`[a-z]{2,}`)
	// quoteCodeRe marks a quote that is code or a file name rather than
	// words a program prints; the other signals read those.
	quoteCodeRe = regexp.MustCompile(`[()=\[\]/<>]|\.(py|rst|txt|cfg)\b|^import |^from `)
)

// errorNameRe is what names a printed error or warning: an exception's
// name, dotted or not, or a log or compiler prefix.
const errorNameRe = `(?:(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception|Warning)|(?i:error|warning|fatal|panic))`

// The message of an error or warning the issue shows (in a traceback, a
// log, a compiler's output, or quoted inline) was written by a string
// literal in the code that raised it, in every language. The words between
// its run-time values (quoted names, numbers, paths, reprs) are found
// there (messageSignal).
var (
	// errorLineRe finds a printed error or warning and captures its
	// message: Python, JavaScript and Java exception names
	// (ValueError:, java.lang.IllegalStateException:), and log and
	// compiler prefixes (WARNING:, error[E0308]:, panic:).
	errorLineRe = regexp.MustCompile(`(?m)(?:^|[\s:"'])` + errorNameRe + `(?:\[\w+\])?: +(.+?)\s*$`)
	// inlineErrorRe is an error or warning quoted in prose as inline
	// code (`ValueError: …`), which ends at the closing backtick instead
	// of the line's end.
	inlineErrorRe = regexp.MustCompile("`" + errorNameRe + "(?:\\[\\w+\\])?: +([^`\n]+)`")
	// errorValueRe marks what a program fills in at run time, or where a
	// literal may have been cut in two, which the words between them are
	// split at: names in code (errorNameValue), quoted values, reprs and
	// brackets, hexadecimal and decimal numbers, paths, and sentence or
	// clause ends.
	errorValueRe = regexp.MustCompile(errorNameValue + "|\\B'[^'\n]*'\\B|\"[^\"\n]*\"|`[^`\n]*`|<[^>\n]*>|[()\\[\\]{}=]|\\b0x[0-9a-fA-F]+\\b|[-+]?\\d[\\w.]*|\\S*/\\S*|[.;:!?](?:\\s|$)|\\.\\.\\.|…|%s|%r|%d")
)

// errorClauseRe splits a message at sentence and clause ends, where a
// literal may have been cut in two.
var errorClauseRe = regexp.MustCompile(`[.;:!?](?:\s|$)|\.\.\.|…`)

// errorNameValue is a name in code a message shows, filled in at run time:
// dotted (_io.StringIO, pkg.mod.func) or snake_case (time_bin_start).
// Printed words are neither.
const errorNameValue = `\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b|\b\w*[A-Za-z0-9]_\w+\b|\b_\w+\b`

// errorMessageWords is how many words of two letters or more a piece of
// an error message needs: fewer is the glue between two values ("of
// column", "got"), found everywhere.
const errorMessageWords = 3

// errorPhrases returns the pieces of the error and warning messages an
// issue shows, lower-cased with spaces collapsed, in first-seen order.
func errorPhrases(query string) []string {
	var out []string
	found := errorLineRe.FindAllStringSubmatch(query, -1)
	found = append(found, inlineErrorRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(query, " "), -1)...)
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, m := range found {
		for _, part := range errorValueRe.Split(m[1], -1) {
			if p := messagePiece(part); len(quoteWordRe.FindAllString(p, -1)) >= errorMessageWords {
				add(p)
			}
		}
		for _, clause := range errorClauseRe.Split(m[1], -1) {
			if s, ok := messageSkeleton(clause); ok {
				add(s)
			}
		}
	}
	return out
}

// messagePiece is part of a message lower-cased, spaces collapsed and
// trimmed of the punctuation around it.
func messagePiece(part string) string {
	return strings.Trim(strings.Join(strings.Fields(strings.ToLower(part)), " "), " .:,;")
}

// messageSkeleton returns a clause of a message with its run-time values
// left out, when the values cut it into pieces too short to count alone:
// "No name 'errors' in module 'list'" is "no name in module". The literal
// that printed it holds those words around its placeholders (%r, %s, {},
// %v), which leave no word behind, so the skeleton is a run of words the
// code holds in that order, in any language, while each piece ("no name",
// "in module") is glue found everywhere. It needs two pieces or more and
// errorMessageWords+1 words, the least the message signal credits without
// every word of a piece in a row.
func messageSkeleton(clause string) (string, bool) {
	var kept []string
	pieces := 0
	for _, part := range errorValueRe.Split(clause, -1) {
		if p := messagePiece(part); quoteWordRe.MatchString(p) {
			kept = append(kept, p)
			pieces++
		}
	}
	s := strings.Join(kept, " ")
	if pieces < 2 || len(quoteWordRe.FindAllString(s, -1)) <= errorMessageWords {
		return "", false
	}
	return s, true
}

// quotedPhrases returns the prose quotes of an issue (backticks or
// quotation marks outside fenced code) that read as printed words: two
// words or more, not code-shaped, lower-cased with spaces collapsed and cut
// at format placeholders and ellipses, in first-seen order.
func quotedPhrases(query string) []string {
	prose := fenceRe.ReplaceAllString(query, "")
	var out []string
	for _, m := range quoteSpanRe.FindAllStringSubmatch(prose, -1) {
		span := m[1] + m[2] + m[3] + m[4] // exactly one group matched
		for _, part := range quoteSplitRe.Split(span, -1) {
			p := strings.Trim(strings.Join(strings.Fields(strings.ToLower(part)), " "), " .:,;")
			if len(p) < 6 || len(quoteWordRe.FindAllString(p, 2)) < 2 || quoteCodeRe.MatchString(p) {
				continue
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// quotedText sets two signals on the files that hold a rare phrase of the
// issue verbatim (case and spacing aside): the quoted-text signal for its
// prose quotes and the error-text signal for the messages of the errors it
// shows, which are weighed apart since a message is also held by every
// file that checks or documents it. root is the tree the index describes;
// without one the signals are skipped.
func (ix *Index) quotedText(root, query string, ev *evidence) {
	if root == "" {
		return
	}
	texts := map[int]string{} // normalised text of each file read
	var buf []byte
	readMax := quoteReadMax
	read := func(f int) (string, bool) {
		if t, ok := texts[f]; ok {
			return t, true
		}
		if len(texts) >= readMax {
			return "", false
		}
		// Regular files only, no link followed: the tree may have
		// changed since it was mapped.
		data, _, skip, err := repomap.ReadRegular(buf, root, ix.files[f].path, passageMaxBytes)
		buf = data
		t := ""
		if err == nil && skip == "" {
			t = string(bytes.Join(bytes.Fields(bytes.ToLower(data)), []byte(" ")))
		}
		texts[f] = t
		return t, true
	}
	all := func(int) bool { return true }
	phrases := quotedPhrases(query)
	if len(phrases) > maxQuotedPhrases {
		phrases = phrases[:maxQuotedPhrases]
	}
	ix.phraseSignal(phrases, fQuotedText, "holds words the issue quotes", all, read, ev)
	// A message is raised by code; the tests that check it and the
	// documents that explain it are not where it is raised.
	raises := func(f int) bool { d := &ix.files[f]; return d.code() && !d.test() && !d.doc() }
	words := map[int]string{} // each file's text as its words alone
	readWords := func(f int) (string, bool) {
		if w, ok := words[f]; ok {
			return w, true
		}
		t, ok := read(f)
		if !ok {
			return "", false
		}
		words[f] = " " + messageWords(t) + " "
		return words[f], true
	}
	ix.messageSignal(boundWindows(errorPhrases(query)), raises, readWords, ev)
	// The templates' reads have their own budget: the quotes may have
	// spent the one above. Only errors and quotes are matched: the
	// routine lines of a program's output (fenced lines) match the
	// driver that prints them whatever went wrong (bench/repomap-locate.md).
	readMax = len(texts) + templateReadMax
	templateSignal(ix, shownLines(query), fMsgTemplate, "prints an error or quote the issue shows", raises, read, ev)
}

// maxQuotedPhrases bounds the prose quotes of one query looked up (each a
// posting-list intersection, with files read): an issue quotes a handful
// (6 at most on the dev set), and 64 KiB of short quotes of common words
// are some 2,800, which took 1.1 s and 776 MiB of allocations on 8,000
// files, growing with the repository.
const maxQuotedPhrases = 128

// quoteSearchMax bounds the bytes of file text the quoted-text signal
// searches per query: the files read are bounded (quoteReadMax), but each
// quote searched every one of them its words' postings named again, so
// 128 quotes of words every file holds searched each file read 128 times
// (2.7 s against 0.46 s unquoted on 80 files of 180 KiB, growing with
// the files). Quotes past it are left out, as past the read budget.
const quoteSearchMax = 64 << 20

// maxMessageWindows bounds the runs of words the error messages of one
// query are looked up by (each a posting-list intersection, and each
// piece's files checked for each of its runs): an issue's error lines
// have a few dozen (23 at most on the dev set), and anyone who can open
// an issue can fill 64 KiB with one "Error:" line of common words, about
// 20,000 runs, which took 328 MiB and 2.4 s on 8,000 files.
const maxMessageWindows = 256

// boundWindows keeps the pieces, in the order, while their runs
// of words number at most maxMessageWindows in all.
func boundWindows(pieces []string) []string {
	n := 0
	for i, p := range pieces {
		if n += max(len(strings.Fields(messageWords(p)))-messageWindow+1, 0); n > maxMessageWindows {
			return pieces[:i]
		}
	}
	return pieces
}

// messageWindow is how many words in a row of an error message a file's
// code must hold: as many as a piece of a message needs (errorMessageWords).
const messageWindow = errorMessageWords

// messageWords returns the words of text (runs of two letters or more, as
// quoteWordRe counts them) joined by single spaces: what is left of a
// message once the punctuation, placeholders and quotes a literal wraps
// it in are gone.
func messageWords(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		if !isLowerLetter(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isLowerLetter(text[j]) {
			j++
		}
		if j-i >= 2 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(text[i:j])
		}
		i = j
	}
	return b.String()
}

func isLowerLetter(c byte) bool { return 'a' <= c && c <= 'z' }

// messageWindows returns the runs of messageWindow words of a piece of a
// message, in order (the run at index i starts at its word i), and how
// many words the piece has.
func messageWindows(piece string) (windows []string, words int) {
	ws := strings.Fields(messageWords(piece))
	for i := 0; i+messageWindow <= len(ws); i++ {
		windows = append(windows, strings.Join(ws[i:i+messageWindow], " "))
	}
	return windows, len(ws)
}

// messageSignal sets the error-text signal on the code files that hold a
// piece of an error message the issue shows, by its words. A message is
// filled in at run time in places the issue cannot show (a class's name,
// a plural's s: "TimeSeries object is invalid - expected 'time' as the
// first columns" printed by "{} object is invalid - expected '{}' as the
// first column{}"), and its literal is often cut in two across lines, so
// a piece is looked for as runs of messageWindow words in a row. A file
// holds a piece when the runs it holds cover every word of the piece but
// one (a filled-in name, an inflected word), and at least two runs' worth
// (messageWindow+1 words) unless the piece is shorter, and one of its runs
// is rare (at most quoteMaxFiles files hold it); it is credited by the
// rarity of the rarest. Three words in a row alone are common ("has no
// attribute", "must be in"), a message's words nearly all in order are
// not. Runs are looked up rarest words first, so the read budget goes to
// those likeliest to be rare.
func (ix *Index) messageSignal(pieces []string, keep func(int) bool, read func(int) (string, bool), ev *evidence) {
	all := map[string]bool{}
	for _, p := range pieces {
		ws, _ := messageWindows(p)
		for _, w := range ws {
			all[w] = true
		}
	}
	// Each file read is scanned once for the runs it holds: searched
	// for each run in turn, up to quoteReadMax files were each scanned
	// maxMessageWindows times.
	heldBy := map[int]map[string]bool{}
	holds := func(f int) (map[string]bool, bool) {
		if h, ok := heldBy[f]; ok {
			return h, true
		}
		t, ok := read(f)
		if !ok {
			return nil, false
		}
		heldBy[f] = windowsHeld(t, all)
		return heldBy[f], true
	}
	rare := rareWindows(pieces, ix.filesWithAll, keep, holds)
	n := float64(len(ix.files))
	credit := map[int]float64{}
	named := map[int][]string{}
	for _, p := range pieces { // in the order, so notes and sums are stable
		windows, words := messageWindows(p)
		best := map[int]float64{}
		for _, w := range windows {
			for _, f := range rare[w] {
				best[f] = math.Max(best[f], math.Log(1+n/float64(len(rare[w]))))
			}
		}
		for _, f := range slices.Sorted(maps.Keys(best)) {
			held, _ := holds(f) // read already, to find it holds a run
			covered := make([]bool, words)
			for i, w := range windows {
				if held[w] {
					for j := i; j < i+messageWindow; j++ {
						covered[j] = true
					}
				}
			}
			if countTrue(covered) >= max(words-1, min(words, messageWindow+1)) {
				credit[f] += best[f]
				named[f] = append(named[f], "“"+p+"”")
			}
		}
	}
	ev.setPhraseCredit(fErrorText, "holds the message of an error the issue shows", credit, named)
}

// rareWindows finds, for each run of words of pieces, the files keep
// accepts that hold it, as holds tells (false: over the read budget),
// when there are 1 to quoteMaxFiles of them. withAll lists the files
// whose contents hold every one of a run's index terms, which are the
// only ones read.
func rareWindows(pieces []string, withAll func(terms []string) []int, keep func(int) bool, holds func(int) (map[string]bool, bool)) map[string][]int {
	var windows []string
	for _, p := range pieces {
		ws, _ := messageWindows(p)
		windows = append(windows, ws...)
	}
	windows = slices.Compact(slices.Sorted(slices.Values(windows)))
	// Only the number of each run's candidates is kept while they are
	// ordered: the lists of all runs at once grow with the repository.
	cands := make(map[string]int, len(windows))
	for _, w := range windows {
		cands[w] = len(withAll(repomap.Terms(w)))
	}
	sort.SliceStable(windows, func(a, b int) bool { return cands[windows[a]] < cands[windows[b]] })
	rare := map[string][]int{}
	for _, w := range windows {
		var holders []int
		for _, f := range withAll(repomap.Terms(w)) {
			if !keep(f) {
				continue
			}
			held, ok := holds(f)
			if !ok {
				break
			}
			if held[w] {
				holders = append(holders, f)
			}
		}
		if len(holders) > 0 && len(holders) <= quoteMaxFiles {
			rare[w] = holders
		}
	}
	return rare
}

// windowsHeld returns which of windows (runs of messageWindow words)
// the words text t holds, scanning it once: t is words joined by single
// spaces with a space at each end, as messageWords and readWords make
// it, so a run found here is one strings.Contains(t, " "+w+" ") finds.
func windowsHeld(t string, windows map[string]bool) map[string]bool {
	held := map[string]bool{}
	var starts [messageWindow]int // where the last words began, round robin
	n := 0
	for i := 0; i < len(t); {
		if t[i] == ' ' {
			i++
			continue
		}
		j := i + 1
		for j < len(t) && t[j] != ' ' {
			j++
		}
		starts[n%messageWindow] = i
		n++
		if n >= messageWindow {
			if w := t[starts[n%messageWindow]:j]; windows[w] {
				held[w] = true
			}
		}
		i = j
	}
	return held
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// phraseSignal sets feature feat on the files keep accepts that, read with
// read, hold one of phrases, crediting each phrase by its rarity among them.
func (ix *Index) phraseSignal(phrases []string, feat feature, what string, keep func(int) bool, read func(int) (string, bool), ev *evidence) {
	credit := map[int]float64{}
	named := map[int][]string{}
	n := float64(len(ix.files))
	searched := 0
	for _, p := range phrases {
		var holders []int
		for _, f := range ix.filesWithAll(repomap.Terms(p)) {
			if !keep(f) {
				continue
			}
			t, ok := read(f)
			if !ok || searched+len(t) > quoteSearchMax {
				break
			}
			searched += len(t)
			if strings.Contains(t, p) {
				holders = append(holders, f)
			}
		}
		if len(holders) == 0 || len(holders) > quoteMaxFiles {
			continue
		}
		w := math.Log(1 + n/float64(len(holders)))
		for _, f := range holders {
			credit[f] += w
			named[f] = append(named[f], "“"+p+"”")
		}
	}
	ev.setPhraseCredit(feat, what, credit, named)
}

// setPhraseCredit sets feat from each file's summed rarity credit,
// saturated, with a note naming its first phrases.
func (ev *evidence) setPhraseCredit(feat feature, what string, credit map[int]float64, named map[int][]string) {
	for f, v := range credit {
		ev.feats.set(feat, f, saturate(v/quoteScale))
		ids := named[f]
		if len(ids) > 3 {
			ids = append(ids[:3], "…")
		}
		ev.note(feat, f, fmt.Sprintf("%s: %s", what, strings.Join(ids, ", ")))
	}
}

// filesWithAll lists, in file order, the files whose contents hold every
// one of terms (none for no terms).
func (ix *Index) filesWithAll(terms []string) []int {
	var out []int
	for i, t := range slices.Compact(slices.Sorted(slices.Values(terms))) {
		v := ix.content.get(t)
		if v == nil {
			return nil
		}
		prev := make(map[int]bool, len(out))
		for _, f := range out {
			prev[f] = true
		}
		var has []int
		eachPosting(v, func(f int, _ uint32) {
			if f < len(ix.files) && (i == 0 || prev[f]) {
				has = append(has, f)
			}
		})
		out = has
		if len(out) == 0 {
			return nil
		}
	}
	return out
}
