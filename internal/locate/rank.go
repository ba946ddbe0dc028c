package locate

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/repomap"
)

// DefaultMaxQueryBytes caps the query text; longer issues are truncated.
const DefaultMaxQueryBytes = 64 << 10

// ErrEmptyQuery is returned for a query with no text.
var ErrEmptyQuery = errors.New("query is empty")

// Options tune Rank.
type Options struct {
	// Baseline ranks by plain BM25 over file contents only.
	Baseline bool
	// MaxQueryBytes truncates longer queries; 0 means DefaultMaxQueryBytes.
	MaxQueryBytes int
	// Logger receives notes such as query truncation; nil means slog.Default().
	Logger *slog.Logger
	// Weights of the signals; nil means DefaultWeights (weights.json).
	Weights *Weights
}

// Ranked is a file and why it ranked where it did.
type Ranked struct {
	Path    string
	Score   float64
	Reasons []string
}

// Rank orders the files of m for query, best first, returning at most k
// (k <= 0 means 10). Files with no evidence at all are left out.
func Rank(m *repomap.Map, query string, k int, opts Options) ([]Ranked, error) {
	if m == nil {
		return nil, errors.New("ranking files: no repository map")
	}
	return NewIndex(m).Rank(query, k, opts)
}

// rank is Index.Rank before the index file's read errors are checked.
func (ix *Index) rank(query string, k int, opts Options) ([]Ranked, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if k <= 0 {
		k = 10
	}
	query, err := prepareQuery(query, opts.MaxQueryBytes, log)
	if err != nil {
		return nil, err
	}
	if len(ix.files) == 0 {
		return nil, fmt.Errorf("ranking files: %w", repomap.ErrNoSourceFiles)
	}
	if opts.Baseline {
		qts := queryTerms(query)
		scores, top := ix.contentBM25(qts)
		var matched []int
		for i, s := range scores {
			if s > 0 {
				matched = append(matched, i)
			}
		}
		var scored []Ranked
		best := bestFiles(matched, func(i int) float64 { return scores[i] }, k)
		top.find(fileNumbers(best))
		for _, b := range best {
			scored = append(scored, Ranked{Path: ix.files[b.file].path, Score: b.score,
				Reasons: []string{fmt.Sprintf("bm25 %.2f on content (%s)", b.score, strings.Join(top.terms(b.file), ", "))}})
		}
		return scored, nil
	}
	w := opts.Weights
	if w == nil {
		w = DefaultWeights()
	}
	ev := ix.evidence(query, ix.root)
	var scored []Ranked
	best := bestFiles(ev.cands, ev.feats.scorer(w), k)
	for _, m := range ev.matched {
		m.find(fileNumbers(best))
	}
	for _, b := range best {
		scored = append(scored, Ranked{Path: ix.files[b.file].path, Score: b.score, Reasons: ev.explain(b.file, w)})
	}
	return scored, nil
}

// fileNumbers are the files of scored.
func fileNumbers(scored []scoredFile) []int {
	out := make([]int, len(scored))
	for i, s := range scored {
		out[i] = s.file
	}
	return out
}

// scoredFile is a file index and its score.
type scoredFile struct {
	file  int
	score float64
}

// bestFiles returns the k best of files under score, best first, ties by
// path (files are numbered in path order). Only the head is wanted, out
// of thousands of candidates on a large repository, so a heap of the k
// best so far replaces sorting them all; the order is the same, since no
// two files compare equal.
func bestFiles(files []int, score func(int) float64, k int) []scoredFile {
	k = max(0, min(k, len(files)))
	// heap is a binary heap whose root is the worst of the best so far.
	heap := make([]scoredFile, 0, k)
	for _, f := range files {
		c := scoredFile{f, score(f)}
		switch {
		case len(heap) < k:
			heap = append(heap, c)
			for i := len(heap) - 1; i > 0 && compareScored(heap[(i-1)/2], heap[i]) < 0; i = (i - 1) / 2 {
				heap[i], heap[(i-1)/2] = heap[(i-1)/2], heap[i]
			}
		case k > 0 && compareScored(c, heap[0]) < 0:
			heap[0] = c
			siftDown(heap)
		}
	}
	slices.SortFunc(heap, compareScored)
	return heap
}

