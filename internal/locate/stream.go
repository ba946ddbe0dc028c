package locate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/repomap"
)

// streamIndex builds the index of the repository at root and saves it at
// dest in dir (the cache directory) without holding the map or the
// index's term tables whole (see spill): the map's files come a chunk at
// a time, their terms and definitions go to spill files in a private
// directory under dir, removed on every path, and the index file is
// written from the merge of those. It returns the saved index loaded as
// a second query loads it.
func streamIndex(ctx context.Context, root string, opts repomap.Options, hist historySource, dir, dest string) (*Index, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating cache dir: %w", err)
	}
	pruneStaleBuilds(dir, time.Now())
	tmp, err := os.MkdirTemp(dir, buildDirPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary index directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	b, err := newStreamBuilder(tmp)
	if err != nil {
		return nil, err
	}
	defer b.close()
	logged := startHistory(ctx, hist)
	m, err := repomap.Stream(ctx, root, opts, b.chunk)
	if err != nil {
		logged.drain()
		return nil, err
	}
	if b.n != m.Len() {
		logged.drain()
		return nil, fmt.Errorf("mapping %s: %s streamed for a map of %d", root, plural.Count(b.n, "file", "files"), m.Len())
	}
	// The history is indexed beside the index's tables, its paths looked
	// up in the complete map's: it reads nothing they write.
	indexed := logged.index(mapPaths{m}, logger(opts))
	ix := b.index(m)
	m = nil
	h := <-indexed
	ix.hist, ix.cited = h.hist, h.cited
	runtime.GC() // what the map left is garbage: the file is written in its room
	// The base names are read from the file entries, not the map: built
	// while the map was still held, the table and its sorting scratch
	// (about 8 MB at 100,000 files) set the cold query's highest heap.
	ix.bases = basesTable(len(ix.files), func(i int) string { return ix.files[i].path })
	if err := b.save(ix, tmp, dest); err != nil {
		return nil, err
	}
	repomap.PruneCache(dir, "locate-", ".idx", keepIndexes)
	ix = nil
	runtime.GC()
	saved, err := loadIndex(dest)
	if err != nil {
		return nil, err
	}
	saved.root = root
	return saved, nil
}

// buildDirPrefix names the temporary directories cold queries build
// their index in, under the cache directory.
const buildDirPrefix = ".locate-build-"

// staleBuildAge is how old a build directory must be for the next cold
// query to remove it: one a killed query left (every other path removes
// its own), not one another query is writing into now.
const staleBuildAge = 6 * time.Hour

// pruneStaleBuilds removes build directories in dir last changed before
// now less staleBuildAge. A link in their place is removed, not followed.
func pruneStaleBuilds(dir string, now time.Time) {
	names, err := filepath.Glob(filepath.Join(dir, buildDirPrefix+"*"))
	if err != nil {
		return
	}
	for _, n := range names {
		if fi, err := os.Lstat(n); err == nil && now.Sub(fi.ModTime()) > staleBuildAge {
			os.RemoveAll(n)
		}
	}
}

// streamBuilder receives the map's chunks: the term and definition
// tables go to spills, each file's lengths and flags stay (one block a
// chunk) until index makes the file entries with the map's paths.
type streamBuilder struct {
	content, paths, syms, defs *spill
	stats                      [][]fileStats
	n                          int // files received
}

// fileStats is a file entry without its path: what the builder keeps of
// a file while the map streams. The path is read from the map once it is
// complete, so the scan does not hold a string header a file twice (the
// listing's and the entry's), and each chunk's block is sized once, with
// no array of every file grown and copied during the scan (at 100,000
// files 1.6 MB live at the scan's end instead of 3.2 MB and its growth).
type fileStats struct {
	length, pathLen, symLen uint32
	flags                   uint8
}

func newStreamBuilder(tmp string) (*streamBuilder, error) {
	b := &streamBuilder{}
	for _, s := range []struct {
		to   **spill
		kind spillKind
	}{{&b.content, spillPostings}, {&b.paths, spillPostings}, {&b.syms, spillPostings}, {&b.defs, spillDefs}} {
		sp, err := newSpill(tmp, s.kind)
		if err != nil {
			b.close()
			return nil, err
		}
		*s.to = sp
	}
	return b, nil
}

func (b *streamBuilder) close() {
	for _, s := range []*spill{b.content, b.paths, b.syms, b.defs} {
		if s != nil {
			s.f.Close()
		}
	}
}

