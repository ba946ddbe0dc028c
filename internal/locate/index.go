// Package locate ranks a repository's files for an issue text without a
// model: lexical relevance (BM25 over paths, symbol names and contents),
// names the issue quotes (paths, traceback frames, dotted names,
// identifiers), links between tests and the code they test, and the import
// graph, combined by a linear model whose weights are fitted offline
// (weights.json, see Fit).
package locate

import (
	"encoding/binary"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/repomap"
)

// Index is a repository map prepared for ranking: inverted postings for
// contents, paths and symbol names, symbol definitions, Python modules and
// the import graph. It is cached on disk beside the map (see Open) and
// loaded lazily, so a repeated query reads one file and decodes only the
// entries its terms touch.
type Index struct {
	files []fileEntry
	// content, pathTerms and symTerms map a term to postings (file, count).
	content, pathTerms, symTerms table
	avgContent, avgPath, avgSym  float64
	// defs maps a symbol name to its definitions (see appendDef).
	defs table
	// modules maps a Python dotted module name to its file.
	modules table
	// bases maps a file's base name to the files bearing it.
	bases table
	// deps and rdeps are the import graph and its reverse, as adjacency
	// lists: file i's targets are to[off[i]:off[i+1]].
	depOff, depTo, rdepOff, rdepTo []uint32
	// prior is PageRank over the import graph, log-scaled to [0,1].
	prior []float32
	// fromCache is set when Open loaded the index from disk.
	fromCache bool
}

type fileEntry struct {
	path                    string
	length, pathLen, symLen uint32
	flags                   uint8
}

const (
	flagTest = 1 << iota
	flagDoc
	flagCode
)

func (f *fileEntry) test() bool { return f.flags&flagTest != 0 }
func (f *fileEntry) doc() bool  { return f.flags&flagDoc != 0 }
func (f *fileEntry) code() bool { return f.flags&flagCode != 0 }

// symDef is one definition of a name.
type symDef struct {
	file int
	kind string
	// parent is the class or type a method belongs to.
	parent string
}

var kindCodes = []string{"", "class", "type", "interface", "func", "method", "var", "module"}

func kindCode(k string) byte {
	for i, c := range kindCodes {
		if c == k {
			return byte(i)
		}
	}
	return 0
}

func appendDef(buf []byte, d symDef) []byte {
	buf = binary.AppendUvarint(buf, uint64(d.file))
	buf = append(buf, kindCode(d.kind))
	buf = binary.AppendUvarint(buf, uint64(len(d.parent)))
	return append(buf, d.parent...)
}

// definitions decodes the definitions of name.
func (ix *Index) definitions(name string) []symDef {
	v := ix.defs.get(name)
	var out []symDef
	for len(v) > 0 {
		f, n := binary.Uvarint(v)
		if n <= 0 || len(v) < n+1 {
			return out
		}
		k := v[n]
		v = v[n+1:]
		pl, n := binary.Uvarint(v)
		if n <= 0 || uint64(len(v)-n) < pl {
			return out
		}
		d := symDef{file: int(f), parent: string(v[n : n+int(pl)])}
		if int(k) < len(kindCodes) {
			d.kind = kindCodes[k]
		}
		v = v[n+int(pl):]
		if d.file < len(ix.files) {
			out = append(out, d)
		}
	}
	return out
}

// uvarints decodes a list of unsigned varints (files of a table value).
func (ix *Index) fileList(v []byte) []int {
	var out []int
	for len(v) > 0 {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			break
		}
		v = v[n:]
		if int(x) < len(ix.files) {
			out = append(out, int(x))
		}
	}
	return out
}

func (ix *Index) module(name string) (int, bool) {
	fs := ix.fileList(ix.modules.get(name))
	if len(fs) == 0 {
		return 0, false
	}
	return fs[0], true
}

func (ix *Index) byBase(base string) []int { return ix.fileList(ix.bases.get(base)) }

func (ix *Index) byPath(p string) (int, bool) {
	i := sort.Search(len(ix.files), func(i int) bool { return ix.files[i].path >= p })
	return i, i < len(ix.files) && ix.files[i].path == p
}

func adj(off, to []uint32, i int) []uint32 {
	if i+1 >= len(off) {
		return nil
	}
	return to[off[i]:off[i+1]]
}

func (ix *Index) deps(i int) []uint32       { return adj(ix.depOff, ix.depTo, i) }
func (ix *Index) dependents(i int) []uint32 { return adj(ix.rdepOff, ix.rdepTo, i) }

// NumFiles is the number of files the index ranks.
func (ix *Index) NumFiles() int { return len(ix.files) }