// compareScored orders scored files best first: higher score, then lower
// file number.
func compareScored(a, b scoredFile) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	return cmp.Compare(a.file, b.file)
}

// siftDown restores the heap below its root (the worst entry on top).
func siftDown(h []scoredFile) {
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && compareScored(h[l], h[worst]) > 0 {
			worst = l
		}
		if r < len(h) && compareScored(h[r], h[worst]) > 0 {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// prepareQuery makes the query valid UTF-8 and cuts it to limit bytes (0
// means DefaultMaxQueryBytes) on a character boundary.
func prepareQuery(query string, limit int, log *slog.Logger) (string, error) {
	query = strings.ToValidUTF8(query, " ")
	if strings.TrimSpace(query) == "" {
		return "", ErrEmptyQuery
	}
	if limit <= 0 {
		limit = DefaultMaxQueryBytes
	}
	if len(query) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(query[cut]) {
			cut--
		}
		log.Info("locate: query truncated", "bytes", len(query), "kept", cut)
		query = query[:cut]
	}
	return query, nil
}

func saturate(x float64) float64 { return 1 - math.Exp(-x) }

// title is the first non-blank line of the query.
func title(q string) string {
	for _, line := range strings.Split(q, "\n") {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}

// evidence is every signal for every file that has any, with the notes
// that explain them.
type evidence struct {
	cands []int
	feats featureColumns
	// notes are each signal's notes by file: a few files get one (a
	// mention, a passage, a test link), so a map, where a string for
	// every file took 1.6 MB a signal at 100,000 files.
	notes [numFeatures]map[int32]string
	// matched names, for the BM25 signals, the best-matching terms of
	// the files explained, and matchedNote the words before them; the
	// note is written only for the files explained, not for every file
	// that matched.
	matched     [numFeatures]*termMatches
	matchedNote [numFeatures]string
	// otherLang is the note of a file held back for its language, made
	// when an explanation reads it: one a candidate held back was a map
	// entry a file, for the few files a ranking explains.
	otherLang func(i int) string
}

func (ev *evidence) note(f feature, i int, s string) {
	if ev.notes[f] == nil {
		ev.notes[f] = map[int32]string{}
	}
	ev.notes[f][int32(i)] = appendNote(ev.notes[f][int32(i)], s)
}

// noteOf is file i's note on signal f ("" if none).
func (ev *evidence) noteOf(f feature, i int) string {
	if f == fOtherLang && ev.otherLang != nil && ev.feats.at(f, i) != 0 {
		return ev.otherLang(i)
	}
	return ev.notes[f][int32(i)]
}

// explain lists each signal's contribution to file i's score, largest first.
func (ev *evidence) explain(i int, w *Weights) []string {
	type part struct {
		v    float64
		note string
	}
	var parts []part
	for f := feature(0); f < numFeatures; f++ {
		fi := ev.feats.at(f, i)
		v := w[f] * fi
		// A signal at weight zero adds nothing, but what it found (a
		// traceback frame in the file, a module the issue names) still
		// explains the file, and it feeds the signals of its neighbours.
		shown := w[f] == 0 && fi != 0 && ev.noteOf(f, i) != ""
		if v == 0 && !shown {
			continue
		}
		// Notes read on their own; signals without one use their label.
		note := featureInfo[f].label
		if n := ev.noteOf(f, i); n != "" {
			note = n
		} else if ts := ev.matched[f].terms(i); len(ts) > 0 {
			note = ev.matchedNote[f] + " " + quoteList(ts)
		}
		if f == fPrior {
			note = fmt.Sprintf("%s (%.2f)", note, fi)
		}
		parts = append(parts, part{v, note})
	}
	sort.SliceStable(parts, func(a, b int) bool { return math.Abs(parts[a].v) > math.Abs(parts[b].v) })
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, fmt.Sprintf("%+.2f %s", p.v, p.note))
	}
	return out
}

