// Package locate ranks a repository's files for an issue text without a
// model: lexical relevance (BM25 over paths, symbol names and contents),
// names the issue quotes (paths, tracebacks, dotted names, identifiers) and
// the import graph.
package locate

import (
	"math"
	"path"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/repomap"
)

// Index is a Map prepared for ranking. Building it costs one pass over the
// map; reuse it for several queries on the same map.
type Index struct {
	m     *repomap.Map
	vocab map[string]uint32
	docs  []doc
	// avg field lengths for BM25 length normalisation
	avgContent, avgPath, avgSym float64
	// defs maps a symbol name to the files defining it.
	defs map[string][]symDef
	// modules maps Python dotted module names to file indexes.
	modules map[string]int
	// byBase maps a file's base name to file indexes.
	byBase map[string][]int
	byPath map[string]int
	// dependents[i] are files importing file i; deps[i] files i imports.
	deps, dependents [][]int
	prior            []float64 // PageRank over the import graph, max 1
}

type doc struct {
	path    string
	module  string
	pathTF  map[string]int
	pathLen int
	symTF   map[string]int
	symLen  int
	test    bool
	docFile bool
	code    bool
}

type symDef struct {
	file int
	kind string
	// parent is the class or type a method belongs to.
	parent string
}

// NewIndex prepares m for ranking.
func NewIndex(m *repomap.Map) *Index {
	ix := &Index{
		m:       m,
		vocab:   make(map[string]uint32, len(m.Vocab)),
		docs:    make([]doc, len(m.Entries)),
		defs:    map[string][]symDef{},
		modules: map[string]int{},
		byBase:  map[string][]int{},
		byPath:  make(map[string]int, len(m.Entries)),
	}
	for i, t := range m.Vocab {
		ix.vocab[t] = uint32(i)
	}
	for i, f := range m.Entries {
		ix.byPath[f.Path] = i
	}
	exists := func(p string) bool { _, ok := ix.byPath[p]; return ok }
	var sumC, sumP, sumS float64
	for i, f := range m.Entries {
		d := doc{
			path:    f.Path,
			pathTF:  map[string]int{},
			symTF:   map[string]int{},
			test:    f.Test,
			docFile: repomap.IsDocPath(f.Path),
			code:    repomap.IsCode(f.Lang),
		}
		// Path terms: directories and the file name without extension.
		pathText := strings.TrimSuffix(f.Path, path.Ext(f.Path))
		repomap.EachTerm([]byte(pathText), func(t string) { d.pathTF[t]++; d.pathLen++ })
		for _, s := range f.Symbols {
			repomap.EachTerm([]byte(s.Name), func(t string) { d.symTF[t]++; d.symLen++ })
			ix.defs[s.Name] = append(ix.defs[s.Name], symDef{file: i, kind: s.Kind, parent: s.Parent})
		}
		if f.Lang == repomap.LangPython {
			d.module = repomap.PythonModule(f.Path, exists)
			if d.module != "" {
				if old, ok := ix.modules[d.module]; !ok || len(f.Path) < len(m.Entries[old].Path) {
					ix.modules[d.module] = i
				}
			}
		}
		base := path.Base(f.Path)
		ix.byBase[base] = append(ix.byBase[base], i)
		sumC += float64(f.Length)
		sumP += float64(d.pathLen)
		sumS += float64(d.symLen)
		ix.docs[i] = d
	}
	n := math.Max(1, float64(len(m.Entries)))
	ix.avgContent, ix.avgPath, ix.avgSym = math.Max(1, sumC/n), math.Max(1, sumP/n), math.Max(1, sumS/n)
	ix.buildGraph()
	return ix
}

func (ix *Index) buildGraph() {
	n := len(ix.docs)
	ix.deps = make([][]int, n)
	ix.dependents = make([][]int, n)
	for i, f := range ix.m.Entries {
		for _, p := range f.Deps {
			if j, ok := ix.byPath[p]; ok {
				ix.deps[i] = append(ix.deps[i], j)
				ix.dependents[j] = append(ix.dependents[j], i)
			}
		}
	}
	ix.prior = pagerank(ix.deps, 20, 0.85)
}

