package locate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/safefile"
)

// indexMagic heads every index file; it changes with the format or with
// what NewIndex derives from a map.
const indexMagic = "planex-locate-index-v4\n"

// keepIndexes bounds how many indexes stay on disk per cache directory.
const keepIndexes = 8

// Open returns the ranking index of the repository at root. An index built
// for the same tree state is loaded from beside the map cache; otherwise the
// map is built (or loaded) and the index built from it and saved. When
// opts.Key and opts.CacheDir are both set, the caller vouches that the key
// names the tree's state (an extracted commit that never changes).
func Open(ctx context.Context, root string, opts repomap.Options) (*Index, error) {
	return open(ctx, root, opts, historySource{dir: root, rev: "HEAD"}, nil)
}

// OpenForOneQuery is Open for a process that ranks one query and exits
// (planex locate): while the index the last query used is loaded and
// ranked, the collector is held off (collector.go). Close gives it back.
func OpenForOneQuery(ctx context.Context, root string, opts repomap.Options) (*Index, error) {
	return open(ctx, root, opts, historySource{dir: root, rev: "HEAD"}, runtimeCollector{})
}

// open is Open reading the history from hist (Evaluate's trees are
// extracted without one; their history is in the mirror they came from).
// Unless the caller vouches for the key, the tree's state key (a stat of
// every file) is computed in the background while the index the previous
// query used is loaded and, in Rank, queried; Rank returns that ranking
// only once the key shows the tree is in that index's state (guess.go).
// With gc, the collector is held off while that index is loaded and
// queried (collector.go).
func open(ctx context.Context, root string, opts repomap.Options, hist historySource, gc collector) (*Index, error) {
	if opts.Key != "" && opts.CacheDir != "" {
		return openKeyed(ctx, root, opts, hist, indexKeys{key: opts.Key, idxKey: opts.Key}, opts.CacheDir, "")
	}
	check, err := repomap.StartStateKey(ctx, root, opts)
	if err != nil {
		logger(opts).Debug("locate: no cache key", "err", err)
		return openKeyed(ctx, root, opts, hist, indexKeys{}, "", "")
	}
	keyed := make(chan indexKeys, 1)
	go func() { keyed <- stateIndexKeys(ctx, root, check) }()
	guess := readLastKey(check.Dir, root)
	var hold *collectorHold
	if gc != nil && guess != "" {
		hold = holdCollector(gc, queryHeapLimit)
	}
	if ix := openGuess(check.Dir, guess); ix != nil {
		ix.root = root
		ix.pending = &pendingKey{guess: guess, keyed: keyed, hold: hold, reopen: func(k indexKeys) (*Index, error) {
			return openKeyed(ctx, root, opts, hist, k, check.Dir, guess)
		}}
		return ix, nil
	}
	hold.release()
	return openKeyed(ctx, root, opts, hist, <-keyed, check.Dir, guess)
}

// indexKeys are a tree's state key and the key its index is saved under
// (the state key and HEAD); both "" when there is none.
type indexKeys struct {
	key, idxKey string
	err         error
}