func (ix *Index) evidence(query, root string) *evidence {
	query = dropEnvironment(query)
	qts := queryTerms(query)
	ev := &evidence{feats: newFeatureColumns(len(ix.files))}

	content := ix.lexicalFeatures(qts, ev)
	contentRanks(content, ev)
	// Scaled once the ranks, which order the raw scores, are set.
	ev.feats.setScaled(fContent, content, maxOf(content))
	ix.titleFeatures(query, ev)
	ix.partContent(queryTerms(title(query)), fTitleContent, "the title's words", ev)
	ix.partContent(queryTerms(issueCode(query)), fCodeContent, "the words of the issue's code", ev)

	ms := extractMentions(query)
	ix.pathMentions(ms, ev)
	ix.identDefinitions(ms, ev)
	ix.dottedNames(ms, ev)
	ix.importedNames(ms, ev)
	ix.titleNames(title(query), ev)

	ix.testLinks(ev)
	ix.neighbours(ev)
	ix.historyFeature(qts, fHistory, "the issue", ev)
	ix.historyFeature(queryTerms(title(query)), fTitleHistory, "the title", ev)
	ix.citedChanges(query, ev)
	ix.candidates(query, ms, ev)
	ix.quotedText(root, query, ev)
	ix.passages(root, query, qts, ev)
	return ev
}

// lexicalFeatures sets the BM25 signals on path terms and symbol names,
// each normalised by its best file, and returns the raw content scores,
// which the caller sets as the content signal (setScaled) once it has
// ranked files by them.
func (ix *Index) lexicalFeatures(qts []queryTerm, ev *evidence) []float64 {
	fs := &ev.feats
	content, ctop := ix.contentBM25(qts)
	paths, ptop := ix.bm25(qts, fieldPath, true)
	fs.setScaled(fPath, paths, maxOf(paths))
	syms, stop := ix.bm25(qts, fieldSymbols, true)
	fs.setScaled(fSymbol, syms, maxOf(syms))
	ev.matched[fContent], ev.matchedNote[fContent] = ctop, "content matches"
	ev.matched[fPath], ev.matchedNote[fPath] = ptop, "path terms match"
	ev.matched[fSymbol], ev.matchedNote[fSymbol] = stop, "symbol names match"
	return content
}

// contentRanks sets each file's position among the content matches, which
// a single outlier with a huge score does not flatten as it does the
// normalised score.
func contentRanks(content []float64, ev *evidence) {
	byContent := make([]int, 0, len(content))
	for i, v := range content {
		if v > 0 {
			byContent = append(byContent, i)
		}
	}
	sort.Slice(byContent, func(a, b int) bool { return content[byContent[a]] > content[byContent[b]] })
	for r, i := range byContent {
		ev.feats.set(fContentRank, i, 1/math.Sqrt(float64(r+1)))
	}
}

// titleFeatures matches the title, which names the subject most often,
// against what a file is called and what it defines.
func (ix *Index) titleFeatures(query string, ev *evidence) {
	tqs := queryTerms(title(query))
	if len(tqs) == 0 {
		return
	}
	fs := &ev.feats
	tp, _ := ix.bm25(tqs, fieldPath, false)
	ts, _ := ix.bm25(tqs, fieldSymbols, false)
	for i := range tp {
		tp[i] += ts[i]
	}
	if maxT := maxOf(tp); maxT > 0 {
		// Only files the whole query matched by path or symbol count.
		for i, v := range tp {
			if v > 0 && !(fs.at(fPath, i) > 0 || fs.at(fSymbol, i) > 0) {
				tp[i] = 0
			}
		}
		fs.setScaled(fTitle, tp, maxT)
	}
}

// partContent sets feature f to the content BM25 of a part of the issue
// (its title, its code), normalised by the best file's.
func (ix *Index) partContent(qts []queryTerm, f feature, part string, ev *evidence) {
	if len(qts) == 0 {
		return
	}
	scores, top := ix.contentBM25(qts)
	if m := maxOf(scores); m > 0 {
		ev.feats.setScaled(f, scores, m)
		ev.matched[f], ev.matchedNote[f] = top, "content matches "+part
	}
}

