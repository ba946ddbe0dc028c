package repomap

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"time"
)

// DefaultChunkFiles is how many files Stream reads before it hands them
// to its sink. A chunk's files and term tables are a few megabytes
// whatever the repository's size; measured on generated trees, chunks of
// 1,024 files gave the same CPU time as 4,096 and a lower peak below
// 20,000 files (at 100,000 files the size made no difference: what stays
// per file sets the peak there).
const DefaultChunkFiles = 1024

// Chunk is a run of consecutive kept files Stream hands to its sink, in
// full: symbols, imports and term counts, the ids being Vocab's (a
// vocabulary of this chunk alone).
type Chunk struct {
	// First is the index Files[0] has in the map Stream returns.
	First int
	Files []File
	Vocab []string
}

// Stream maps the repository at root as Build does, without reading or
// writing the map cache, but hands the files to sink a chunk at a time
// in path order as they are read, and keeps of each in the map it
// returns only what import resolution and detection read: path,
// language, flags and imports, and for a Python file its module-level
// names, packed (lightFiles). So what stays in memory is a small record
// per file and not its symbols or term counts, which sink writes
// elsewhere (locate spills them to a file). The returned map has no
// Entries and no Vocab: Len counts its files, DepGraph gives its import
// graph, PythonModules and PythonNameImports read it as a built map's.
func Stream(ctx context.Context, root string, opts Options, sink func(Chunk) error) (*Map, error) {
	start := time.Now()
	opts.NoCache = opts.NoCache || opts.Key == ""
	b, err := setUp(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	opts, log, abs, git, files, key := b.opts, b.log, b.abs, b.git, b.files, b.key
	if git != nil {
		if files, err = gitFiles(ctx, abs, git, key, opts); err != nil {
			return nil, err
		}
	}
	m, err := buildStream(ctx, abs, files, opts, log, sink)
	if err != nil {
		return nil, err
	}
	m.Git = git != nil
	m.Key = key
	log.Debug("repomap: streamed", "files", m.Len(), "listed", m.Listed, "took", time.Since(start))
	return checkEmpty(root, m)
}

// buildStream is build a chunk of files at a time (see Stream).
func buildStream(ctx context.Context, root string, listed []string, opts Options, log *slog.Logger, sink func(Chunk) error) (*Map, error) {
	facts := factsOf(listed)
	m, todo := newBuildMap(root, listed)
	chunk := opts.ChunkFiles
	if chunk <= 0 {
		chunk = DefaultChunkFiles
	}
	kept := &lightFiles{todo: todo}
	for start := 0; start < len(todo); start += chunk {
		part := todo[start:min(start+chunk, len(todo))]
		// Each chunk has fresh workers' vocabularies, so no table of
		// terms outlives its chunk.
		mapped, err := mapFiles(ctx, root, part, opts, log)
		if err != nil {
			return nil, err
		}
		files, owners := keepMapped(m, mapped)
		vocab := mergeVocabularies(files, owners, mapped.counters)
		if err := sink(Chunk{First: len(kept.recs), Files: files, Vocab: vocab}); err != nil {
			return nil, fmt.Errorf("mapping %s: %w", root, err)
		}
		kept.add(start, files)
	}
	delete(m.Languages, "")
	// The last chunks' garbage is collected before detection and import
	// resolution, so they land on a heap holding what they read and not
	// twice what was live with the last chunk in hand.
	runtime.GC()
	m.light = kept
	detect(m, facts)
	resolveImports(m)
	return m, nil
}

// lightFiles are what Stream keeps of the files it has handed on: a
// 16-byte record a file (lightRecord) and, a chunk at a time, one string
// holding its imports and Python module-level names with their end
// offsets, where a File took 136 bytes, a string header per import and a
// 40-byte Symbol per name. Detection, import resolution and
// PythonNameImports read the records as they are (fileSet): they are
// never spelled out as Files.
type lightFiles struct {
	todo   []string // the paths being mapped, in path order
	langs  []string // the languages seen, numbered by lightRecord.lang
	recs   []lightRecord
	chunks []lightChunk
	// dropped is set by DropImports: the chunks' text is gone.
	dropped bool
}

// lightChunk is one chunk's imports and names: the text they are cut
// from, their ends in it, and the records the chunk holds.
type lightChunk struct {
	// first and end are the chunk's records, recs[first:end].
	first, end int
	text       string
	// The chunk's distinct imports are written once each at the start of
	// text, distinct[k] the end of the k-th; imports numbers each file's
	// imports among them, file after file. Files of one package import the
	// same paths (at 100,000 generated files the distinct ones are about a
	// tenth).
	distinct []uint32
	imports  []uint32
	names    []lightName // each module-level Python name, file after file
	// namesFrom is where the names start in text, after the imports.
	namesFrom uint32
}

// lightRecord is one kept file: its path's place in lightFiles.todo, its
// language's in lightFiles.langs, where its imports and names start in
// its chunk's lists (they run to the next record's in the chunk), and
// its flags. Size and term length stay with the chunk's Files: nothing
// after the scan reads them from the map.
type lightRecord struct {
	path, imports, names uint32
	lang                 uint8
	test, main           bool
}

// lightName is one module-level Python name: its end in the chunk's text
// and its kind.
type lightName struct {
	end  uint32
	kind SymbolKind
}

// add packs what Stream keeps of files, the kept files of the chunk whose
// first path is todo[first], in todo's order.
func (l *lightFiles) add(first int, files []File) {
	if l.recs == nil {
		// At most one record a path: no growth, no garbage.
		l.recs = make([]lightRecord, 0, len(l.todo))
	}
	c := lightChunk{first: len(l.recs), end: len(l.recs) + len(files)}
	var text, imports, names int
	ids := map[string]uint32{} // the chunk's distinct imports, numbered as first met
	var uniq []string
	for i := range files {
		f := &files[i]
		imports += len(f.Imports)
		for _, imp := range f.Imports {
			if _, ok := ids[imp]; !ok {
				ids[imp] = uint32(len(uniq))
				uniq = append(uniq, imp)
				text += len(imp)
			}
		}
		for _, s := range pythonNames(f) {
			if moduleLevel(s) {
				names++
				text += len(s.Name)
			}
		}
	}
	var sb strings.Builder
	sb.Grow(text)
	c.distinct = make([]uint32, len(uniq))
	c.imports = make([]uint32, 0, imports)
	c.names = make([]lightName, 0, names)
	// The text holds the chunk's distinct imports, then every name.
	for k, imp := range uniq {
		sb.WriteString(imp)
		c.distinct[k] = uint32(sb.Len())
	}
	p := first
	for i := range files {
		f := &files[i]
		for l.todo[p] != f.Path {
			p++
		}
		l.recs = append(l.recs, lightRecord{path: uint32(p), lang: l.lang(f.Lang), test: f.Test, main: f.Main,
			imports: uint32(len(c.imports))})
		for _, imp := range f.Imports {
			c.imports = append(c.imports, ids[imp])
		}
	}
	c.namesFrom = uint32(sb.Len())
	for i := range files {
		l.recs[c.first+i].names = uint32(len(c.names))
		for _, s := range pythonNames(&files[i]) {
			if moduleLevel(s) {
				sb.WriteString(s.Name)
				c.names = append(c.names, lightName{end: uint32(sb.Len()), kind: s.Kind})
			}
		}
	}
	c.text = sb.String()
	l.chunks = append(l.chunks, c)
}

// lang numbers a language in l.langs, adding it when new.
func (l *lightFiles) lang(name string) uint8 {
	// The languages are a closed set of a few dozen (lang.go).
	for i, s := range l.langs {
		if s == name {
			return uint8(i)
		}
	}
	l.langs = append(l.langs, name)
	return uint8(len(l.langs) - 1)
}

// chunkOf is the chunk holding record i.
func (l *lightFiles) chunkOf(i int) *lightChunk {
	k := sort.Search(len(l.chunks), func(k int) bool { return l.chunks[k].end > i })
	return &l.chunks[k]
}

// spans are where record i's imports and names start and end in its
// chunk c's lists.
func (l *lightFiles) spans(c *lightChunk, i int) (imp0, imp1, name0, name1 uint32) {
	r := &l.recs[i]
	imp1, name1 = uint32(len(c.imports)), uint32(len(c.names))
	if i+1 < c.end {
		imp1, name1 = l.recs[i+1].imports, l.recs[i+1].names
	}
	return r.imports, imp1, r.names, name1
}

// importsOf is record i's imports.
func (l *lightFiles) importsOf(i int) textList {
	if l.dropped {
		return textList{}
	}
	c := l.chunkOf(i)
	imp0, imp1, _, _ := l.spans(c, i)
	if imp0 == imp1 {
		return textList{}
	}
	return textList{text: c.text, ends: c.distinct, ids: c.imports[imp0:imp1]}
}

// namesOf calls yield with each of record i's module-level names and its
// kind until yield returns false.
func (l *lightFiles) namesOf(i int, yield func(name string, kind SymbolKind) bool) {
	if l.dropped {
		return
	}
	c := l.chunkOf(i)
	_, _, name0, name1 := l.spans(c, i)
	from := c.namesFrom
	if name0 > 0 {
		from = c.names[name0-1].end
	}
	for _, nm := range c.names[name0:name1] {
		if !yield(c.text[from:nm.end], nm.kind) {
			return
		}
		from = nm.end
	}
}

// definesName says whether record i has the module-level name.
func (l *lightFiles) definesName(i int, name string) bool {
	found := false
	l.namesOf(i, func(n string, _ SymbolKind) bool {
		found = n == name
		return !found
	})
	return found
}

// drop forgets the chunks' imports and names; the records stay.
func (l *lightFiles) drop() {
	l.chunks = nil
	l.dropped = true
}

// pythonNames are f's symbols if it is a Python file: the only ones
// Stream keeps (PythonNameImports reads them).
func pythonNames(f *File) []Symbol {
	if f.Lang != LangPython {
		return nil
	}
	return f.Symbols
}

// moduleLevel says whether s is defined at a file's module level, what
// PythonNameImports looks names up among.
func moduleLevel(s Symbol) bool { return s.Parent == "" && s.Kind != KindMethod }

// DropImports forgets m's import specifiers, its files' symbols (a
// streamed map's packed imports and names) and its import lookup: what
// resolving imports and PythonNameImports read. A
// caller streaming a large tree calls it once it has what it needs of
// them (locate, its export table), so the rest of its work does not hold
// them too; Deps stay. A later PythonNameImports would find no imports.
func (m *Map) DropImports() {
	m.lazy.Lock()
	m.imports = nil
	m.lazy.Unlock()
	if m.light != nil {
		m.light.drop()
	}
	for i := range m.Entries {
		m.Entries[i].Imports = nil
		m.Entries[i].Symbols = nil
	}
}
