package locate

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
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
	quoteSpanRe  = regexp.MustCompile("``([^`\n]+)``|`([^`\n]+)`|\"([^\"\n]{6,120})\"|'([^'\n]{6,120})'")
	quoteSplitRe = regexp.MustCompile(`\.\.\.|…|%s|%r|\{[^}]*\}`)
	quoteWordRe  = regexp.MustCompile(`[a-z]{2,}`)
	// quoteCodeRe marks a quote that is code or a file name rather than
	// words a program prints; the other signals read those.
	quoteCodeRe = regexp.MustCompile(`[()=\[\]/<>]|\.(py|rst|txt|cfg)\b|^import |^from `)
)

// The message of an error or warning the issue shows (in a traceback, a
// log, a compiler's output) was written by a string literal in the code that
// raised it, in every language. The words between its run-time values
// (quoted names, numbers, paths, reprs) are found verbatim there.
var (
	// errorLineRe finds a printed error or warning and captures its
	// message: Python, JavaScript and Java exception names
	// (ValueError:, java.lang.IllegalStateException:), and log and
	// compiler prefixes (WARNING:, error[E0308]:, panic:).
	errorLineRe = regexp.MustCompile(`(?m)(?:^|[\s:"'])(?:(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception|Warning)|(?i:error|warning|fatal|panic))(?:\[\w+\])?: +(.+?)\s*$`)
	// errorValueRe marks what a program fills in at run time, or where a
	// literal may have been cut in two, which the words between them are
	// split at: quoted values, reprs and brackets, hexadecimal and decimal
	// numbers, paths, and sentence or clause ends.
	errorValueRe = regexp.MustCompile("\\B'[^'\n]*'\\B|\"[^\"\n]*\"|`[^`\n]*`|<[^>\n]*>|[()\\[\\]{}=]|\\b0x[0-9a-fA-F]+\\b|[-+]?\\d[\\w.]*|\\S*/\\S*|[.;:!?](?:\\s|$)|\\.\\.\\.|…|%s|%r|%d")
)

// errorMessageWords is how many words of two letters or more a piece of
// an error message needs: fewer is the glue between two values ("of
// column", "got"), found everywhere.
const errorMessageWords = 3

// errorPhrases returns the pieces of the error and warning messages an
// issue shows, lower-cased with spaces collapsed, in first-seen order.
func errorPhrases(query string) []string {
	var out []string
	for _, m := range errorLineRe.FindAllStringSubmatch(query, -1) {
		for _, part := range errorValueRe.Split(m[1], -1) {
			p := strings.Trim(strings.Join(strings.Fields(strings.ToLower(part)), " "), " .:,;")
			if len(quoteWordRe.FindAllString(p, -1)) < errorMessageWords {
				continue
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
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
	read := func(f int) (string, bool) {
		if t, ok := texts[f]; ok {
			return t, true
		}
		if len(texts) >= quoteReadMax {
			return "", false
		}
		// Regular files only, no link followed: the tree may have
		// changed since it was mapped.
		data, _, skip, err := repomap.ReadRegular(buf, filepath.Join(root, filepath.FromSlash(ix.files[f].path)), passageMaxBytes)
		buf = data
		t := ""
		if err == nil && skip == "" {
			t = string(bytes.Join(bytes.Fields(bytes.ToLower(data)), []byte(" ")))
		}
		texts[f] = t
		return t, true
	}
	all := func(int) bool { return true }
	ix.phraseSignal(quotedPhrases(query), fQuotedText, "holds words the issue quotes", all, read, ev)
	// A message is raised by code; the tests that check it and the
	// documents that explain it are not where it is raised.
	raises := func(f int) bool { d := &ix.files[f]; return d.code() && !d.test() && !d.doc() }
	ix.phraseSignal(errorPhrases(query), fErrorText, "holds the message of an error the issue shows", raises, read, ev)
}

// phraseSignal sets feature feat on the files keep accepts that, read with
// read, hold one of phrases, crediting each phrase by its rarity among them.
func (ix *Index) phraseSignal(phrases []string, feat feature, what string, keep func(int) bool, read func(int) (string, bool), ev *evidence) {
	credit := map[int]float64{}
	named := map[int][]string{}
	n := float64(len(ix.files))
	for _, p := range phrases {
		var holders []int
		for _, f := range ix.filesWithAll(repomap.Terms(p)) {
			if !keep(f) {
				continue
			}
			t, ok := read(f)
			if !ok {
				break
			}
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
	for f, v := range credit {
		ev.feats[f][feat] = saturate(v / quoteScale)
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
