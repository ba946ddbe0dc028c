// Package locate ranks a repository's files for an issue text without a
// model: lexical relevance (BM25 over paths, symbol names and contents),
// names the issue quotes (paths, traceback frames, dotted names,
// identifiers), words it quotes found verbatim, links between tests and
// the code they test, the import graph and past commits, combined by a linear model whose weights are fitted offline
// (weights.json, see Fit).
package locate

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

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
	// exports maps a Python name to postings (file, importers): the files
	// defining it that other files import it from.
	exports table
	// modules maps a Python dotted module name to its file.
	modules table
	// bases maps a file's base name to the files bearing it.
	bases table
	// deps and rdeps are the import graph and its reverse, as adjacency
	// lists: file i's targets are to[off[i]:off[i+1]]. An index loaded
	// from a file reads them from there instead (depLists, rdepLists).
	depOff, depTo, rdepOff, rdepTo []uint32
	depLists, rdepLists            *diskLists
	// hist holds past commits' messages and changed files.
	hist history
	// cited holds past commits that cite issue numbers (refs.go).
	cited cited
	// prior is PageRank over the import graph, log-scaled to [0,1].
	prior []float32
	// fromCache is set when Open loaded the index from disk.
	fromCache bool
	// root is the directory the index describes, where the second stage
	// reads its candidates; "" skips that stage.
	root string
	// src is the index file a loaded index reads its tables from.
	src *indexFile
	// pending is set when Open loaded the index before the tree's state
	// key was known (guess.go).
	pending *pendingKey
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

func (ix *Index) deps(i int) []uint32 {
	if ix.depLists != nil {
		return ix.depLists.row(i)
	}
	return adj(ix.depOff, ix.depTo, i)
}

func (ix *Index) dependents(i int) []uint32 {
	if ix.rdepLists != nil {
		return ix.rdepLists.row(i)
	}
	return adj(ix.rdepOff, ix.rdepTo, i)
}

// Rank orders the index's files for query, best first, returning at most
// k (k <= 0 means 10). Files with no evidence at all are left out. An
// index loaded from its file fails the query if a part of the file it
// needed could not be read.
func (ix *Index) Rank(query string, k int, opts Options) ([]Ranked, error) {
	if ix.pending != nil {
		return ix.pending.rank(ix, query, k, opts)
	}
	return ix.rankSettled(query, k, opts)
}

// rankSettled is Rank on an index known to be the tree's.
func (ix *Index) rankSettled(query string, k int, opts Options) ([]Ranked, error) {
	rs, err := ix.rank(query, k, opts)
	if err != nil {
		return nil, err
	}
	if ix.src != nil {
		if err := ix.src.readErr(); err != nil {
			return nil, fmt.Errorf("ranking files: %w", err)
		}
	}
	return rs, nil
}

// Close releases the index file a loaded index reads from; an index
// built in memory holds none. Ranking after Close fails.
func (ix *Index) Close() error {
	if ix.pending != nil {
		ix.pending.closePending()
	}
	if ix.src == nil || ix.src.closer == nil {
		return nil
	}
	ix.src.fail(errors.New("index is closed"))
	if err := ix.src.closer.Close(); err != nil {
		return fmt.Errorf("closing index file: %w", err)
	}
	return nil
}

// NumFiles is the number of files the index ranks.
func (ix *Index) NumFiles() int {
	if ix.pending != nil && ix.pending.wait(ix) != nil {
		return 0
	}
	return len(ix.files)
}

