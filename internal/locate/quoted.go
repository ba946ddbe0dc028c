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

// quotedText sets the quoted-text signal on the candidates that hold a
// rare quote of the issue verbatim (case and spacing aside). root is the
// tree the index describes; without one the signal is skipped.
func (ix *Index) quotedText(root, query string, ev *evidence) {
	phrases := quotedPhrases(query)
	if root == "" || len(phrases) == 0 {
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
	credit := map[int]float64{}
	named := map[int][]string{}
	n := float64(len(ix.files))
	for _, p := range phrases {
		var holders []int
		for _, f := range ix.filesWithAll(repomap.Terms(p)) {
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
		ev.feats[f][fQuotedText] = saturate(v / quoteScale)
		ids := named[f]
		if len(ids) > 3 {
			ids = append(ids[:3], "…")
		}
		ev.note(fQuotedText, f, fmt.Sprintf("holds words the issue quotes: %s", strings.Join(ids, ", ")))
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
