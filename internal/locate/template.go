package locate

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/planexhq/planex/internal/repomap"
)

// A message a program prints is a string literal of its code with the
// run-time values filled in where the literal has placeholders: "at column
// 23: unexpected character "\"" was printed from "at column {}: {}" and
// 'unexpected character "{}"'. Pieces of two words between two values are
// glue found everywhere when looked for as words (messageSignal needs three),
// but the literal's whole shape, its fixed text with a value of any length
// at each placeholder, matching a line the issue shows is precise, in any
// language that formats strings (%s, %d, %v, {}, {name}, ${name}). The
// template signals read the literals with placeholders of the files that
// hold most of a shown line's words and credit the files whose
// literal matches the line, by rarity.
const (
	// templateFilesPerLine is how many files are read for each line: those
	// holding most of its words (lineFiles).
	templateFilesPerLine = 30
	// templatePostingBytes is the longest posting list of a term the
	// files to read are chosen by (lineFiles).
	templatePostingBytes = 64 << 10
	// templateLineTerms caps the terms of a line looked up.
	templateLineTerms = 32
	// templateReadMax caps the files the template signals read per query
	// (beside the quoted-text signal's, which share the same read cache).
	templateReadMax = 200
	// templateMaxLines caps the shown lines matched per query.
	templateMaxLines = 64
	// templateLineMax is the longest line matched, in bytes.
	templateLineMax = 400
	// templateLiteralMax is the longest literal read as a template.
	templateLiteralMax = 240
)

// placeholderRe is a formatting placeholder of the common languages:
// printf-style (%s, %-5.2f, %(name)s, Go's %v and %q), brace-style ({},
// {0}, {name!r}, f-string {expr}) and template-literal ${expr}.
var placeholderRe = regexp.MustCompile(`%(?:\([\w.]+\))?[-+ #0]*\d*(?:\.\d+)?[sdrifgxqvep]|\$?\{[^{}\n]{0,80}\}`)

// lineFiles finds, for the lines of one query, the files holding most
// of a line's words, weighed by their rarity: a literal that prints the
// line holds every word of its fixed text, and which words those are is
// not known before it is read. Each term's postings are decoded once per
// query, and a term whose postings pass templatePostingBytes (one in
// tens of thousands of files) is left out: it weighs next to nothing, and
// decoding it for every line would grow with the repository.
type lineFiles struct {
	ix     *Index
	keep   func(int) bool
	terms  map[string]termFiles
	score  []float64 // per file, for the line being scored
	scored []int     // the files score holds a value for
}

// termFiles are a term's files that keep accepts and how many files hold
// it in all; none when it is left out.
type termFiles struct {
	files []int
	df    int
}

func newLineFiles(ix *Index, keep func(int) bool) *lineFiles {
	return &lineFiles{ix: ix, keep: keep, terms: map[string]termFiles{}, score: make([]float64, len(ix.files))}
}

// best lists the templateFilesPerLine files sharing most of line's words,
// best first, ties to the lower file number.
func (lf *lineFiles) best(line string) []int {
	terms := slices.Compact(slices.Sorted(slices.Values(repomap.Terms(line))))
	if len(terms) > templateLineTerms {
		terms = terms[:templateLineTerms]
	}
	n := float64(len(lf.ix.files))
	for _, t := range terms {
		tf := lf.files(t)
		if tf.df == 0 {
			continue
		}
		idf := math.Log(1 + n/float64(tf.df))
		for _, f := range tf.files {
			if lf.score[f] == 0 {
				lf.scored = append(lf.scored, f)
			}
			lf.score[f] += idf
		}
	}
	top := bestFiles(lf.scored, func(f int) float64 { return lf.score[f] }, templateFilesPerLine)
	for _, f := range lf.scored {
		lf.score[f] = 0
	}
	lf.scored = lf.scored[:0]
	out := make([]int, len(top))
	for i, b := range top {
		out[i] = b.file
	}
	return out
}

// files returns term's files, decoded once.
func (lf *lineFiles) files(t string) termFiles {
	if tf, ok := lf.terms[t]; ok {
		return tf
	}
	var tf termFiles
	if v := lf.ix.content.get(t); len(v) <= templatePostingBytes {
		eachPosting(v, func(f int, _ uint32) {
			tf.df++
			if f < len(lf.ix.files) && lf.keep(f) {
				tf.files = append(tf.files, f)
			}
		})
	}
	lf.terms[t] = tf
	return tf
}

// template is a literal's fixed text around its placeholders.
type template struct {
	parts []string // the fixed text between placeholders, in order
	long  string   // the longest part, which a line must hold
	words int      // words of two letters or more in the parts
}