// stateIndexKeys waits for check's state key and adds HEAD to it.
func stateIndexKeys(ctx context.Context, root string, check *repomap.KeyCheck) indexKeys {
	key, err := check.Wait()
	if err != nil || key == "" {
		return indexKeys{err: err}
	}
	// The index holds HEAD's history too, which a commit can change
	// without changing the tree (an empty commit, a revert pair).
	k := indexKeys{key: key, idxKey: key}
	if head, err := gitrepo.Output(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil && len(bytes.TrimSpace(head)) >= 12 {
		k.idxKey = key + "-" + string(bytes.TrimSpace(head)[:12])
	}
	return k
}

// openKeyed loads the index saved under k in dir, or builds and saves
// it; with no key it builds an index and saves nothing. last is the key
// the previous query of root used (readLastKey), rewritten when it
// changes.
func openKeyed(ctx context.Context, root string, opts repomap.Options, hist historySource, k indexKeys, dir, last string) (*Index, error) {
	log := logger(opts)
	if k.err != nil {
		log.Debug("locate: no cache key", "err", k.err)
	}
	key, idxKey := k.key, k.idxKey
	derived := opts.Key == "" // a vouched key is an extracted commit's: not remembered
	remember := func() {
		if derived && key != "" && dir != "" && idxKey != last {
			writeLastKey(log, dir, root, idxKey)
		}
	}
	if key != "" {
		ix, err := loadIndex(indexPath(dir, idxKey))
		if err == nil {
			ix.fromCache = true
			ix.root = root
			remember()
			return ix, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			log.Debug("locate: index cache unusable, rebuilding", "err", err)
		}
	}
	opts.Key = key
	// The index is what locate caches; encoding the map as well would
	// cost a cold query more than building the index does.
	opts.NoCacheWrite = true
	if key != "" && dir != "" {
		ix, err := streamIndex(ctx, root, opts, hist, dir, indexPath(dir, idxKey))
		if err == nil {
			remember()
			return ix, nil
		}
		if ctx.Err() != nil || errors.Is(err, repomap.ErrNoSourceFiles) {
			return nil, err
		}
		// A cache that cannot be written is no reason to fail the
		// query: the index is built in memory and, if possible, saved.
		log.Warn("locate: could not write index cache, building in memory", "dir", dir, "err", err)
	}
	_, ix, err := build(ctx, root, opts, hist)
	if err != nil {
		return nil, err
	}
	// The map is garbage now, but the collector set its next goal while
	// map and index were both live, so encoding the index and ranking
	// would grow the heap on top of the map's memory before it runs again.
	// Collecting here lets them reuse it: on a large tree one collection
	// of the index alone costs far less than the memory it saves.
	runtime.GC()
	if key != "" {
		if err := saveIndex(dir, indexPath(dir, idxKey), ix); err != nil {
			log.Warn("locate: could not write index cache", "dir", dir, "err", err)
		} else {
			remember()
		}
	}
	return ix, nil
}

// Build maps the repository at root and prepares its index, history
// included: what Open does on a cache miss, for callers that need the map
// as well (exploration). It caches nothing itself beyond what opts asks of
// the map.
func Build(ctx context.Context, root string, opts repomap.Options) (*repomap.Map, *Index, error) {
	return build(ctx, root, opts, historySource{dir: root, rev: "HEAD"})
}

// build is Build reading the history from hist. git reads it while the
// map is built: on a cold query the two take about as long as each other.
func build(ctx context.Context, root string, opts repomap.Options, hist historySource) (*repomap.Map, *Index, error) {
	logs := startHistory(ctx, hist)
	m, err := repomap.Build(ctx, root, opts)
	if err != nil {
		logs.drain()
		return nil, nil, err
	}
	// Building the index allocates about a third of what the map holds
	// while the map stays live; the collector's next goal is twice what
	// was live at its last run, so without a collection here those
	// allocations stack on what building the map left behind (workers'
	// vocabularies and buffers, the listing) instead of reusing it. One
	// collection costs a fraction of a second of CPU on a large tree and
	// lowers a cold query's peak.
	runtime.GC()
	ix := NewIndex(m)
	logs.apply(ix, logger(opts))
	return m, ix, nil
}

func logger(opts repomap.Options) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.Default()
}

func indexPath(dir, key string) string { return filepath.Join(dir, "locate-"+key+".idx") }

func (ix *Index) encode() []byte {
	tables := []table{ix.content, ix.pathTerms, ix.symTerms, ix.defs, ix.modules, ix.bases, ix.exports}
	// Sized up front: growing a buffer of this size copies it several times.
	size := len(indexMagic) + 64 + 4*(8*len(ix.files)+len(ix.depTo)+len(ix.rdepTo))
	for _, f := range ix.files {
		size += len(f.path)
	}
	for _, t := range tables {
		size += tableSize(t)
	}
	e := &encoder{buf: append(make([]byte, 0, size), indexMagic...)}
	e.fileSections(ix)
	for _, t := range tables {
		e.table(t)
	}
	e.restSections(ix)
	return e.buf
}