// chunk inverts one chunk's files into runs, as NewIndex inverts a whole
// map's. It runs between chunks with the map's workers idle, so its work
// is split over two goroutines, each writing its own spills: the contents'
// table (the largest) after sorting the terms, and beside them the
// definitions' table (which needs no term order), the files' lengths and
// then the path and symbol tables. Each table is built and written as
// before, so the runs and the index file are the same bytes.
func (b *streamBuilder) chunk(c repomap.Chunk) error {
	m := &repomap.Map{Entries: c.Files, Vocab: c.Vocab}
	sorted := make(chan []uint32, 1)
	var block []fileStats
	var wg sync.WaitGroup
	var besideErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		block, besideErr = b.chunkBeside(m, c.First, sorted)
	}()
	order := sortedTerms(c.Vocab)
	sorted <- order
	err := b.fieldRun(m, b.content, (*repomap.File).Content, order, c.First)
	wg.Wait()
	if err = errors.Join(err, besideErr); err != nil {
		return err
	}
	b.stats = append(b.stats, block)
	b.n += len(c.Files)
	return nil
}

// chunkBeside is chunk's second goroutine: the definitions' run, the
// files' stats, and once sorted gives the term order, the path and symbol
// runs.
func (b *streamBuilder) chunkBeside(m *repomap.Map, first int, sorted <-chan []uint32) ([]fileStats, error) {
	if err := b.defs.add(defsTable(m), nil, first); err != nil {
		<-sorted
		return nil, err
	}
	block := make([]fileStats, len(m.Entries))
	for i := range m.Entries {
		e := newFileEntry(&m.Entries[i])
		block[i] = fileStats{length: e.length, pathLen: e.pathLen, symLen: e.symLen, flags: e.flags}
	}
	order := <-sorted
	if err := b.fieldRun(m, b.paths, (*repomap.File).PathTerms, order, first); err != nil {
		return nil, err
	}
	if err := b.fieldRun(m, b.syms, (*repomap.File).SymbolTerms, order, first); err != nil {
		return nil, err
	}
	return block, nil
}

// fieldRun inverts one field of m's files into a run of to.
func (b *streamBuilder) fieldRun(m *repomap.Map, to *spill, field func(*repomap.File) repomap.TermCounts, order []uint32, first int) error {
	t, lasts := fieldTableLast(m, field, order, nil)
	return to.add(t, lasts, first)
}

// index is the part of the index held in memory once m, Stream's light
// map, is complete: file entries, the Python module and export tables,
// and the import graph. Its term and definition tables are in the
// spills; its base name table is built by bases once m is collected.
func (b *streamBuilder) index(m *repomap.Map) *Index {
	n := m.Len()
	ix := &Index{hist: history{terms: tableBuilder{}.build(), fileOff: []uint32{0}}, cited: emptyCited()}
	// The export table is the last reader of the imports, Python names
	// and import lookup: they are dropped before the other tables are
	// built, so those do not add to them at the peak, and collected, so
	// the collector's goal while those are built is twice what is live
	// without them, not twice what import resolution held (at 20,000
	// files the heap went from 16-18 MB to 11-12 here).
	ix.exports = exportTable(m)
	m.DropImports()
	runtime.GC()
	// The prior is computed first and its garbage (the import edges'
	// blocks, joined, and PageRank's two float64 arrays) collected
	// before the file entries and module table are made; the reverse
	// graph waits for the save (see save). With all of them made here
	// this phase's heap reached 31-33 MB at 100,000 files, a cold query's
	// highest; it stays under 25 MB.
	ix.depOff, ix.depTo, ix.prior = forwardGraph(m)
	runtime.GC()
	// The entries are made once the import lookup is collected: the
	// chunks' blocks and the map's paths, in file order.
	ix.files = make([]fileEntry, 0, n)
	var sumC, sumP, sumS float64
	for _, block := range b.stats {
		for _, s := range block {
			ix.files = append(ix.files, fileEntry{path: m.Path(len(ix.files)), length: s.length, pathLen: s.pathLen, symLen: s.symLen, flags: s.flags})
			sumC += float64(s.length)
			sumP += float64(s.pathLen)
			sumS += float64(s.symLen)
		}
	}
	b.stats = nil
	ix.modules = moduleTable(m)
	nf := math.Max(1, float64(n))
	avg := func(sum float64) float64 { return float64(float32(math.Max(1, sum/nf))) }
	ix.avgContent, ix.avgPath, ix.avgSym = avg(sumC), avg(sumP), avg(sumS)
	return ix
}

