// Package repomap builds a map of a repository without any model: which
// files matter (ignoring vendored, generated, binary and oversized ones),
// their languages, symbols and imports, and the project's manifests, CI,
// entry points, test layout and build/lint/test commands. Maps are cached
// per tree state so that repeated queries on the same checkout are cheap.
package repomap

import (
	"context"
	bin "encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/planexhq/planex/internal/plural"
)

// DefaultMaxFileBytes is the size above which files are left out of the map.
const DefaultMaxFileBytes = 512 << 10

// Options tune Build. The zero value is ready to use.
type Options struct {
	// MaxFileBytes skips larger files; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// NoGit walks the directory (applying .gitignore files itself) even
	// when root is inside a git work tree.
	NoGit bool
	// NoCache neither reads nor writes the on-disk cache.
	NoCache bool
	// CacheDir overrides where cached maps are stored.
	CacheDir string
	// Workers bounds parallel file reads; 0 means GOMAXPROCS.
	Workers int
	// Logger receives progress and skip notes; nil means slog.Default().
	Logger *slog.Logger
	// Key, when set, is the tree-state key StateKey just returned for
	// this root, so Build does not compute it again.
	Key string
	// NoCacheWrite reads a cached map but does not save a new one, for
	// callers that cache what they derive from the map instead.
	NoCacheWrite bool
	// TrackedOnly maps only the files git tracks, for the Action: its
	// checkout is fresh, so an untracked file there came from the
	// workflow's earlier steps (a cloud login's credentials file) and
	// its name is not the model's business. Without git it has no effect.
	TrackedOnly bool
	// ChunkFiles is how many files Stream reads before it hands them to
	// its sink; 0 means DefaultChunkFiles.
	ChunkFiles int
}

// Map is the model-free picture of a repository.
type Map struct {
	// Root is the absolute directory the map describes.
	Root string
	// Key identifies the tree state the map was built from.
	Key string
	// Git is true when the file list came from git.
	Git bool
	// Entries are the files kept, sorted by path.
	Entries []File
	// imports is the lookup import resolution builds, kept for the name
	// imports locate asks for later (not encoded: a cached map rebuilds it).
	imports *importIndex
	// modules are the Python modules (PythonModules), built with the
	// import lookup and kept when DropImports drops it.
	modules []ModuleClaim
	// lazy guards imports and modules, which are built on first use and
	// asked for by locate's index build from several goroutines.
	lazy sync.Mutex
	// light are a streamed map's files, packed, where a built map has
	// Entries (Stream); deps its import graph (DepGraph).
	light *lightFiles
	deps  *depGraph
	// Languages counts kept files per language.
	Languages map[string]int
	// Manifests are package/build manifests (go.mod, package.json, ...).
	Manifests []string
	// CIFiles are continuous-integration configurations.
	CIFiles []string
	// EntryPoints are programs' starting files or directories.
	EntryPoints []string
	// TestLayout describes where tests live, one line per pattern.
	TestLayout []string
	// Commands are detected build, lint and test commands, best first per kind.
	Commands []Command
	// Conventions are style and tooling configurations found (formatters,
	// linters, editor settings), as human-readable notes.
	Conventions []string
	// Skipped counts files left out, by reason.
	Skipped map[string]int
	// Listed is how many files the listing produced before filtering.
	Listed int
	// GoModule is the module path in the root go.mod, if any.
	GoModule string
	// Vocab maps term ids (File.Terms) to terms.
	Vocab []string
	// FromCache is set when the map was loaded from the cache.
	FromCache bool `json:"-"`
}

// File is one kept file.
type File struct {
	Path string
	Lang string
	Size int64
	// Test is true for test files and files under test directories.
	Test bool
	// Main is true for program entry files (Go package main, Python
	// __main__ guard, Java main method, Rust fn main).
	Main    bool
	Symbols []Symbol
	// Imports are the import specifiers as written.
	Imports []string
	// Deps are the repository files this file imports, when resolvable,
	// as indexes into Map.Entries in ascending (path) order: 4 bytes each
	// where a path took a 16-byte string header. Map.DepPath names one.
	Deps []int32
	// Terms are the file's term counts (Content, PathTerms and
	// SymbolTerms read them), behind a pointer so a file without them
	// (Stream's light map keeps none) costs 8 bytes for them, not 72.
	Terms *FileTerms
	// Length is the number of term occurrences in the contents.
	Length int
}