// NewIndex prepares m for ranking.
func NewIndex(m *repomap.Map) *Index {
	n := len(m.Entries)
	ix := &Index{files: make([]fileEntry, n)}

	// Path and symbol-name postings are built on a second goroutine: they
	// tokenise every path and name, about half of the work here.
	pathLens, symLens := make([]uint32, n), make([]uint32, n)
	fields := make(chan struct{})
	go func() {
		defer close(fields)
		ix.pathTerms, ix.symTerms = fieldTables(m, pathLens, symLens)
	}()

	sumC := ix.fileTables(m)
	<-fields
	var sumP, sumS float64
	for i := range ix.files {
		ix.files[i].pathLen, ix.files[i].symLen = pathLens[i], symLens[i]
		sumP += float64(pathLens[i])
		sumS += float64(symLens[i])
	}
	nf := math.Max(1, float64(n))
	// Averages are kept at the precision the index file stores, so a
	// loaded index ranks exactly as the one built.
	avg := func(sum float64) float64 { return float64(float32(math.Max(1, sum/nf))) }
	ix.avgContent, ix.avgPath, ix.avgSym = avg(sumC), avg(sumP), avg(sumS)

	ix.importGraph(m)
	return ix
}

// fieldTables builds the path-term and symbol-name postings of m's files,
// recording each file's field lengths in pathLens and symLens.
func fieldTables(m *repomap.Map, pathLens, symLens []uint32) (pathTerms, symTerms table) {
	pathB, symB := newFieldBuilder(), newFieldBuilder()
	for i, f := range m.Entries {
		// Path terms: directories and the file name without extension.
		pathLens[i] = pathB.add(i, []byte(strings.TrimSuffix(f.Path, path.Ext(f.Path))))
		for _, s := range f.Symbols {
			symB.text([]byte(s.Name))
		}
		symLens[i] = symB.flush(i)
	}
	return pathB.table(), symB.table()
}

// newFileEntry is f's entry without its field lengths.
func newFileEntry(f *repomap.File) fileEntry {
	e := fileEntry{path: f.Path, length: uint32(f.Length)}
	if f.Test {
		e.flags |= flagTest
	}
	if repomap.IsDocPath(f.Path) {
		e.flags |= flagDoc
	}
	if repomap.IsCode(f.Lang) {
		e.flags |= flagCode
	}
	return e
}

// postingAcc collects one content term's postings.
type postingAcc struct {
	buf  []byte
	last int
}

// fileTables fills the file entries and the content, definition, module
// and file-name tables, and returns the total content length.
func (ix *Index) fileTables(m *repomap.Map) (sumC float64) {
	exists := func(p string) bool { _, ok := m.File(p); return ok }
	// Content postings: invert each file's term ids.
	content := make([]postingAcc, len(m.Vocab))
	defs := tableBuilder{}
	modules := map[string]int{}
	bases := tableBuilder{}
	for i, f := range m.Entries {
		e := newFileEntry(&m.Entries[i])
		for k, id := range f.TermIDs {
			if int(id) < len(content) {
				a := &content[id]
				a.buf = appendPosting(a.buf, &a.last, i, f.TermFreqs[k])
			}
		}
		for _, s := range f.Symbols {
			defs[s.Name] = appendDef(defs[s.Name], symDef{file: i, kind: s.Kind, parent: s.Parent})
		}
		if f.Lang == repomap.LangPython {
			if mod := repomap.PythonModule(f.Path, exists); mod != "" {
				// Prefer the shortest path when two trees claim a module.
				if old, ok := modules[mod]; !ok || len(f.Path) < len(m.Entries[old].Path) {
					modules[mod] = i
				}
			}
		}
		base := path.Base(f.Path)
		bases[base] = binary.AppendUvarint(bases[base], uint64(i))
		sumC += float64(f.Length)
		ix.files[i] = e
	}
	ix.content = contentTable(m.Vocab, content)
	ix.defs = defs.build()
	mb := make(tableBuilder, len(modules))
	for mod, i := range modules {
		mb[mod] = binary.AppendUvarint(nil, uint64(i))
	}
	ix.modules = mb.build()
	ix.bases = bases.build()
	return sumC
}

// contentTable is the table of the vocabulary terms with postings.
func contentTable(vocab []string, content []postingAcc) table {
	// Vocabulary terms are distinct: sorting their ids gives the table's
	// order without a map from term to postings.
	order := make([]uint32, 0, len(content))
	for id, a := range content {
		if len(a.buf) > 0 {
			order = append(order, uint32(id))
		}
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(vocab[a], vocab[b]) })
	return sortedTable(len(order),
		func(i int) string { return vocab[order[i]] },
		func(i int) []byte { return content[order[i]].buf })
}