// fileSections writes the file table, each file's prior and the averages
// of the field lengths: the sections before the tables.
func (e *encoder) fileSections(ix *Index) {
	// The same bytes as str of every path joined, then u32s of each
	// column, without building the string or the columns.
	total := 0
	for i := range ix.files {
		total += len(ix.files[i].path)
	}
	e.u32(uint32(total))
	for i := range ix.files {
		e.rawString(ix.files[i].path)
	}
	end := 0
	e.u32Each(len(ix.files)+1, func(i int) uint32 {
		if i > 0 {
			end += len(ix.files[i-1].path)
		}
		return uint32(end)
	})
	e.u32Each(len(ix.files), func(i int) uint32 { return ix.files[i].length })
	e.u32Each(len(ix.files), func(i int) uint32 { return ix.files[i].pathLen })
	e.u32Each(len(ix.files), func(i int) uint32 { return ix.files[i].symLen })
	e.u32(uint32(len(ix.files)))
	for i := range ix.files {
		e.buf = append(e.buf, ix.files[i].flags)
		e.spill()
	}
	e.u32Each(len(ix.files), func(i int) uint32 { return math.Float32bits(ix.prior[i]) })
	for _, avg := range []float64{ix.avgContent, ix.avgPath, ix.avgSym} {
		e.u32(math.Float32bits(float32(avg)))
	}
}

// restSections writes the sections after the tables: the import graph and
// the history.
func (e *encoder) restSections(ix *Index) {
	for _, s := range [][]uint32{ix.depOff, ix.depTo, ix.rdepOff, ix.rdepTo} {
		e.u32s(s)
	}
	h := &ix.hist
	e.table(h.terms)
	for _, s := range [][]uint32{h.fileOff, h.fileTo, h.lengths} {
		e.u32s(s)
	}
	e.u32(math.Float32bits(float32(h.avg)))
	e.str(h.subjects)
	e.table(ix.cited.terms)
	e.u32s(ix.cited.off)
	e.u32s(ix.cited.to)
	e.str(ix.cited.subjects)
}

// decodeIndex reads an index from data (see readIndex).
func decodeIndex(data []byte) (*Index, error) {
	return readIndex(&indexFile{r: bytes.NewReader(data), size: int64(len(data))})
}

// readIndex loads what every query needs from f: the magic, the file
// table, the history's commit lists and each table's sample. Every
// section's length is checked against the file, so a truncated file is
// refused here; the term tables and the import graph stay in f.
func readIndex(f *indexFile) (*Index, error) {
	magic := f.read(0, len(indexMagic))
	if string(magic) != indexMagic {
		return nil, errors.New("not an index of this version")
	}
	c := &cursor{f: f, pos: int64(len(indexMagic))}
	ix := &Index{src: f}
	if err := ix.readFiles(c); err != nil {
		return nil, err
	}
	for _, t := range []*table{&ix.content, &ix.pathTerms, &ix.symTerms, &ix.defs, &ix.modules, &ix.bases, &ix.exports} {
		*t = c.table()
	}
	n := len(ix.files)
	ix.depLists, ix.rdepLists = c.lists(n, n), c.lists(n, n)
	h := &ix.hist
	h.terms = c.table()
	h.fileOff, h.fileTo, h.lengths = c.u32s(), c.u32s(), c.u32s()
	h.avg = float64(math.Float32frombits(c.u32()))
	h.subjects = c.str()
	ct := &ix.cited
	ct.terms = c.table()
	ct.off, ct.to = c.u32s(), c.u32s()
	ct.subjects = c.str()
	if c.err != nil {
		return nil, c.err
	}
	if c.pos != f.size {
		return nil, fmt.Errorf("index file has %d bytes after its last section", f.size-c.pos)
	}
	if err := checkLists("history", len(h.lengths), h.fileOff, h.fileTo, n); err != nil {
		return nil, err
	}
	if len(ct.off) == 0 {
		return nil, errors.New("index has no cited-commit offsets")
	}
	if err := checkLists("cited commits", len(ct.off)-1, ct.off, ct.to, n); err != nil {
		return nil, err
	}
	if strings.Count(ct.subjects, "\n") != len(ct.off)-1 {
		return nil, errors.New("index cited commits and their subjects disagree")
	}
	return ix, nil
}