// issueCode is the issue's code: the lines of its fenced blocks that read
// as code (codeLine) or report a fault (errorLineRe: ValueError: …,
// WARNING: …, panic: …), and its inline code. Fenced blocks hold program
// output as often as code (a build log, a test run, a printed result), and
// the routine lines of output ("reading sources... done") are printed by
// the program's driver, in any language, whatever went wrong, while the
// code a user ran names the API at fault and a fault's message was written
// by the code that reports it.
func issueCode(q string) string {
	var b strings.Builder
	for _, block := range fenceRe.FindAllString(q, -1) {
		lines := strings.Split(strings.Trim(block, "`"), "\n")
		for i, line := range lines {
			if i > 0 && (codeLine(line) || errorLineRe.MatchString(line)) { // the first is the fence's language
				b.WriteString(line)
				b.WriteByte('\n')
			}
		}
	}
	for _, m := range backtickRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(q, " "), -1) {
		b.WriteString(m[1])
		b.WriteByte('\n')
	}
	return b.String()
}

// codeLineRe matches what marks a line as code in most languages: a
// prompt (>>>, In [1]:, $), a keyword that opens a statement, a call or
// definition (name followed by an opening parenthesis), an assignment, a
// decorator or annotation, a line ending in a block's brace or a
// statement's semicolon, or a markup directive (.. name::).
var codeLineRe = regexp.MustCompile(`^\s*(?:>>>|\.\.\.\s|In \[\d+\]:|\$\s|@[A-Za-z_]|\.\. [\w:-]+::)` +
	`|^\s*(?:import|from|def|class|func|fn|let|const|var|return|package|use|pub|public|private|static|struct|impl|type|if|elif|else|for|while|with|try|except|catch|async|await|yield|raise|throw|assert|print)\b` +
	`|[A-Za-z_][\w.]*\(` +
	`|[A-Za-z_][\w.\]\[]*\s*(?:=|:=|\+=|-=)\s*[^=\s]` +
	`|[{};]\s*$`)

// codeLine reports whether a line of a fenced block reads as code rather
// than as a program's output.
func codeLine(line string) bool {
	return strings.TrimSpace(line) != "" && codeLineRe.MatchString(line)
}

// testLinks passes evidence that lands on a test file (a failing test's
// frame, its name) on to the files it is named after and the files it
// imports.
func (ix *Index) testLinks(ev *evidence) {
	fs := &ev.feats
	for t := range fs.len() {
		if !ix.files[t].test() {
			continue
		}
		e := fs.explicit(t)
		if e <= 0 {
			continue
		}
		for _, s := range ix.testedBy(t) {
			if v := e * s.weight; v > fs.at(fTestLink, s.file) {
				fs.set(fTestLink, s.file, v)
				ev.note(fTestLink, s.file, "tested by "+ix.files[t].path+" ("+s.how+")")
			}
		}
	}
}

// neighbours spills explicit evidence onto the files that import or are
// imported by the file it names.
func (ix *Index) neighbours(ev *evidence) {
	fs := &ev.feats
	for i := range fs.len() {
		e := fs.explicit(i)
		if e <= 0 {
			continue
		}
		for _, list := range [][]uint32{ix.deps(i), ix.dependents(i)} {
			for _, j := range list {
				if e > fs.at(fNeighbour, int(j)) {
					fs.set(fNeighbour, int(j), e)
					if ev.notes[fNeighbour] == nil {
						ev.notes[fNeighbour] = map[int32]string{}
					}
					ev.notes[fNeighbour][int32(j)] = "linked by imports to " + ix.files[i].path
				}
			}
		}
	}
}