// FileTerms are the terms of a file's contents, of its path without the
// extension, and of its symbols' names: what a lexical ranker indexes.
type FileTerms struct {
	Content, PathTerms, SymbolTerms TermCounts
}

// Content are the terms of f's contents (none if f has no term counts).
func (f *File) Content() TermCounts {
	if f.Terms == nil {
		return TermCounts{}
	}
	return f.Terms.Content
}

// PathTerms are the terms of f's path without its extension.
func (f *File) PathTerms() TermCounts {
	if f.Terms == nil {
		return TermCounts{}
	}
	return f.Terms.PathTerms
}

// SymbolTerms are the terms of f's symbols' names.
func (f *File) SymbolTerms() TermCounts {
	if f.Terms == nil {
		return TermCounts{}
	}
	return f.Terms.SymbolTerms
}

// TermCounts are one text's distinct terms, as ids into Map.Vocab in no
// particular order, and how often each occurs: packed as a uvarint id
// then a uvarint count per term, about 4 bytes a term where two uint32s
// took 8 (term counts are the largest part of a large map).
type TermCounts struct {
	Packed []byte
}

// Each calls fn with every term's id and count.
func (c TermCounts) Each(fn func(id, count uint32)) {
	for b := c.Packed; len(b) > 0; {
		id, n := bin.Uvarint(b)
		count, m := bin.Uvarint(b[max(n, 1):])
		if n <= 0 || m <= 0 {
			return // not written by appendCount
		}
		b = b[n+m:]
		fn(uint32(id), uint32(count))
	}
}

// Len is the number of term occurrences counted.
func (c TermCounts) Len() int {
	n := 0
	c.Each(func(_, count uint32) { n += int(count) })
	return n
}

// appendCount packs one term's id and count onto b.
func appendCount(b []byte, id, count uint32) []byte {
	return bin.AppendUvarint(bin.AppendUvarint(b, uint64(id)), uint64(count))
}

// countLen is the length appendCount adds for id and count.
func countLen(id, count uint32) int { return uvarintLen(id) + uvarintLen(count) }

func uvarintLen(x uint32) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// Command is a detected way to build, lint or test the project.
type Command struct {
	// Kind is build, lint or test.
	Kind    string
	Command string
	// Source is the file the command was derived from.
	Source string
}

// ErrNoSourceFiles is returned when a repository has no readable text files.
var ErrNoSourceFiles = errors.New("no source files found")

// Files returns the kept files, sorted by path.
func (m *Map) Files() []File { return m.Entries }

// File returns the entry for a repository-relative path.
func (m *Map) File(p string) (File, bool) {
	if i, ok := m.entry(p); ok {
		return m.Entries[i], true
	}
	return File{}, false
}

// entry is the index in Entries of the file at path p.
func (m *Map) entry(p string) (int, bool) { return m.files().find(p) }

// Len is how many files the map keeps: len(Entries), or for a map
// Stream returned, which has no Entries, its packed records'.
func (m *Map) Len() int { return m.files().len() }