// NewIndex prepares m for ranking.
func NewIndex(m *repomap.Map) *Index {
	n := len(m.Entries)
	ix := &Index{files: make([]fileEntry, n), root: m.Root,
		hist: history{terms: tableBuilder{}.build(), fileOff: []uint32{0}}, cited: emptyCited()}

	// The map has counted every file's terms already; the index inverts
	// them into postings, written straight into each table in its key
	// order (see fieldTable). Sorting the vocabulary runs beside sizing
	// the contents' postings; the two small fields and the name tables
	// run on other goroutines beside the contents and the rest.
	contentOf := (*repomap.File).Content
	ordered := make(chan []uint32, 1)
	go func() { ordered <- sortedTerms(m.Vocab) }()
	contentSizes := postingSizes(m, contentOf)
	order := <-ordered
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		ix.pathTerms = fieldTable(m, (*repomap.File).PathTerms, order, nil)
		ix.symTerms = fieldTable(m, (*repomap.File).SymbolTerms, order, nil)
	}()
	go func() {
		defer wg.Done()
		ix.defs, ix.bases = nameTables(m)
		ix.exports = exportTable(m)
	}()
	ix.content = fieldTable(m, contentOf, order, contentSizes)
	sumC, sumP, sumS := ix.fileTables(m)
	ix.importGraph(m)
	wg.Wait()

	nf := math.Max(1, float64(n))
	// Averages are kept at the precision the index file stores, so a
	// loaded index ranks exactly as the one built.
	avg := func(sum float64) float64 { return float64(float32(math.Max(1, sum/nf))) }
	ix.avgContent, ix.avgPath, ix.avgSym = avg(sumC), avg(sumP), avg(sumS)
	return ix
}

