package locate

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path"
	"sort"
	"strings"
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
}

// Ranked is a file and why it ranked where it did.
type Ranked struct {
	Path    string
	Score   float64
	Reasons []string
}

// Weights of the signals in the full ranker. Lexical scores are normalised
// to [0,1] by the best file, explicit mentions saturate towards 1, so the
// weights read as "how much is one full signal worth".
const (
	wContent     = 1.0
	wPath        = 0.6
	wSymbols     = 0.6
	wPathMention = 1.5
	wDefines     = 1.0
	wModule      = 0.8
	wPrior       = 0.1
	wNeighbour   = 0.15
	testFactor   = 0.6
	docFactor    = 0.5
	dataFactor   = 0.7
)

// Rank orders the files of m for query, best first, returning at most k
// (k <= 0 means 10). Files with no evidence at all are left out.
func Rank(m *repomap.Map, query string, k int, opts Options) ([]Ranked, error) {
	if m == nil {
		return nil, errors.New("ranking files: no repository map")
	}
	return NewIndex(m).Rank(query, k, opts)
}

// Rank is Rank on a prepared index.
func (ix *Index) Rank(query string, k int, opts Options) ([]Ranked, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if k <= 0 {
		k = 10
	}
	query = strings.ToValidUTF8(query, " ")
	if strings.TrimSpace(query) == "" {
		return nil, ErrEmptyQuery
	}
	limit := opts.MaxQueryBytes
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
	if len(ix.docs) == 0 {
		return nil, fmt.Errorf("ranking files: %w", repomap.ErrNoSourceFiles)
	}
	qts := queryTerms(query)
	var scored []Ranked
	if opts.Baseline {
		scores, top := ix.contentBM25(qts)
		for i, s := range scores {
			if s > 0 {
				scored = append(scored, Ranked{Path: ix.docs[i].path, Score: s,
					Reasons: []string{fmt.Sprintf("bm25 %.2f on content (%s)", s, strings.Join(top[i], ", "))}})
			}
		}
	} else {
		scored = ix.full(query, qts)
	}
	sort.SliceStable(scored, func(i, j int) bool {
		if scored[i].Score != scored[j].Score {
			return scored[i].Score > scored[j].Score
		}
		return scored[i].Path < scored[j].Path
	})
	if len(scored) > k {
		scored = scored[:k]
	}
	return scored, nil
}

// reasoned accumulates one file's score with a note per contribution.
type reasoned struct {
	score   float64
	parts   []part
	explict float64 // score from explicit mentions (propagated to neighbours)
}

type part struct {
	v    float64
	note string
}

func (r *reasoned) add(v float64, note string) {
	if v <= 0 {
		return
	}
	r.score += v
	r.parts = append(r.parts, part{v, note})
}

func saturate(x float64) float64 { return 1 - math.Exp(-x) }