// Build maps the repository at root. The result is cached under the git
// common dir (or the user cache dir outside git) keyed by the tree state.
func Build(ctx context.Context, root string, opts Options) (*Map, error) {
	start := time.Now()
	b, err := setUp(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	opts, log, abs, git, files, key := b.opts, b.log, b.abs, b.git, b.files, b.key
	var cache string
	if !opts.NoCache && key != "" {
		var err error
		if cache, err = cacheDir(git, opts); err != nil {
			log.Warn("repomap: not using a cache", "err", err)
		} else if m, err := loadCache(cache, key); err == nil {
			m.Root = abs
			m.FromCache = true
			log.Debug("repomap: cache hit", "key", key[:12], "files", len(m.Entries), "took", time.Since(start))
			return checkEmpty(root, m)
		} else if !errors.Is(err, os.ErrNotExist) {
			log.Debug("repomap: cache unusable, rebuilding", "err", err)
		}
	}
	if git != nil {
		if files, err = gitFiles(ctx, abs, git, key, opts); err != nil {
			return nil, err
		}
	}

	m, err := build(ctx, abs, files, opts, log)
	if err != nil {
		return nil, err
	}
	m.Git = git != nil
	m.Key = key
	if cache != "" && !opts.NoCacheWrite {
		if err := saveCache(cache, key, m); err != nil {
			log.Warn("repomap: could not write cache", "dir", cache, "err", err)
		}
	}
	log.Debug("repomap: built", "files", len(m.Entries), "listed", m.Listed, "took", time.Since(start))
	return checkEmpty(root, m)
}

// gitFiles lists the files a map of the work tree at abs is built from:
// the state key's saved listing when it holds (it names the tree the key
// names), git's otherwise, and git's tracked files alone for TrackedOnly
// (the saved listing holds untracked files too).
func gitFiles(ctx context.Context, abs string, git *gitInfo, key string, opts Options) ([]string, error) {
	if !opts.TrackedOnly {
		if dir, err := cacheDir(git, opts); err == nil {
			k := &stateKeyer{root: abs, git: git, cache: dir, opts: opts}
			if files, ok := k.listing(key); ok {
				return files, nil
			}
		}
	}
	return listGit(ctx, abs, opts.TrackedOnly)
}

// setup is what Build and Stream both start from: the options with their
// defaults, the logger, the repository's absolute path, its git (nil
// outside git or with NoGit), the files a walk listed (outside git) and
// the state key ("" without a cache).
type setup struct {
	opts  Options
	log   *slog.Logger
	abs   string
	git   *gitInfo
	files []string
	key   string
}

// setUp fills in opts' defaults, checks root is a directory, finds its
// git and computes the state key, as Build and Stream both begin.
func setUp(ctx context.Context, root string, opts Options) (setup, error) {
	opts, log := buildDefaults(opts)
	abs, err := repoDir(root)
	if err != nil {
		return setup{}, err
	}
	var git *gitInfo
	if !opts.NoGit {
		git = findGit(ctx, abs)
	}
	files, key, err := buildKey(ctx, abs, git, opts, log)
	if err != nil {
		return setup{}, err
	}
	return setup{opts: opts, log: log, abs: abs, git: git, files: files, key: key}, nil
}

// buildDefaults fills in Build's unset options and its logger.
func buildDefaults(opts Options) (Options, *slog.Logger) {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return opts, log
}

// repoDir returns root's absolute path, checking it is a directory.
func repoDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", root, err)
	}
	if st, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("opening repository %s: %w", root, err)
	} else if !st.IsDir() {
		return "", fmt.Errorf("opening repository %s: not a directory", root)
	}
	return abs, nil
}

// buildKey returns the cache key for the tree at abs ("" when there is
// none) and, outside git, the walked file list the key was computed from.
func buildKey(ctx context.Context, abs string, git *gitInfo, opts Options, log *slog.Logger) (files []string, key string, err error) {
	switch {
	case git != nil && !opts.NoCache && opts.Key != "":
		key = opts.Key
	case git != nil && !opts.NoCache:
		key, err = gitStateKey(ctx, abs, git, opts)
		if err != nil {
			log.Debug("repomap: no cache key", "err", err)
		}
	case git == nil:
		if files, err = listWalk(ctx, abs); err != nil {
			return nil, "", err
		}
		if !opts.NoCache {
			key = statKey(abs, files, opts)
		}
	}
	return files, key, nil
}

// StateKey returns the key identifying root's current tree state (what
// Build caches its map under) and the cache directory Build would use, so
// that data derived from a map can be cached beside it. The key is "" when
// opts.NoCache is set.
func StateKey(ctx context.Context, root string, opts Options) (key, dir string, err error) {
	c, err := StartStateKey(ctx, root, opts)
	if err != nil {
		return "", "", err
	}
	if key, err = c.Wait(); err != nil {
		return "", "", err
	}
	return key, c.Dir, nil
}

// KeyCheck is a state key being computed in the background (most of it is
// a stat of every file), so that a caller can use what the previous key
// named meanwhile. Dir, the cache directory, is known at once.
type KeyCheck struct {
	Dir  string
	done chan struct{}
	key  string
	err  error
}

// Wait returns the key once it is computed.
func (c *KeyCheck) Wait() (string, error) {
	<-c.done
	return c.key, c.err
}

// StartStateKey starts computing StateKey's key in the background and
// returns at once with the cache directory. The key is "" when
// opts.NoCache is set.
func StartStateKey(ctx context.Context, root string, opts Options) (*KeyCheck, error) {
	c := &KeyCheck{done: make(chan struct{})}
	if opts.NoCache {
		close(c.done)
		return c, nil
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", root, err)
	}
	var git *gitInfo
	if !opts.NoGit {
		git = findGit(ctx, abs)
	}
	if c.Dir, err = cacheDir(git, opts); err != nil {
		return nil, err
	}
	go func() {
		defer close(c.done)
		if git != nil {
			c.key, c.err = gitStateKey(ctx, abs, git, opts)
			return
		}
		files, err := listWalk(ctx, abs)
		if err != nil {
			c.err = err
			return
		}
		c.key = statKey(abs, files, opts)
	}()
	return c, nil
}