// newFileEntry is f's entry.
func newFileEntry(f *repomap.File) fileEntry {
	e := fileEntry{path: f.Path, length: uint32(f.Length),
		pathLen: uint32(f.PathTerms().Len()), symLen: uint32(f.SymbolTerms().Len())}
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

// postingSizes returns the bytes each vocabulary id's postings take in
// one field (see appendPosting): the first of fieldTable's two passes.
func postingSizes(m *repomap.Map, field func(*repomap.File) repomap.TermCounts) []uint32 {
	sizes := make([]uint32, len(m.Vocab))
	last := make([]int32, len(m.Vocab))
	for i := range m.Entries {
		field(&m.Entries[i]).Each(func(id, count uint32) {
			if int(id) < len(sizes) {
				sizes[id] += uint32(uvarintLen(uint64(i-int(last[id]))) + uvarintLen(uint64(count)))
				last[id] = int32(i)
			}
		})
	}
	return sizes
}

// uvarintLen is the length of x's uvarint encoding.
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// fieldTable inverts one field's per-file term counts into the table of
// its terms' postings; order is the vocabulary sorted (sortedTerms) and
// sizes what postingSizes returns (nil computes it). Sizing first lets
// every posting be written once, in place, into the table's one value
// buffer: no growing buffer per term, and no second copy into the table.
// Vocabulary terms are distinct, so the keys ascend without a map.
func fieldTable(m *repomap.Map, field func(*repomap.File) repomap.TermCounts, order, sizes []uint32) table {
	t, _ := fieldTableLast(m, field, order, sizes)
	return t
}

// fieldTableLast is fieldTable that also returns, for each of the table's
// keys in order, the number of its last file: what a spilled run records
// per key (spill.add), known here without decoding the postings again.
func fieldTableLast(m *repomap.Map, field func(*repomap.File) repomap.TermCounts, order, sizes []uint32) (table, []int32) {
	if sizes == nil {
		sizes = postingSizes(m, field)
	}
	used, total, klen := 0, 0, 0
	for _, id := range order {
		if sizes[id] > 0 {
			used++
			total += int(sizes[id])
			klen += len(m.Vocab[id])
		}
	}
	t := table{koff: make([]uint32, 1, used+1), voff: make([]uint32, 1, used+1), vals: make([]byte, total)}
	var sb strings.Builder
	sb.Grow(klen)
	// sizes becomes each id's write position in vals.
	at := uint32(0)
	for _, id := range order {
		if size := sizes[id]; size > 0 {
			sb.WriteString(m.Vocab[id])
			t.koff = append(t.koff, uint32(sb.Len()))
			sizes[id] = at
			at += size
			t.voff = append(t.voff, at)
		}
	}
	t.keys = sb.String()
	last := make([]int32, len(m.Vocab))
	for i := range m.Entries {
		field(&m.Entries[i]).Each(func(id, count uint32) {
			if int(id) < len(sizes) {
				w := sizes[id]
				w += uint32(binary.PutUvarint(t.vals[w:], uint64(i-int(last[id]))))
				w += uint32(binary.PutUvarint(t.vals[w:], uint64(count)))
				sizes[id], last[id] = w, int32(i)
			}
		})
	}
	// A used id's write position ended at its value's end; an unused
	// id's was never set (0), and no used one ends at 0.
	lasts := make([]int32, 0, used)
	for _, id := range order {
		if sizes[id] > 0 {
			lasts = append(lasts, last[id])
		}
	}
	return t, lasts
}

// fileTables fills the file entries and the module table, and returns
// the total content, path and symbol lengths.
func (ix *Index) fileTables(m *repomap.Map) (sumC, sumP, sumS float64) {
	for i := range m.Entries {
		e := newFileEntry(&m.Entries[i])
		sumC += float64(e.length)
		sumP += float64(e.pathLen)
		sumS += float64(e.symLen)
		ix.files[i] = e
	}
	ix.modules = moduleTable(m)
	return sumC, sumP, sumS
}

// moduleTable maps each Python module name to its file, the shortest
// path when two trees claim a module (the first in file order among
// equals): the map's own sorted claims (repomap.Map.PythonModules), which
// import resolution already worked out, written as a table.
func moduleTable(m *repomap.Map) table {
	claims := m.PythonModules()
	vals := make([]byte, 0, len(claims)*binary.MaxVarintLen32)
	ends := make([]uint32, len(claims))
	for k, c := range claims {
		vals = binary.AppendUvarint(vals, uint64(c.File))
		ends[k] = uint32(len(vals))
	}
	return sortedTable(len(claims), func(k int) string { return claims[k].Module }, func(k int) []byte {
		start := uint32(0)
		if k > 0 {
			start = ends[k-1]
		}
		return vals[start:ends[k]]
	})
}

// nameTables builds the symbol definitions and file base name tables.
func nameTables(m *repomap.Map) (defs, bases table) {
	return defsTable(m), basesTable(len(m.Entries), func(i int) string { return m.Entries[i].Path })
}

// symRef is one symbol of the map: m.Entries[file].Symbols[sym].
type symRef struct{ file, sym int32 }

// defsTable maps each symbol name to its definitions (appendDef), in file
// order and, within a file, in the order the file defines them.
func defsTable(m *repomap.Map) table {
	n := 0
	for i := range m.Entries {
		n += len(m.Entries[i].Symbols)
	}
	refs := make([]symRef, 0, n)
	for i := range m.Entries {
		for k := range m.Entries[i].Symbols {
			refs = append(refs, symRef{int32(i), int32(k)})
		}
	}
	sym := func(i int) *repomap.Symbol { return &m.Entries[refs[i].file].Symbols[refs[i].sym] }
	return keyedTable(len(refs), func(i int) string { return sym(i).Name }, func(buf []byte, i int) []byte {
		s := sym(i)
		return appendDef(buf, symDef{file: int(refs[i].file), kind: s.Kind.String(), parent: s.Parent})
	})
}

// basesTable maps each file base name to the files bearing it, in file
// order (uvarints). The files are sorted by base name (sortedTerms: equal
// names keep file order) and the table written from that order: nearly
// every base name is distinct, so interning them (keyedTable) built a
// table of every name beside the result, 18 MB of garbage at 100,000
// files at the cold query's highest heap, against about 4 here.
//
// The table is of n files, file i's path being pathOf(i): a cold query
// builds it from the index's file entries once the map is gone.
func basesTable(n int, pathOf func(int) string) table {
	bases := make([]string, n)
	for i := range bases {
		bases[i] = path.Base(pathOf(i))
	}
	order := sortedTerms(bases)
	distinct, klen, vlen := 0, 0, 0
	for k, id := range order {
		if k == 0 || bases[id] != bases[order[k-1]] {
			distinct++
			klen += len(bases[id])
		}
		vlen += uvarintLen(uint64(id))
	}
	t := table{koff: make([]uint32, 1, distinct+1), voff: make([]uint32, 1, distinct+1), vals: make([]byte, 0, vlen)}
	var sb strings.Builder
	sb.Grow(klen)
	for k, id := range order {
		if k > 0 && bases[id] != bases[order[k-1]] {
			t.voff = append(t.voff, uint32(len(t.vals)))
		}
		if k == 0 || bases[id] != bases[order[k-1]] {
			sb.WriteString(bases[id])
			t.koff = append(t.koff, uint32(sb.Len()))
		}
		t.vals = binary.AppendUvarint(t.vals, uint64(id))
	}
	if len(order) > 0 {
		t.voff = append(t.voff, uint32(len(t.vals)))
	}
	t.keys = sb.String()
	return t
}

// keyedTable builds the table of n items: each distinct key's value is
// what put appends for each of its items, in item order. Like fieldTable
// it sizes every value first and then writes each item once, in place,
// into the table's one value buffer: a key's number is all a map holds,
// not a growing value per key. put runs twice per item.
func keyedTable(n int, key func(int) string, put func([]byte, int) []byte) table {
	ids := repomap.NewInterner(1 << 10)
	of := make([]uint32, n)
	var sizes []uint32
	var scratch []byte
	for i := 0; i < n; i++ {
		id := ids.IDString(key(i))
		if int(id) == len(sizes) {
			sizes = append(sizes, 0)
		}
		of[i] = id
		scratch = put(scratch[:0], i)
		sizes[id] += uint32(len(scratch))
	}
	names := ids.Strings()
	klen, total := 0, 0
	for id, k := range names {
		klen += len(k)
		total += int(sizes[id])
	}
	t := table{koff: make([]uint32, 1, len(names)+1), voff: make([]uint32, 1, len(names)+1), vals: make([]byte, total)}
	var sb strings.Builder
	sb.Grow(klen)
	// sizes becomes each key's write position in vals.
	at := uint32(0)
	for _, id := range sortedTerms(names) {
		sb.WriteString(names[id])
		t.koff = append(t.koff, uint32(sb.Len()))
		size := sizes[id]
		sizes[id] = at
		at += size
		t.voff = append(t.voff, at)
	}
	t.keys = sb.String()
	for i, id := range of {
		// Appending to an empty slice of vals at the key's position
		// writes in place: the sizes leave it room.
		w := sizes[id]
		sizes[id] += uint32(len(put(t.vals[w:w], i)))
	}
	return t
}

// exportTable builds the exports table from the map's from-imports.
func exportTable(m *repomap.Map) table {
	b := tableBuilder{}
	for name, list := range repomap.PythonNameImports(m) {
		var buf []byte
		last := 0
		for _, ni := range list {
			buf = appendPosting(buf, &last, ni.File, uint32(ni.Importers))
		}
		b[name] = buf
	}
	return b.build()
}

// sortedTerms returns the vocabulary's ids in the order of their terms
// (an interned vocabulary, a table's keys), equal terms by id. The
// ids are sorted by their terms' first eight bytes as numbers (radixSort:
// no comparisons), each run of ids whose terms share those bytes by the
// next eight, and so on; only short runs, and runs whose terms end within
// the bytes sorted so far, are sorted by comparing the terms.
func sortedTerms(vocab []string) []uint32 {
	ids := make([]uint32, len(vocab))
	for id := range vocab {
		ids[id] = uint32(id)
	}
	s := termSorter{vocab: vocab, keys: make([]uint64, len(vocab)), tmpKeys: make([]uint64, len(vocab)), tmpIDs: make([]uint32, len(vocab))}
	s.sort(ids, 0)
	return ids
}

// termSorter sorts ids of vocab by their terms with scratch space for
// the keys of the longest run (the whole vocabulary).
type termSorter struct {
	vocab         []string
	keys, tmpKeys []uint64
	tmpIDs        []uint32
}

// compare orders two ids by their terms, then by id.
func (s *termSorter) compare(a, b uint32) int {
	return cmp.Or(strings.Compare(s.vocab[a], s.vocab[b]), cmp.Compare(a, b))
}

// sort orders ids, whose terms share their first offset bytes (zero
// padded), by the terms.
func (s *termSorter) sort(ids []uint32, offset int) {
	if len(ids) <= 32 {
		slices.SortFunc(ids, s.compare)
		return
	}
	keys := s.keys[:len(ids)]
	longer := false // a term goes on past this key's bytes
	for i, id := range ids {
		t := s.vocab[id]
		keys[i] = termPrefix(t[min(offset, len(t)):])
		longer = longer || len(t) > offset+8
	}
	radixSort(keys, ids, s.tmpKeys[:len(ids)], s.tmpIDs[:len(ids)])
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && keys[j] == keys[i] {
			j++
		}
		switch {
		case j-i == 1:
		case longer:
			// The run's keys go to the start of s.keys, over keys
			// before j, which are not read again.
			s.sort(ids[i:j], offset+8)
		default:
			slices.SortFunc(ids[i:j], s.compare)
		}
		i = j
	}
}