// pagerank scores files by how much of the code (transitively) imports
// them; tests count as importers like any other file.
func pagerank(out [][]int, iters int, damping float64) []float64 {
	n := len(out)
	pr := make([]float64, n)
	if n == 0 {
		return pr
	}
	for i := range pr {
		pr[i] = 1 / float64(n)
	}
	next := make([]float64, n)
	for it := 0; it < iters; it++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i, targets := range out {
			if len(targets) == 0 {
				dangling += pr[i]
				continue
			}
			share := pr[i] / float64(len(targets))
			for _, j := range targets {
				next[j] += share
			}
		}
		base := (1-damping)/float64(n) + damping*dangling/float64(n)
		for i := range next {
			next[i] = base + damping*next[i]
		}
		pr, next = next, pr
	}
	maxv := 0.0
	for _, v := range pr {
		maxv = math.Max(maxv, v)
	}
	// Log scale: a hub imported everywhere should not drown relevance.
	minv := 1 / float64(n) * (1 - damping)
	for i, v := range pr {
		if maxv > minv {
			pr[i] = math.Log(v/minv) / math.Log(maxv/minv)
		} else {
			pr[i] = 0
		}
	}
	return pr
}

// BM25 parameters, the usual defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

func bm25tf(tf, dl int, avg float64) float64 {
	t := float64(tf)
	return t * (bm25K1 + 1) / (t + bm25K1*(1-bm25B+bm25B*float64(dl)/avg))
}

// queryTerm is a distinct query term and its weight (repeats count, with
// diminishing returns).
type queryTerm struct {
	term   string
	weight float64
}

func queryTerms(q string) []queryTerm {
	counts := map[string]int{}
	for _, t := range repomap.Terms(q) {
		counts[t]++
	}
	out := make([]queryTerm, 0, len(counts))
	for t, c := range counts {
		out = append(out, queryTerm{t, 1 + math.Log(float64(c))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].term < out[j].term })
	return out
}

// contentBM25 scores every file's content against the query terms and
// returns, per file, the score and the best-contributing terms.
func (ix *Index) contentBM25(qts []queryTerm) ([]float64, [][]string) {
	n := len(ix.docs)
	scores := make([]float64, n)
	top := make([][]string, n)
	type qid struct {
		id     uint32
		term   string
		weight float64
		idf    float64
	}
	var ids []qid
	for _, qt := range qts {
		if id, ok := ix.vocab[qt.term]; ok {
			ids = append(ids, qid{id: id, term: qt.term, weight: qt.weight})
		}
	}
	if len(ids) == 0 {
		return scores, top
	}
	// Locate each query term in each file's sorted term ids; this avoids
	// holding an inverted index in memory and is fast enough for tens of
	// thousands of files.
	tfs := make([][]uint32, len(ids))
	for k := range ids {
		tfs[k] = make([]uint32, n)
	}
	df := make([]int, len(ids))
	for i, f := range ix.m.Entries {
		for k, q := range ids {
			j := sort.Search(len(f.TermIDs), func(x int) bool { return f.TermIDs[x] >= q.id })
			if j < len(f.TermIDs) && f.TermIDs[j] == q.id {
				tfs[k][i] = f.TermFreqs[j]
				df[k]++
			}
		}
	}
	for k := range ids {
		ids[k].idf = idf(n, df[k])
	}
	type contrib struct {
		term string
		v    float64
	}
	for i, f := range ix.m.Entries {
		var cs []contrib
		for k, q := range ids {
			if tf := tfs[k][i]; tf > 0 {
				v := q.weight * q.idf * bm25tf(int(tf), f.Length, ix.avgContent)
				scores[i] += v
				cs = append(cs, contrib{q.term, v})
			}
		}
		if len(cs) > 0 {
			sort.Slice(cs, func(a, b int) bool { return cs[a].v > cs[b].v })
			for _, c := range cs[:min(4, len(cs))] {
				top[i] = append(top[i], c.term)
			}
		}
	}
	return scores, top
}

// fieldBM25 scores a small per-file field (path or symbol terms).
func (ix *Index) fieldBM25(qts []queryTerm, field func(*doc) (map[string]int, int), avg float64) ([]float64, [][]string) {
	n := len(ix.docs)
	scores := make([]float64, n)
	top := make([][]string, n)
	df := make([]int, len(qts))
	for i := range ix.docs {
		tf, _ := field(&ix.docs[i])
		for k, q := range qts {
			if tf[q.term] > 0 {
				df[k]++
			}
		}
	}
	for i := range ix.docs {
		tf, dl := field(&ix.docs[i])
		for k, q := range qts {
			if c := tf[q.term]; c > 0 {
				scores[i] += q.weight * idf(n, df[k]) * bm25tf(c, dl, avg)
				if len(top[i]) < 4 {
					top[i] = append(top[i], q.term)
				}
			}
		}
	}
	return scores, top
}