// candidates keeps the files with any lexical, explicit or test-link
// evidence, clearing the rest, and sets the candidates' prior and
// file-kind signals.
func (ix *Index) candidates(query string, ms mentions, ev *evidence) {
	fs := &ev.feats
	hold, votes := ix.langHoldBack(query, ms)
	lead := votes.leading()
	// One note per family held back, made when a file is explained.
	holdNotes := map[string]string{}
	ev.otherLang = func(i int) string {
		fam := fileFamily(ix.files[i].path)
		note, ok := holdNotes[fam]
		if !ok {
			note = otherLangNote(fam, lead)
			holdNotes[fam] = note
		}
		return note
	}
	var memo familyMemo
	// Room for every file at once: on a large tree most are candidates,
	// and growing the list through every size allocated five times its
	// final size (a fresh page each while the collector is held).
	ev.cands = slices.Grow(ev.cands, fs.len())
	for i := range fs.len() {
		lexical := fs.at(fContent, i) + fs.at(fPath, i) + fs.at(fSymbol, i)
		if lexical <= 0 && fs.explicit(i) <= 0 && fs.at(fTestLink, i) <= 0 {
			fs.clear(i)
			continue
		}
		ev.cands = append(ev.cands, i)
		fs.set(fPrior, i, float64(ix.prior[i]))
		d := &ix.files[i]
		if path.Base(d.path) == "__init__.py" {
			// Package files collect every dotted-name hit on their
			// package but seldom hold the code itself.
			fs.set(fPackageInit, i, 1)
		}
		switch {
		case d.test():
			fs.set(fTest, i, lexical+fs.at(fDefines, i))
		case d.doc():
			fs.set(fDoc, i, lexical+fs.at(fDefines, i))
		case !d.code():
			fs.set(fData, i, lexical+fs.at(fDefines, i))
		default:
			// Held back by how far the issue's language evidence
			// points away from the file's language.
			if len(hold) == 0 {
				break
			}
			if fam := memo.of(d.path); hold[fam] > 0 {
				fs.set(fOtherLang, i, hold[fam]*(lexical+fs.at(fDefines, i)))
			}
		}
	}
}

// otherLangNote explains the hold-back of a file in family fam.
func otherLangNote(fam, lead string) string {
	if lead == "" {
		return "in " + fam + ", which the issue's evidence points away from"
	}
	return "in " + fam + ", while the issue points at " + lead
}

// link is a source file a test exercises.
type link struct {
	file   int
	weight float64
	how    string
}