// radixSort orders keys, and ids beside them, by keys, in place: a
// least-significant-byte-first radix sort through tmpKeys and tmpIDs (as
// long as keys), one counting pass for all eight bytes and one move per
// byte that is not the same in every key.
func radixSort(keys []uint64, ids []uint32, tmpKeys []uint64, tmpIDs []uint32) {
	var counts [8][256]int
	for _, k := range keys {
		for d := range counts {
			counts[d][byte(k>>(8*d))]++
		}
	}
	src, srcIDs, dst, dstIDs := keys, ids, tmpKeys, tmpIDs
	for d := range counts {
		c := &counts[d]
		if len(src) == 0 || c[byte(src[0]>>(8*d))] == len(src) {
			continue // every key has this byte: the order stands
		}
		at := 0
		for b, n := range c {
			c[b], at = at, at+n
		}
		for i, k := range src {
			b := byte(k >> (8 * d))
			dst[c[b]], dstIDs[c[b]] = k, srcIDs[i]
			c[b]++
		}
		src, srcIDs, dst, dstIDs = dst, dstIDs, src, srcIDs
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
		copy(ids, srcIDs)
	}
}

// termPrefix is t's first eight bytes as a big-endian number, zeros after
// a shorter t: two terms whose prefixes differ compare as their prefixes
// do (where one is a prefix of the other the shorter, padded with zeros,
// is the smaller either way), so only equal prefixes need the terms.
func termPrefix(t string) uint64 {
	var b [8]byte
	copy(b[:], t)
	return binary.BigEndian.Uint64(b[:])
}