// importGraph stores the import edges between m's files, both ways, and
// the PageRank prior over them.
func (ix *Index) importGraph(m *repomap.Map) {
	n := len(m.Entries)
	deps := make([][]int, n)
	rdeps := make([][]int, n)
	for i, f := range m.Entries {
		for _, p := range f.Deps {
			if j, ok := ix.byPath(p); ok && j != i {
				deps[i] = append(deps[i], j)
				rdeps[j] = append(rdeps[j], i)
			}
		}
	}
	ix.depOff, ix.depTo = flatten(deps)
	ix.rdepOff, ix.rdepTo = flatten(rdeps)
	pr := pagerank(deps, 20, 0.85)
	ix.prior = make([]float32, n)
	for i, v := range pr {
		ix.prior[i] = float32(v)
	}
}

// fieldBuilder collects postings for a small per-file field (path or
// symbol names) with term ids, so that building touches a string map once
// per word without allocating.
type fieldBuilder struct {
	vocab *repomap.Vocabulary
	bag   repomap.Bag
	bufs  [][]byte
	last  []int
}

func newFieldBuilder() *fieldBuilder { return &fieldBuilder{vocab: repomap.NewVocabulary()} }

// text counts the terms of one piece of the current file's field.
func (b *fieldBuilder) text(t []byte) { b.vocab.Add(&b.bag, t) }

// flush writes the current file's counts as postings and returns the
// field's length in terms.
func (b *fieldBuilder) flush(file int) uint32 {
	if n := b.vocab.Len(); n > len(b.bufs) {
		b.bufs = append(b.bufs, make([][]byte, n-len(b.bufs))...)
		b.last = append(b.last, make([]int, n-len(b.last))...)
	}
	n := uint32(b.bag.Len)
	b.bag.Drain(func(id, c uint32) {
		b.bufs[id] = appendPosting(b.bufs[id], &b.last[id], file, c)
	})
	return n
}

func (b *fieldBuilder) add(file int, t []byte) uint32 {
	b.text(t)
	return b.flush(file)
}

func (b *fieldBuilder) table() table {
	terms := b.vocab.Terms()
	order := make([]int, len(terms))
	for id := range order {
		order[id] = id
	}
	slices.SortFunc(order, func(x, y int) int { return strings.Compare(terms[x], terms[y]) })
	return sortedTable(len(order), func(i int) string { return terms[order[i]] }, func(i int) []byte { return b.bufs[order[i]] })
}

func flatten(lists [][]int) (off, to []uint32) {
	off = make([]uint32, 1, len(lists)+1)
	for _, l := range lists {
		for _, j := range l {
			to = append(to, uint32(j))
		}
		off = append(off, uint32(len(to)))
	}
	return off, to
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

// bm25 scores every file against the query terms over one field and
// returns, per file, the score and the best-contributing terms.
func (ix *Index) bm25(qts []queryTerm, t *table, length func(*fileEntry) uint32, avg float64) ([]float64, [][]string) {
	n := len(ix.files)
	scores := make([]float64, n)
	// The four best terms per file, kept in place: a map or per-file
	// slices cost more than the scoring itself on large repositories.
	const keep = 4
	bestT := make([]int32, keep*n)
	bestV := make([]float32, keep*n)
	for qi, q := range qts {
		v := t.get(q.term)
		if v == nil {
			continue
		}
		df := 0
		eachPosting(v, func(int, uint32) { df++ })
		w := q.weight * idf(n, df)
		eachPosting(v, func(i int, tf uint32) {
			if i >= n {
				return
			}
			s := w * bm25tf(int(tf), int(length(&ix.files[i])), avg)
			scores[i] += s
			vs, ts := bestV[keep*i:keep*i+keep], bestT[keep*i:keep*i+keep]
			for k := 0; k < keep; k++ {
				if float32(s) > vs[k] {
					copy(vs[k+1:], vs[k:keep-1])
					copy(ts[k+1:], ts[k:keep-1])
					vs[k], ts[k] = float32(s), int32(qi)
					break
				}
			}
		})
	}
	top := make([][]string, n)
	for i := range top {
		if scores[i] == 0 {
			continue
		}
		for k := 0; k < keep && bestV[keep*i+k] > 0; k++ {
			top[i] = append(top[i], qts[bestT[keep*i+k]].term)
		}
	}
	return scores, top
}

func (ix *Index) contentBM25(qts []queryTerm) ([]float64, [][]string) {
	return ix.bm25(qts, &ix.content, func(f *fileEntry) uint32 { return f.length }, ix.avgContent)
}