// save writes ix's index file, its term and definition tables merged
// from the spills, to a temporary file in tmp and renames it to dest. It
// drops ix's file table once that is written, first in the file, and
// collects it: the merges that follow, which set a cold query's highest
// heap, then run without it (at 100,000 files 3.2 MB of entries and the
// 5 MB of paths they held; the heap's highest during the save went from
// 36 to 27 MB), and the caller loads the saved index for its query.
func (b *streamBuilder) save(ix *Index, tmp, dest string) error {
	f, err := createTemp(tmp, "index-*")
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 64<<10)
	e := &encoder{buf: append(make([]byte, 0, encoderFlush+64), indexMagic...), w: w}
	e.fileSections(ix)
	if e.flush(); e.err != nil {
		return fmt.Errorf("writing index file: %w", e.err)
	}
	ix.files, ix.prior = nil, nil
	// Collected at once, so the collector's goal during the merges is
	// twice what is live without the file table, not twice what was live
	// with it.
	runtime.GC()
	for _, s := range []*spill{b.content, b.paths, b.syms, b.defs} {
		if err := mergeInto(w, s, tmp); err != nil {
			return err
		}
	}
	for _, t := range []table{ix.modules, ix.bases, ix.exports} {
		e.table(t)
	}
	// The reverse graph, which index leaves out, is built here, where
	// the file table is gone and the merges' garbage is collected first:
	// its arrays (the size of the import edges) then add to the least
	// that is live in the whole build.
	runtime.GC()
	ix.rdepOff, ix.rdepTo = reverseGraph(ix.depOff, ix.depTo)
	e.restSections(ix)
	if e.flush(); e.err != nil {
		return fmt.Errorf("writing index file: %w", e.err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing index file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing index file: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("setting the index file's mode: %w", err)
	}
	// Closed before the rename, which some systems refuse on an open file.
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing index file: %w", err)
	}
	if err := os.Rename(f.Name(), dest); err != nil {
		return fmt.Errorf("saving index: %w", err)
	}
	return nil
}

// mergeInto merges s's runs and writes the table to w; the merge's
// section files are removed once copied.
func mergeInto(w *bufio.Writer, s *spill, tmp string) error {
	dir, err := os.MkdirTemp(tmp, "merge-*")
	if err != nil {
		return fmt.Errorf("creating a temporary index directory: %w", err)
	}
	defer os.RemoveAll(dir)
	out, err := newTableOut(dir)
	if err != nil {
		return err
	}
	defer out.close()
	if err := s.merge(out); err != nil {
		return err
	}
	return out.writeTo(w)
}

// historyLogs are the two logs an index reads its history from, read
// in the background by one git log.
type historyLogs chan logResult

type logResult struct {
	hist, cited []byte
	err         error
}

// startHistory starts reading hist's logs.
func startHistory(ctx context.Context, hist historySource) historyLogs {
	h := make(historyLogs, 1)
	go func() {
		out, cited, err := readLogs(ctx, hist)
		h <- logResult{out, cited, err}
	}()
	return h
}

// indexedHistory is the index's history and cited commits (empty with
// no log).
type indexedHistory struct {
	hist  history
	cited cited
}

// index waits for the logs and indexes them on a goroutine of its own,
// their paths looked up in paths; the channel gives the result.
func (h historyLogs) index(paths pathFinder, log interface{ Debug(string, ...any) }) <-chan indexedHistory {
	out := make(chan indexedHistory, 1)
	go func() {
		r := indexedHistory{hist: history{terms: tableBuilder{}.build(), fileOff: []uint32{0}}, cited: emptyCited()}
		l := <-h
		if l.err != nil {
			log.Debug("locate: no history", "err", l.err)
		} else {
			r.hist, r.cited = historyOf(l.hist, paths), citedOf(l.cited, paths)
		}
		out <- r
	}()
	return out
}

// mapPaths finds a file of a complete map by its path: the index's file
// table numbers the map's files alike (streamBuilder.index).
type mapPaths struct{ m *repomap.Map }

func (p mapPaths) byPath(path string) (int, bool) {
	n := p.m.Len()
	i := sort.Search(n, func(i int) bool { return p.m.Path(i) >= path })
	return i, i < n && p.m.Path(i) == path
}

// drain waits for the logs, unused.
func (h historyLogs) drain() { <-h }

// apply waits for the logs and indexes them into ix.
func (h historyLogs) apply(ix *Index, log interface{ Debug(string, ...any) }) {
	l := <-h
	if l.err != nil {
		// Not a repository, no commit yet: the ranking goes on without
		// history.
		log.Debug("locate: no history", "err", l.err)
		return
	}
	ix.setHistory(l.hist)
	ix.setCited(l.cited)
}