// importGraph stores the import edges between m's files, both ways, and
// the PageRank prior over them (forwardGraph, then reverseGraph).
func (ix *Index) importGraph(m *repomap.Map) {
	ix.depOff, ix.depTo, ix.prior = forwardGraph(m)
	ix.rdepOff, ix.rdepTo = reverseGraph(ix.depOff, ix.depTo)
}

// forwardGraph returns the import edges of m's files (file i's targets
// are to[off[i]:off[i+1]]) and the PageRank prior over them. The map's
// graph is the index's: file numbers are the index's, and no file imports
// itself. A streamed map hands over what import resolution wrote, without
// a copy.
func forwardGraph(m *repomap.Map) (off, to []uint32, prior []float32) {
	off, to = m.DepGraph()
	pr := pagerank(off, to, 20, 0.85)
	prior = make([]float32, len(pr))
	for i, v := range pr {
		prior[i] = float32(v)
	}
	return off, to, prior
}

// reverseGraph returns each file's importers given the edges depOff and
// depTo, written straight into their flat form (file j's importers are
// rdepTo[rdepOff[j]:rdepOff[j+1]], in file order) by counting each file's
// importers first: no list per file.
func reverseGraph(depOff, depTo []uint32) (rdepOff, rdepTo []uint32) {
	n := len(depOff) - 1
	// rdepOff[j+1] counts j's importers, then becomes their offsets.
	rdepOff = make([]uint32, n+1)
	for _, j := range depTo {
		rdepOff[j+1]++
	}
	for j := 1; j <= n; j++ {
		rdepOff[j] += rdepOff[j-1]
	}
	rdepTo = make([]uint32, len(depTo))
	next := slices.Clone(rdepOff[:n])
	for i := 0; i < n; i++ {
		for _, j := range depTo[depOff[i]:depOff[i+1]] {
			rdepTo[next[j]] = uint32(i)
			next[j]++
		}
	}
	return rdepOff, rdepTo
}