// testedBy returns the source files test file t is about: those whose name
// it carries (test_foo.py, foo_test.go -> foo.*) and those it imports.
func (ix *Index) testedBy(t int) []link {
	var out []link
	p := ix.files[t].path
	base := path.Base(p)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	var subject string
	switch {
	case strings.HasPrefix(stem, "test_"):
		subject = strings.TrimPrefix(stem, "test_")
	case strings.HasSuffix(stem, "_test"):
		subject = strings.TrimSuffix(stem, "_test")
	case strings.HasSuffix(stem, "_tests"):
		subject = strings.TrimSuffix(stem, "_tests")
	}
	if subject != "" {
		for _, cand := range []string{subject + ext, subject + "s" + ext, strings.TrimSuffix(subject, "s") + ext} {
			for _, f := range ix.byBase(cand) {
				if !ix.files[f].test() {
					out = append(out, link{f, 1, "named after it"})
				}
			}
		}
	}
	for _, j := range ix.deps(t) {
		if !ix.files[j].test() {
			out = append(out, link{int(j), 0.5, "imports it"})
		}
	}
	return out
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

func quoteList(ts []string) string {
	if len(ts) == 0 {
		return ""
	}
	return "“" + strings.Join(ts, "”, “") + "”"
}

// pathMentions matches quoted paths against the repository: a path that is
// a suffix of the quoted one (or the reverse) on a component boundary is a
// hit; a bare file name spreads its weight over the files sharing it.
// Traceback frames count apart from paths quoted in prose.
func (ix *Index) pathMentions(ms mentions, ev *evidence) {
	// Without a quoted path both stay nil (most queries: no array of
	// every file for nothing).
	var quoted, frames []float64
	if n := len(ix.files); len(ms.paths) > 0 {
		quoted, frames = make([]float64, n), make([]float64, n)
	}
	maxFrame := 0
	for _, pm := range ms.paths {
		maxFrame = max(maxFrame, pm.frame)
	}
	// The innermost frame that lands in the repository's own code (not a
	// test) is where a crash most often needs fixing.
	innermost, innermostFrame := -1, 0
	for _, pm := range ms.paths {
		weight, hits, feat, what := 1.0, quoted, fQuoted, "path quoted in the issue: "
		if pm.frame > 0 {
			// The innermost traceback frames are nearest the fault.
			weight = 0.5 + 0.5*float64(pm.frame)/float64(maxFrame)
			hits, feat = frames, fFrame
			what = fmt.Sprintf("traceback frame %d of %d: ", pm.frame, maxFrame)
		}
		base := path.Base(pm.path)
		cands := ix.byBase(base)
		exact := exactFiles(ix, cands, pm.path)
		if len(exact) > 0 && strings.Contains(pm.path, "/") {
			for _, i := range exact {
				hits[i] += weight / float64(len(exact))
				ev.note(feat, i, what+pm.path)
			}
			if pm.frame > innermostFrame && len(exact) == 1 && !ix.files[exact[0]].test() {
				innermost, innermostFrame = exact[0], pm.frame
			}
			continue
		}
		for _, i := range cands {
			hits[i] += 0.7 * weight / float64(len(cands))
			ev.note(feat, i, what+base+" (file name)")
		}
	}
	// A file no path names keeps its zeros (saturate(0) is 0): most of a
	// large tree.
	for i := range quoted {
		if quoted[i] != 0 {
			ev.feats.set(fQuoted, i, saturate(quoted[i]))
		}
		if frames[i] != 0 {
			ev.feats.set(fFrame, i, saturate(frames[i]))
		}
	}
	if innermost < 0 {
		resolve := func(p string) []int { return exactFiles(ix, ix.byBase(path.Base(p)), p) }
		innermost, innermostFrame, maxFrame = innermostShortFrame(ms.shortFrames, resolve, func(i int) bool { return ix.files[i].test() })
	}
	if innermost >= 0 {
		ev.feats.set(fInnermost, innermost, 1)
		ev.note(fInnermost, innermost, fmt.Sprintf("innermost traceback frame in the repository's code (frame %d of %d)", innermostFrame, maxFrame))
	}
}

// exactFiles are the files among cands whose path is p, ends p or is
// ended by p (a frame's absolute or installed path, a partial path).
func exactFiles(ix *Index, cands []int, p string) []int {
	var exact []int
	for _, i := range cands {
		fp := ix.files[i].path
		if fp == p || strings.HasSuffix(p, "/"+fp) || strings.HasSuffix(fp, "/"+p) {
			exact = append(exact, i)
		}
	}
	return exact
}

// innermostShortFrame is the innermost of frames (outermost first) that
// resolves to exactly one non-test file of the repository, with its frame
// number and the number of frames; -1 when none does. A frame in an
// installed library or the standard library resolves to nothing and is
// passed over, as in a full traceback. resolve lists the files a path
// names; test says whether a file is a test.
func innermostShortFrame(frames []string, resolve func(p string) []int, test func(i int) bool) (file, frame, of int) {
	for k := len(frames) - 1; k >= 0; k-- {
		if !strings.Contains(frames[k], "/") {
			continue
		}
		if exact := resolve(frames[k]); len(exact) == 1 && !test(exact[0]) {
			return exact[0], k + 1, len(frames)
		}
	}
	return -1, 0, 0
}

func appendNote(s, note string) string {
	if s == "" {
		return note
	}
	if strings.Contains(s, note) {
		return s
	}
	return s + "; " + note
}

// definitionWeight discounts definitions by kind: a class or function named
// in an issue is stronger evidence than a variable of the same name.
func definitionWeight(kind string) float64 {
	switch kind {
	case "class", "type", "interface":
		return 1.0
	case "func", "method":
		return 0.9
	}
	return 0.5
}

// identVariants are the spellings an identifier may have in code: the
// name itself and its CamelCase or snake_case counterpart, which issues
// often use for each other (a class InheritDocstrings, a module
// inherit_docstrings).
func identVariants(id string) []string {
	out := []string{id}
	parts := repomap.SplitIdent(id)
	if len(parts) < 2 {
		return out
	}
	var snake, camel strings.Builder
	for i, p := range parts {
		lp := strings.ToLower(p)
		if i > 0 {
			snake.WriteByte('_')
		}
		snake.WriteString(lp)
		camel.WriteString(strings.ToUpper(lp[:1]) + lp[1:])
	}
	for _, v := range []string{snake.String(), camel.String()} {
		if v != id {
			out = append(out, v)
		}
	}
	return out
}

// identDefinitions credits files that define identifiers the issue names,
// in any of their spellings. A name defined in many files says little
// about any one of them.
func (ix *Index) identDefinitions(ms mentions, ev *evidence) {
	hits := make([]float64, len(ix.files))
	named := map[int][]string{}
	// In a fixed order: a float sum in map order differs in its last bits
	// from run to run, and ties between files could flip with it.
	for _, id := range slices.Sorted(maps.Keys(ms.idents)) {
		strength := ms.idents[id]
		for vi, name := range identVariants(id) {
			defs := ix.definitions(name)
			if len(defs) == 0 {
				continue
			}
			files := map[int]float64{}
			for _, d := range defs {
				w := definitionWeight(d.kind)
				if strength < 0.5 && d.kind != "class" && d.kind != "type" && d.kind != "interface" {
					// Capitalised prose words count only as class names.
					continue
				}
				files[d.file] = math.Max(files[d.file], w)
			}
			if len(files) == 0 {
				continue
			}
			spread := 1 / math.Sqrt(float64(len(files)))
			if vi > 0 {
				spread *= 0.6 // a respelling is weaker than the name as written
			}
			for f, w := range files {
				hits[f] += strength * w * spread
				named[f] = append(named[f], name)
			}
		}
	}
	ev.setNamed(fDefines, hits, named, func(ids string) string { return "defines " + ids + " named in the issue" })
}

// setNamed sets a signal that names credit: each file's summed credit,
// saturated, and a note listing the first few names.
func (ev *evidence) setNamed(feat feature, hits []float64, named map[int][]string, note func(ids string) string) {
	for i, h := range hits {
		if h != 0 { // saturate(0) is 0, which the file holds already
			ev.feats.set(feat, i, saturate(h))
		}
	}
	for i, ids := range named {
		sort.Strings(ids)
		if len(ids) > 5 {
			ids = append(ids[:5], "…")
		}
		ev.note(feat, i, note(strings.Join(ids, ", ")))
	}
}

// fileShare is one file's share of a name's credit.
type fileShare struct {
	file  int
	share float64
}

// exportShares lists, in file order, the files other files import name
// from with their share of its importers; nil when nobody imports it.
func (ix *Index) exportShares(name string) []fileShare {
	v := ix.exports.get(name)
	total := 0.0
	eachPosting(v, func(_ int, c uint32) { total += float64(c) })
	var out []fileShare
	eachPosting(v, func(f int, c uint32) {
		if f < len(ix.files) {
			out = append(out, fileShare{f, float64(c) / total})
		}
	})
	return out
}

// importedNames credits the files other files import the issue's
// identifiers from: of the many files defining "where", the one the
// package exports it from. Each name's credit is shared by its homes in
// proportion to their importers.
func (ix *Index) importedNames(ms mentions, ev *evidence) {
	hits := make([]float64, len(ix.files))
	named := map[int][]string{}
	for _, id := range slices.Sorted(maps.Keys(ms.idents)) {
		for _, h := range ix.exportShares(id) {
			hits[h.file] += ms.idents[id] * h.share
			named[h.file] = append(named[h.file], id)
		}
	}
	ev.setNamed(fExported, hits, named, func(ids string) string { return "other files import " + ids + " from here" })
}

// titleNames credits the homes of the names a title uses: a title is
// short and usually names the function or class at fault, often as a
// plain word ("concat changes variable order"). A name's home is where
// other files import it from or, when nobody imports it, the files that
// define it at top level; a plain word counts less than a code-shaped one.
func (ix *Index) titleNames(t string, ev *evidence) {
	hits := make([]float64, len(ix.files))
	named := map[int][]string{}
	seen := map[string]bool{}
	for _, id := range identRe.FindAllString(t, -1) {
		if len(id) < 3 || seen[id] || repomap.Stopword(strings.ToLower(id)) {
			continue
		}
		seen[id] = true
		strength := 0.6
		if identShape(id) >= 0.8 {
			strength = 1
		}
		name, homes := id, ix.homes(id)
		if len(homes) == 0 && sentenceCase(id) && !seen[strings.ToLower(id)] {
			// A title's first word is capitalised: "Posify ignores …"
			// names posify.
			name = strings.ToLower(id)
			seen[name] = true
			homes = ix.homes(name)
		}
		for _, h := range homes {
			hits[h.file] += strength * h.share
			named[h.file] = append(named[h.file], name)
		}
	}
	ev.setNamed(fTitleName, hits, named, func(ids string) string { return "home of " + ids + ", named in the title" })
}

// homes are the files a name is imported from or, when nobody imports
// it, the files that define it at top level.
func (ix *Index) homes(name string) []fileShare {
	if h := ix.exportShares(name); len(h) > 0 {
		return h
	}
	return ix.topLevelDefiners(name)
}

// sentenceCase reports whether word is one capital letter followed by
// lower-case letters only ("Posify", not "DataArray" or "HTML").
func sentenceCase(word string) bool {
	for i, r := range word {
		if (i == 0) != unicode.IsUpper(r) || (i > 0 && !unicode.IsLower(r)) {
			return false
		}
	}
	return word != ""
}

// topLevelDefiners lists, in file order, the non-test files that define
// name at top level (no method, no variable), sharing its credit equally.
func (ix *Index) topLevelDefiners(name string) []fileShare {
	var defs []int
	for _, d := range ix.definitions(name) {
		if d.parent == "" && d.kind != "method" && d.kind != "var" && !ix.files[d.file].test() {
			defs = append(defs, d.file)
		}
	}
	defs = uniqueInts(defs)
	out := make([]fileShare, len(defs))
	for i, f := range defs {
		out[i] = fileShare{f, 1 / float64(len(defs))}
	}
	return out
}

// dottedNames resolves pkg.module[.Symbol...] names to module files and to
// the files defining the symbol that follows the module part.
func (ix *Index) dottedNames(ms mentions, ev *evidence) {
	// Module mentions and Class.method names are kept apart: an issue
	// names many modules in passing (configuration, imports), while a
	// Class.method it names is the file at fault about half the time.
	if len(ms.dotted) == 0 {
		return
	}
	hits := make([]float64, len(ix.files))
	mhits := make([]float64, len(ix.files))
	for _, name := range ms.dotted {
		parts := strings.Split(name, ".")
		matched := false
		for p := len(parts); p >= 1; p-- {
			mod := strings.Join(parts[:p], ".")
			fi, ok := ix.module(mod)
			if !ok {
				continue
			}
			if p == 1 && p == len(parts) {
				break // a bare word is not a module mention
			}
			matched = true
			hits[fi] += 0.5
			ev.note(fModule, fi, "module "+mod+" named in the issue")
			if p == len(parts) {
				break
			}
			sym := parts[p]
			var definers []int
			isPkg := strings.HasSuffix(ix.files[fi].path, "__init__.py")
			pkgDir := path.Dir(ix.files[fi].path) + "/"
			for _, d := range ix.definitions(sym) {
				if d.file == fi || (isPkg && strings.HasPrefix(ix.files[d.file].path, pkgDir)) {
					definers = append(definers, d.file)
				}
			}
			definers = uniqueInts(definers)
			for _, f := range definers {
				hits[f] += 1.0 / math.Sqrt(float64(len(definers)))
				ev.note(fModule, f, "defines "+sym+" of "+mod+" named in the issue")
			}
			break
		}
		if matched || len(parts) < 2 {
			continue
		}
		// Class.method without a module: files where that class defines
		// that method.
		cls, meth := parts[len(parts)-2], parts[len(parts)-1]
		var definers []int
		for _, d := range ix.definitions(meth) {
			if d.parent == cls {
				definers = append(definers, d.file)
			}
		}
		definers = uniqueInts(definers)
		for _, f := range definers {
			mhits[f] += 1 / math.Sqrt(float64(len(definers)))
			ev.note(fMethod, f, "defines "+cls+"."+meth+" named in the issue")
		}
	}
	ev.setSaturated(fModule, hits)
	ev.setSaturated(fMethod, mhits)
}

// setSaturated sets signal f of each file with hits to their saturation
// (a file without keeps its zero: saturate(0) is 0). Signals are columns
// apart, so setting one before the other sets what setting them file by
// file did.
func (ev *evidence) setSaturated(f feature, hits []float64) {
	for i, h := range hits {
		if h != 0 {
			ev.feats.set(f, i, saturate(h))
		}
	}
}

func uniqueInts(xs []int) []int {
	sort.Ints(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