func checkEmpty(root string, m *Map) (*Map, error) {
	if m.Len() == 0 {
		return nil, fmt.Errorf("mapping %s (%s listed, %s): %w", root, plural.Count(m.Listed, "file", "files"), skippedSummary(m.Skipped), ErrNoSourceFiles)
	}
	return m, nil
}

func skippedSummary(s map[string]int) string {
	if len(s) == 0 {
		return "none skipped"
	}
	var parts []string
	for k, v := range s {
		parts = append(parts, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(parts)
	return "skipped: " + strings.Join(parts, ", ")
}

// termCounter is one worker's vocabulary and the bags of the file it is
// reading: interning terms per worker rather than per file allocates each
// distinct term once and leaves build one lookup per term and worker.
// Symbol names and path words mostly occur in the contents too, so their
// terms are usually known by the time they are counted.
type termCounter struct {
	// buf holds the file being read; nothing kept from a file refers to it.
	buf                  []byte
	vocab                *vocabulary
	content, path, names termBag
	scratch              []byte
	parser               fileParser
}

func newTermCounter() *termCounter { return &termCounter{vocab: newVocabulary()} }

// count sets f's term counts from its contents (data), path and symbols.
func (tc *termCounter) count(f *File, data []byte) {
	v := tc.vocab
	v.Add(&tc.content, data)
	tc.scratch = append(tc.scratch[:0], f.Path[:len(f.Path)-len(path.Ext(f.Path))]...)
	v.Add(&tc.path, tc.scratch)
	for _, s := range f.Symbols {
		tc.scratch = append(tc.scratch[:0], s.Name...)
		v.Add(&tc.names, tc.scratch)
	}
	f.Length = tc.content.Len
	// One allocation holds the three fields.
	buf := make([]byte, 0, tc.content.packedLen()+tc.path.packedLen()+tc.names.packedLen())
	t := &FileTerms{}
	t.Content, buf = drainCounts(&tc.content, buf)
	t.PathTerms, buf = drainCounts(&tc.path, buf)
	t.SymbolTerms, _ = drainCounts(&tc.names, buf)
	f.Terms = t
}

// drainCounts empties b into the free capacity of buf and returns the
// counts and buf with them appended.
func drainCounts(b *termBag, buf []byte) (TermCounts, []byte) {
	start := len(buf)
	b.Drain(func(id, c uint32) { buf = appendCount(buf, id, c) })
	return TermCounts{Packed: buf[start:len(buf):len(buf)]}, buf
}

// newBuildMap starts the map of the listed files under root and returns
// the files to read, sorted: path-only filters first, since they are free
// and spare the disk.
//
// The paths are filtered in place, into listed's own array: take
// listingFacts (factsOf) before, and read listed no more after.
func newBuildMap(root string, listed []string) (*Map, []string) {
	m := &Map{Root: root, Languages: map[string]int{}, Skipped: map[string]int{}, Listed: len(listed)}
	todo := listed[:0]
	for _, p := range listed {
		switch {
		case isVendored(p):
			m.Skipped["vendored"]++
		case generatedName(p):
			m.Skipped["generated"]++
		case binaryExt[strings.ToLower(path.Ext(p))]:
			m.Skipped["binary"]++
		default:
			todo = append(todo, p)
		}
	}
	sort.Strings(todo)
	return m, todo
}

// keepMapped counts mapped's skipped files into m and moves the kept
// files (and their owners) down in place: no second array of files.
func keepMapped(m *Map, mapped mapped) (files []File, owners []int32) {
	files, owners, kept := mapped.files, mapped.owners, 0
	for i := range files {
		if skip := mapped.skips[i]; skip != "" {
			m.Skipped[skip]++
			continue
		}
		m.Languages[files[i].Lang]++
		files[kept], owners[kept] = files[i], owners[i]
		kept++
	}
	clear(files[kept:])
	return files[:kept], owners[:kept]
}

func build(ctx context.Context, root string, listed []string, opts Options, log *slog.Logger) (*Map, error) {
	facts := factsOf(listed)
	m, todo := newBuildMap(root, listed)
	mapped, err := mapFiles(ctx, root, todo, opts, log)
	if err != nil {
		return nil, err
	}
	var owners []int32
	m.Entries, owners = keepMapped(m, mapped)
	counters := mapped.counters
	delete(m.Languages, "")
	// Term ids are renumbered beside import resolution: neither reads
	// what the other writes.
	renumbered := make(chan struct{})
	go func() {
		defer close(renumbered)
		m.Vocab = mergeVocabularies(m.Entries, owners, counters)
	}()
	detect(m, facts) // sets GoModule, which import resolution needs
	resolveImports(m)
	<-renumbered
	return m, nil
}

// mapped is what mapFiles gives back, one slot per file it was given:
// the file, why it was skipped ("" if kept) and which worker counted its
// terms (the ids are in counters[owner]'s vocabulary).
type mapped struct {
	files    []File
	skips    []string
	owners   []int32
	counters []*termCounter
}

// mapFiles reads and parses todo's files on opts.Workers goroutines,
// each writing its files straight into their slots.
func mapFiles(ctx context.Context, root string, todo []string, opts Options, log *slog.Logger) (mapped, error) {
	out := mapped{files: make([]File, len(todo)), skips: make([]string, len(todo)), owners: make([]int32, len(todo)),
		counters: make([]*termCounter, opts.Workers)}
	var wg sync.WaitGroup
	// Workers take the next file from a shared counter: files come in
	// path order to each worker without a channel hand-off per file.
	var next atomic.Int64
	done := ctx.Done()
	for w := range out.counters {
		out.counters[w] = newTermCounter()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := newDirReader(root)
			defer rd.close()
			for i := int(next.Add(1) - 1); i < len(todo); i = int(next.Add(1) - 1) {
				select {
				case <-done:
					return
				default:
				}
				out.skips[i] = processFile(&out.files[i], rd, todo[i], opts.MaxFileBytes, log, out.counters[w])
				out.owners[i] = int32(w)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return mapped{}, fmt.Errorf("mapping %s: %w", root, err)
	}
	return out, nil
}

// mergeVocabularies renumbers the term ids of entries (entries[i] was
// counted by counters[owners[i]]) into one vocabulary, the first
// worker's, and returns its terms.
func mergeVocabularies(entries []File, owners []int32, counters []*termCounter) []string {
	vocab := counters[0].vocab
	remap := make([][]uint32, len(counters))
	for _, tc := range counters {
		tc.vocab.forgetWords()
		tc.buf, tc.parser = nil, fileParser{} // the token buffer refers to buf
	}
	for w, tc := range counters[1:] {
		remap[w+1] = vocab.Merge(tc.vocab)
	}
	for i := range entries {
		ids := remap[owners[i]]
		t := entries[i].Terms
		if ids == nil || t == nil {
			continue
		}
		// Renumbered ids may pack to other lengths: the three fields
		// are packed again into one new allocation.
		fields := []*TermCounts{&t.Content, &t.PathTerms, &t.SymbolTerms}
		size := 0
		for _, c := range fields {
			c.Each(func(id, count uint32) { size += countLen(ids[id], count) })
		}
		buf := make([]byte, 0, size)
		for _, c := range fields {
			start := len(buf)
			c.Each(func(id, count uint32) { buf = appendCount(buf, ids[id], count) })
			c.Packed = buf[start:len(buf):len(buf)]
		}
	}
	return vocab.Terms()
}

// processFile maps the file at rel into f and returns "", or returns why
// it was skipped.
func processFile(f *File, rd *dirReader, rel string, maxBytes int64, log *slog.Logger, tc *termCounter) string {
	data, size, skip, err := rd.read(tc.buf, rel, maxBytes)
	tc.buf = data
	if skip != "" {
		if err != nil {
			log.Debug("repomap: skipping", "path", rel, "err", err)
		}
		return skip
	}
	if binary(data) {
		return "binary"
	}
	if generatedContent(rel, data) {
		return "generated"
	}
	lang := DetectLanguage(rel)
	*f = File{Path: rel, Lang: lang, Size: size, Test: IsTestPath(rel)}
	p := tc.parser.parse(lang, rel, data)
	f.Symbols = p.symbols
	for _, imp := range p.imports {
		f.Imports = append(f.Imports, validUTF8(imp))
	}
	f.Main = p.isMain
	tc.count(f, data)
	return ""
}