// pagerank scores files by how much of the code (transitively) imports
// them; tests count as importers like any other file. File i imports
// to[off[i]:off[i+1]].
func pagerank(off, to []uint32, iters int, damping float64) []float64 {
	n := len(off) - 1
	pr := make([]float64, n)
	if n <= 0 {
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
		for i := 0; i < n; i++ {
			targets := to[off[i]:off[i+1]]
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

// bm25Keep is how many best-contributing terms a file's BM25 note names.
const bm25Keep = 4

// termMatches name, for the files a ranking explains, the query terms
// that contributed most to each one's BM25 score on one field, best
// first. They are found once those files are known (find), in one more
// pass over the query terms' postings that keeps the shares of those
// files alone, instead of keeping every file's four best terms and
// their shares while scoring: at 100,000 files that was 8 bytes a file
// for each of a ranking's five BM25 signals and 16 bytes a file of
// scratch, 5.6 MB of every query's heap for the ten or hundred files
// explained.
type termMatches struct {
	ix  *Index
	qts []queryTerm
	fl  field
	// dfs is each query term's number of postings as scoring read them
	// (its idf's document frequency), -1 for a term with none.
	dfs []int
	// best holds, after find, each found file's best terms.
	best map[int][]string
}

// find works out the best terms of files (each a file of ix), as
// scoring met them: query term after query term, a term's share of a
// file (as float32) inserted among the file's best when it is larger
// than one of them (keepBest), so an earlier term stays before a later
// one of equal share.
func (m *termMatches) find(files []int) {
	if m == nil {
		return
	}
	ix := m.ix
	n := len(ix.files)
	want := slices.Clone(files)
	slices.Sort(want)
	want = slices.Compact(want)
	vs := make([]float32, bm25Keep*len(want))
	ts := make([]int32, bm25Keep*len(want))
	t, avg := fieldPostings(ix, m.fl)
	for qi, q := range m.qts {
		if m.dfs[qi] < 0 || len(want) == 0 {
			continue
		}
		w := q.weight * idf(n, m.dfs[qi])
		// The postings are walked in place, in file order as want is,
		// and left once past the last file wanted.
		v, file, j := t.get(q.term), 0, 0
		for len(v) > 0 && j < len(want) {
			d, k := binary.Uvarint(v)
			if k <= 0 {
				break
			}
			c, k2 := binary.Uvarint(v[k:])
			if k2 <= 0 {
				break
			}
			v = v[k+k2:]
			file += int(d)
			if file >= n {
				break
			}
			for j < len(want) && want[j] < file {
				j++
			}
			if j < len(want) && want[j] == file {
				s := w * bm25tf(int(c), int(ix.files[file].fieldLen(m.fl)), avg)
				keepBest(vs[bm25Keep*j:bm25Keep*j+bm25Keep], ts[bm25Keep*j:bm25Keep*j+bm25Keep], float32(s), int32(qi+1))
			}
		}
	}
	m.best = make(map[int][]string, len(want))
	for j, i := range want {
		for _, qt := range ts[bm25Keep*j : bm25Keep*j+bm25Keep] {
			if qt == 0 {
				break
			}
			m.best[i] = append(m.best[i], m.qts[qt-1].term)
		}
	}
}

// keepBest inserts term t with share s into a file's best terms ts (their
// shares vs), best first, an earlier term before a later one of equal
// share.
func keepBest(vs []float32, ts []int32, s float32, t int32) {
	for k := 0; k < bm25Keep; k++ {
		if s > vs[k] {
			copy(vs[k+1:], vs[k:bm25Keep-1])
			copy(ts[k+1:], ts[k:bm25Keep-1])
			vs[k], ts[k] = s, t
			return
		}
	}
}

// terms lists file i's best-contributing terms: nil when it scored 0 or
// find was not given it.
func (m *termMatches) terms(i int) []string {
	if m == nil {
		return nil
	}
	return m.best[i]
}

// field is one of the fields a file's terms are counted in.
type field uint8

const (
	fieldContent field = iota
	fieldPath
	fieldSymbols
)

// fieldLen is the number of terms f holds in fl.
func (f *fileEntry) fieldLen(fl field) uint32 {
	switch fl {
	case fieldPath:
		return f.pathLen
	case fieldSymbols:
		return f.symLen
	}
	return f.length
}

// fieldPostings returns ix's postings of field fl and its average length.
func fieldPostings(ix *Index, fl field) (*table, float64) {
	switch fl {
	case fieldPath:
		return &ix.pathTerms, ix.avgPath
	case fieldSymbols:
		return &ix.symTerms, ix.avgSym
	}
	return &ix.content, ix.avgContent
}

// postingList decodes a postings value as eachPosting does, into files
// and counts (reusing their storage).
func postingList(v []byte, files []int, counts []uint32) ([]int, []uint32) {
	file := 0
	for len(v) > 0 {
		d, n := binary.Uvarint(v)
		if n <= 0 {
			break
		}
		v = v[n:]
		c, n := binary.Uvarint(v)
		if n <= 0 {
			break
		}
		v = v[n:]
		file += int(d)
		files, counts = append(files, file), append(counts, uint32(c))
	}
	return files, counts
}

// bm25 scores every file against the query terms over one field, as
// bm25Term does each term (the same arithmetic in the same order, with
// each term's postings decoded once into reused lists instead of twice
// through callbacks). With matches it also returns what names the
// best-contributing terms of the files a ranking explains (see
// termMatches.find); without, nil.
func (ix *Index) bm25(qts []queryTerm, fl field, matches bool) ([]float64, *termMatches) {
	n := len(ix.files)
	t, avg := fieldPostings(ix, fl)
	scores := make([]float64, n)
	// Written whole before the sparse additions below read it: memory
	// fresh from the system is mapped on its first touch, and a page read
	// first is mapped to the shared zero page and faulted again, with
	// every other processor's TLB flushed, when it is then written. With
	// the collector held (collectorHold) every column is such memory.
	clear(scores)
	// Every posting takes two bytes at least, so the lists are made once,
	// for the longest value, instead of grown through every size up to it.
	vals, most := make([][]byte, len(qts)), 0
	for qi, q := range qts {
		vals[qi] = t.get(q.term)
		most = max(most, len(vals[qi])/2)
	}
	files, counts := make([]int, 0, most), make([]uint32, 0, most)
	dfs := make([]int, len(qts))
	for qi, q := range qts {
		v := vals[qi]
		if v == nil {
			dfs[qi] = -1
			continue
		}
		files, counts = postingList(v, files[:0], counts[:0])
		dfs[qi] = len(files)
		w := q.weight * idf(n, len(files))
		for k, i := range files {
			if i >= n {
				continue
			}
			scores[i] += w * bm25tf(int(counts[k]), int(ix.files[i].fieldLen(fl)), avg)
		}
	}
	if !matches {
		return scores, nil
	}
	return scores, &termMatches{ix: ix, qts: qts, fl: fl, dfs: dfs}
}

// bm25Term scores one query term of the given weight over a field's
// postings v among n documents, passing add each document's share.
func bm25Term(v []byte, n int, weight float64, length func(i int) int, avg float64, add func(i int, s float64)) {
	df := 0
	eachPosting(v, func(int, uint32) { df++ })
	w := weight * idf(n, df)
	eachPosting(v, func(i int, tf uint32) {
		if i < n {
			add(i, w*bm25tf(int(tf), length(i), avg))
		}
	})
}

func (ix *Index) contentBM25(qts []queryTerm) ([]float64, *termMatches) {
	return ix.bm25(qts, fieldContent, true)
}