func (ix *Index) full(query string, qts []queryTerm) []Ranked {
	n := len(ix.docs)
	rs := make([]reasoned, n)

	content, ctop := ix.contentBM25(qts)
	paths, ptop := ix.fieldBM25(qts, func(d *doc) (map[string]int, int) { return d.pathTF, d.pathLen }, ix.avgPath)
	syms, stop := ix.fieldBM25(qts, func(d *doc) (map[string]int, int) { return d.symTF, d.symLen }, ix.avgSym)
	maxC, maxP, maxS := maxOf(content), maxOf(paths), maxOf(syms)
	lexical := make([]float64, n)
	for i := range rs {
		if maxC > 0 && content[i] > 0 {
			v := wContent * content[i] / maxC
			lexical[i] += v
			rs[i].add(v, fmt.Sprintf("content matches %s", quoteList(ctop[i])))
		}
		if maxP > 0 && paths[i] > 0 {
			v := wPath * paths[i] / maxP
			lexical[i] += v
			rs[i].add(v, fmt.Sprintf("path matches %s", quoteList(ptop[i])))
		}
		if maxS > 0 && syms[i] > 0 {
			v := wSymbols * syms[i] / maxS
			lexical[i] += v
			rs[i].add(v, fmt.Sprintf("symbol names match %s", quoteList(stop[i])))
		}
	}

	ms := extractMentions(query)
	pathHits, pathNotes := ix.pathMentions(ms)
	defHits, defNotes := ix.identDefinitions(ms)
	modHits, modNotes := ix.dottedNames(ms)
	for i := range rs {
		// Priors temper lexical and definition evidence; an explicitly
		// quoted path is trusted as written.
		factor := 1.0
		var why string
		d := &ix.docs[i]
		switch {
		case d.test:
			factor, why = testFactor, "test file"
		case d.docFile:
			factor, why = docFactor, "documentation or example"
		case !d.code:
			factor, why = dataFactor, "not source code"
		}
		if factor != 1 && rs[i].score > 0 {
			scaled := rs[i].score * (factor - 1)
			rs[i].score += scaled
			rs[i].parts = append(rs[i].parts, part{scaled, fmt.Sprintf("%s (×%.1f)", why, factor)})
		}
		if v := pathHits[i]; v > 0 {
			s := wPathMention * saturate(v)
			rs[i].add(s, pathNotes[i])
			rs[i].explict += s
		}
		if v := defHits[i]; v > 0 {
			s := wDefines * factor * saturate(v)
			rs[i].add(s, defNotes[i])
			rs[i].explict += s
		}
		if v := modHits[i]; v > 0 {
			s := wModule * saturate(v)
			rs[i].add(s, modNotes[i])
			rs[i].explict += s
		}
	}
	// Structure: explicit evidence spills a little onto the files that
	// import or are imported by the file it names, and central files get
	// a small prior. Only files with some lexical or explicit evidence
	// are boosted, so the graph reorders candidates rather than adding
	// unrelated hubs.
	spill := make([]float64, n)
	from := make([]int, n)
	for i := range rs {
		if rs[i].explict <= 0 {
			continue
		}
		for _, j := range append(append([]int(nil), ix.deps[i]...), ix.dependents[i]...) {
			if v := wNeighbour * rs[i].explict; v > spill[j] {
				spill[j], from[j] = v, i
			}
		}
	}
	var out []Ranked
	for i := range rs {
		if rs[i].score <= 0 && spill[i] <= 0 {
			continue
		}
		if spill[i] > 0 && (lexical[i] > 0 || rs[i].explict > 0) {
			rs[i].add(spill[i], "linked by imports to "+ix.docs[from[i]].path)
		}
		if rs[i].score > 0 && ix.prior[i] > 0 {
			rs[i].add(wPrior*ix.prior[i], fmt.Sprintf("central in the import graph (%.2f)", ix.prior[i]))
		}
		if rs[i].score <= 0 {
			continue
		}
		parts := rs[i].parts
		sort.SliceStable(parts, func(a, b int) bool { return math.Abs(parts[a].v) > math.Abs(parts[b].v) })
		reasons := make([]string, 0, len(parts))
		for _, p := range parts {
			reasons = append(reasons, fmt.Sprintf("%+.2f %s", p.v, p.note))
		}
		out = append(out, Ranked{Path: ix.docs[i].path, Score: rs[i].score, Reasons: reasons})
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
func (ix *Index) pathMentions(ms mentions) ([]float64, []string) {
	hits := make([]float64, len(ix.docs))
	notes := make([]string, len(ix.docs))
	maxFrame := 0
	for _, pm := range ms.paths {
		maxFrame = max(maxFrame, pm.frame)
	}
	for _, pm := range ms.paths {
		weight := 1.0
		if pm.frame > 0 {
			// The innermost traceback frames are nearest the fault.
			weight = 0.6 + 0.6*float64(pm.frame)/float64(maxFrame)
		}
		base := path.Base(pm.path)
		cands := ix.byBase[base]
		var exact []int
		for _, i := range cands {
			p := ix.docs[i].path
			if p == pm.path || strings.HasSuffix(pm.path, "/"+p) || strings.HasSuffix(p, "/"+pm.path) {
				exact = append(exact, i)
			}
		}
		if len(exact) > 0 && strings.Contains(pm.path, "/") {
			for _, i := range exact {
				hits[i] += weight / float64(len(exact))
				notes[i] = appendNote(notes[i], "path quoted in the issue: "+pm.path)
			}
			continue
		}
		if len(cands) > 0 {
			for _, i := range cands {
				hits[i] += 0.7 * weight / float64(len(cands))
				notes[i] = appendNote(notes[i], "file name quoted in the issue: "+base)
			}
		}
	}
	return hits, notes
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

// identDefinitions credits files that define identifiers the issue names.
// A name defined in many files says little about any one of them.
func (ix *Index) identDefinitions(ms mentions) ([]float64, []string) {
	hits := make([]float64, len(ix.docs))
	named := make([][]string, len(ix.docs))
	for id, strength := range ms.idents {
		defs := ix.defs[id]
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
		for f, w := range files {
			hits[f] += strength * w * spread
			named[f] = append(named[f], id)
		}
	}
	notes := make([]string, len(ix.docs))
	for i, ids := range named {
		if len(ids) > 0 {
			sort.Strings(ids)
			if len(ids) > 5 {
				ids = append(ids[:5], "…")
			}
			notes[i] = "defines " + strings.Join(ids, ", ") + " named in the issue"
		}
	}
	return hits, notes
}

// dottedNames resolves pkg.module[.Symbol...] names to module files and to
// the files defining the symbol that follows the module part.
func (ix *Index) dottedNames(ms mentions) ([]float64, []string) {
	hits := make([]float64, len(ix.docs))
	notes := make([]string, len(ix.docs))
	for _, name := range ms.dotted {
		parts := strings.Split(name, ".")
		matched := false
		for p := len(parts); p >= 1; p-- {
			mod := strings.Join(parts[:p], ".")
			fi, ok := ix.modules[mod]
			if !ok {
				continue
			}
			if p == 1 && p == len(parts) {
				break // a bare word is not a module mention
			}
			matched = true
			hits[fi] += 0.5
			notes[fi] = appendNote(notes[fi], "module "+mod+" named in the issue")
			if p == len(parts) {
				break
			}
			sym := parts[p]
			var definers []int
			isPkg := strings.HasSuffix(ix.docs[fi].path, "__init__.py")
			pkgDir := path.Dir(ix.docs[fi].path) + "/"
			for _, d := range ix.defs[sym] {
				if d.file == fi || (isPkg && strings.HasPrefix(ix.docs[d.file].path, pkgDir)) {
					definers = append(definers, d.file)
				}
			}
			definers = uniqueInts(definers)
			for _, f := range definers {
				hits[f] += 1.0 / math.Sqrt(float64(len(definers)))
				notes[f] = appendNote(notes[f], "defines "+sym+" of "+mod+" named in the issue")
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
		for _, d := range ix.defs[meth] {
			if d.parent == cls {
				definers = append(definers, d.file)
			}
		}
		definers = uniqueInts(definers)
		for _, f := range definers {
			hits[f] += 0.8 / math.Sqrt(float64(len(definers)))
			notes[f] = appendNote(notes[f], "defines "+cls+"."+meth+" named in the issue")
		}
	}
	return hits, notes
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