// parseTemplate reads a string literal (lower-cased, as read) as a
// template: at least one placeholder and a part of two words or more, or
// false.
func parseTemplate(lit string) (template, bool) {
	if !placeholderRe.MatchString(lit) {
		return template{}, false
	}
	t := template{parts: placeholderRe.Split(lit, -1)}
	best := 0
	for _, p := range t.parts {
		n := partWords(p)
		t.words += n
		best = max(best, n)
		if len(p) > len(t.long) {
			t.long = p
		}
	}
	return t, best >= 2
}

// partWords counts the words of a template's part: its fields holding
// two letters in a row. A dotted name ("sphinx.ext.") is one word, as
// printed prose is what the part must hold.
func partWords(p string) int {
	n := 0
	for _, f := range strings.Fields(p) {
		if quoteWordRe.MatchString(f) {
			n++
		}
	}
	return n
}

// matches reports whether the template, with a value of one byte or more
// at each placeholder, occurs in line.
func (t template) matches(line string) bool {
	if !strings.Contains(line, t.long) {
		return false
	}
	var b strings.Builder
	for i, p := range t.parts {
		if i > 0 {
			b.WriteString(`.+?`)
		}
		b.WriteString(regexp.QuoteMeta(p))
	}
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(line)
}

// stringLiterals returns the quoted runs of text ("…", '…', `…`) of at most
// templateLiteralMax bytes, escaped quotes kept inside. An apostrophe in a
// comment opens a run that is not a literal; it is read like one and only
// counts if it matches a line the issue shows.
func stringLiterals(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		q := text[i]
		if q != '"' && q != '\'' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(text) && j-i <= templateLiteralMax && text[j] != q {
			if text[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(text) || j-i > templateLiteralMax {
			continue
		}
		out = append(out, strings.NewReplacer(`\"`, `"`, `\'`, `'`).Replace(text[i+1:j]))
		i = j
	}
	return out
}

// fileTemplates returns the templates among a file's literals.
func fileTemplates(text string) []template {
	var out []template
	for _, lit := range stringLiterals(text) {
		if t, ok := parseTemplate(lit); ok {
			out = append(out, t)
		}
	}
	return out
}

// shownLines are the lines an issue shows a program printed: the errors
// and warnings it shows (errorLineRe, inline errors) and its prose quotes,
// lower-cased with spaces collapsed, in first-seen order.
func shownLines(query string) []string {
	var raw []string
	for _, m := range errorLineRe.FindAllStringSubmatch(query, -1) {
		raw = append(raw, m[0])
	}
	prose := fenceRe.ReplaceAllString(query, " ")
	for _, m := range inlineErrorRe.FindAllStringSubmatch(prose, -1) {
		raw = append(raw, m[0])
	}
	for _, m := range quoteSpanRe.FindAllStringSubmatch(prose, -1) {
		raw = append(raw, m[1]+m[2]+m[3]+m[4])
	}
	return normLines(raw)
}

// normLines lower-cases and collapses the spaces of lines, dropping those
// with fewer than two words or longer than templateLineMax, and repeats.
func normLines(raw []string) []string {
	var out []string
	for _, l := range raw {
		l = strings.Join(strings.Fields(strings.ToLower(l)), " ")
		if len(l) > templateLineMax || len(quoteWordRe.FindAllString(l, 3)) < 2 || slices.Contains(out, l) {
			continue
		}
		out = append(out, l)
		if len(out) == templateMaxLines {
			break
		}
	}
	return out
}

// templateSignal sets feat on the files of ix keep accepts whose literals, as
// templates, match one of lines, each line credited by its rarity among
// them (at most quoteMaxFiles files). The files read for a line are those
// holding most of its words (lineFiles).
func templateSignal(ix *Index, lines []string, feat feature, what string, keep func(int) bool, read func(int) (string, bool), ev *evidence) {
	if len(lines) == 0 {
		return
	}
	templates := map[int][]template{}
	lf := newLineFiles(ix, keep)
	for _, l := range lines {
		for _, f := range lf.best(l) {
			if _, ok := templates[f]; ok {
				continue
			}
			if len(templates) >= templateReadMax {
				break
			}
			t, ok := read(f)
			if !ok {
				break
			}
			templates[f] = fileTemplates(t)
		}
	}
	n := float64(len(ix.files))
	credit := map[int]float64{}
	named := map[int][]string{}
	files := slices.Sorted(maps.Keys(templates))
	for _, l := range lines {
		var holders, words []int
		for _, f := range files {
			best := 0
			for _, t := range templates[f] {
				if t.words > best && t.matches(l) {
					best = t.words
				}
			}
			if best > 0 {
				holders, words = append(holders, f), append(words, best)
			}
		}
		if len(holders) == 0 || len(holders) > quoteMaxFiles {
			continue
		}
		// A template of two words is weaker evidence than one of three.
		rarity := math.Log(1 + n/float64(len(holders)))
		for k, f := range holders {
			credit[f] += rarity * math.Min(1, float64(words[k])/3)
			named[f] = append(named[f], "“"+l+"”")
		}
	}
	ev.setPhraseCredit(feat, what, credit, named)
}