// readFiles reads the file table and the averages of the field lengths,
// each column into the file entries as it is read: no section is held
// as an array of its own beside the entries (at 100,000 files the paths
// twice and five columns of 400 KB, read then copied, were 5.5 MB of a
// query's heap while the index loaded).
func (ix *Index) readFiles(c *cursor) error {
	paths := c.str()
	offAt, offs := c.skip(4)
	if c.err != nil {
		return c.err
	}
	if offs == 0 {
		return errFilesDisagree
	}
	n := offs - 1
	files := make([]fileEntry, n)
	prev := uint32(0)
	pathsOK := c.f.eachU32(offAt, offs, func(i int, end uint32) bool {
		if int(end) > len(paths) || (i > 0 && end < prev) || (i == n && int(end) != len(paths)) {
			return false
		}
		if i > 0 {
			files[i-1].path = paths[prev:end]
		}
		prev = end
		return true
	})
	if err := c.f.readErr(); err != nil {
		return err
	}
	if !pathsOK {
		return errors.New("index path offsets decrease or pass the paths")
	}
	c.column(n, func(i int, v uint32) bool { files[i].length = v; return true })
	c.column(n, func(i int, v uint32) bool { files[i].pathLen = v; return true })
	c.column(n, func(i int, v uint32) bool { files[i].symLen = v; return true })
	flags := c.bytes()
	if c.err == nil && len(flags) != n {
		return errFilesDisagree
	}
	for i, fl := range flags {
		files[i].flags = fl
	}
	prior := make([]float32, n)
	c.column(n, func(i int, v uint32) bool { prior[i] = math.Float32frombits(v); return true })
	var avgs [3]float64
	for i := range avgs {
		avgs[i] = float64(math.Float32frombits(c.u32()))
	}
	if c.err != nil {
		return c.err
	}
	ix.files, ix.prior = files, prior
	ix.avgContent, ix.avgPath, ix.avgSym = avgs[0], avgs[1], avgs[2]
	return nil
}

// checkLists checks stored lists, row r's entries being
// to[off[r]:off[r+1]] (a file's imports, a commit's files): one offset more
// than rows, offsets that never decrease and stay inside to, and entries
// below n.
func checkLists(what string, rows int, off, to []uint32, n int) error {
	if len(off) != rows+1 {
		return fmt.Errorf("index %s: %d offsets for %d rows", what, len(off), rows)
	}
	for i := 0; i < rows; i++ {
		if off[i] > off[i+1] || int(off[i+1]) > len(to) {
			return fmt.Errorf("index %s is inconsistent at row %d", what, i)
		}
	}
	for _, j := range to {
		if int(j) >= n {
			return fmt.Errorf("index %s names a file out of range", what)
		}
	}
	return nil
}

// loadIndex opens the index file at p; the index reads from it until
// Close (see readIndex).
func loadIndex(p string) (*Index, error) {
	fh, err := safefile.OpenNoFollow(p) // a link in its place leads to no index of someone else's
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("reading index %s: %w", p, err)
	}
	ix, err := readIndex(&indexFile{r: fh, size: st.Size(), closer: fh})
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("reading index %s: %w", p, err)
	}
	return ix, nil
}

// saveIndex writes the index atomically (a reader sees the old file or
// the whole new one) and prunes old indexes.
func saveIndex(dir, p string, ix *Index) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating cache dir: %w", err)
	}
	if err := safefile.Write(p, ix.encode(), 0o644); err != nil {
		return fmt.Errorf("saving index: %w", err)
	}
	repomap.PruneCache(dir, "locate-", ".idx", keepIndexes)
	return nil
}
