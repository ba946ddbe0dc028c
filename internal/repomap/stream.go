package repomap

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
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
// language, size, flags, imports, length and Deps, and for a Python file
// its module-level names (Symbols, kind and name alone). So what stays
// in memory is a small record per file and not its symbols or term
// counts, which sink writes elsewhere (locate spills them to a file).
// The returned map's Vocab is empty and its files have no term counts.
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
	log.Debug("repomap: streamed", "files", len(m.Entries), "listed", m.Listed, "took", time.Since(start))
	return checkEmpty(root, m)
}

// buildStream is build a chunk of files at a time (see Stream).
func buildStream(ctx context.Context, root string, listed []string, opts Options, log *slog.Logger, sink func(Chunk) error) (*Map, error) {
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
		if err := sink(Chunk{First: kept.n, Files: files, Vocab: vocab}); err != nil {
			return nil, fmt.Errorf("mapping %s: %w", root, err)
		}
		kept.add(start, files)
	}
	delete(m.Languages, "")
	// The last chunks' garbage is collected before the packed records
	// are spelled out as Files, and those records once they are: so
	// detection and import resolution (about 27 MB at 100,000 files)
	// land on a heap holding what they read and not twice what was live
	// with the last chunk in hand.
	runtime.GC()
	m.Entries = kept.expand()
	runtime.GC()
	detect(m, listed)
	resolveImports(m)
	return m, nil
}

// lightFiles are what Stream keeps of the files it has handed on while
// it reads the rest: a 32-byte record a file (lightRecord) and, a chunk
// at a time, one string holding its imports and Python module-level
// names with their end offsets, where a File took 136 bytes, a string
// header per import and a 40-byte Symbol per name. So what stays per file
// during the scan, which the collector's goal doubles while a chunk is
// in hand, is about a third of what it was; expand spells the records
// out as Files once the scan's garbage is collected.
type lightFiles struct {
	todo   []string // the paths being mapped, in path order
	langs  []string // the languages seen, numbered by lightRecord.lang
	chunks []lightChunk
	n      int // records kept so far
}

// lightChunk is one chunk's kept files and the text their imports and
// names are cut from.
type lightChunk struct {
	files   []lightRecord
	text    string
	imports []uint32    // end in text of each import, file after file
	names   []lightName // each module-level Python name, file after file
}

// lightRecord is one kept file: its path's place in lightFiles.todo, its
// language's in lightFiles.langs, how many imports and names it has in
// its chunk, and its size, flags and term length.
type lightRecord struct {
	path, imports, names uint32
	lang                 uint8
	test, main           bool
	size                 int64
	length               int64
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
	c := lightChunk{files: make([]lightRecord, 0, len(files))}
	var text, imports, names int
	for i := range files {
		f := &files[i]
		imports += len(f.Imports)
		for _, imp := range f.Imports {
			text += len(imp)
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
	c.imports = make([]uint32, 0, imports)
	c.names = make([]lightName, 0, names)
	// The text holds every import of the chunk, then every name.
	p := first
	for i := range files {
		f := &files[i]
		for l.todo[p] != f.Path {
			p++
		}
		c.files = append(c.files, lightRecord{path: uint32(p), lang: l.lang(f.Lang), test: f.Test, main: f.Main,
			size: f.Size, length: int64(f.Length), imports: uint32(len(f.Imports))})
		for _, imp := range f.Imports {
			sb.WriteString(imp)
			c.imports = append(c.imports, uint32(sb.Len()))
		}
	}
	for i := range files {
		for _, s := range pythonNames(&files[i]) {
			if moduleLevel(s) {
				sb.WriteString(s.Name)
				c.names = append(c.names, lightName{end: uint32(sb.Len()), kind: s.Kind})
				c.files[i].names++
			}
		}
	}
	c.text = sb.String()
	l.chunks = append(l.chunks, c)
	l.n += len(files)
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

// expand spells the records out as Files, in order: a chunk's imports
// and names become one slice of strings and one of Symbols for the
// chunk, cut from its text without a copy.
func (l *lightFiles) expand() []File {
	entries := make([]File, 0, l.n)
	for ci := range l.chunks {
		c := &l.chunks[ci]
		imps := make([]string, len(c.imports))
		from := uint32(0)
		for i, end := range c.imports {
			imps[i], from = c.text[from:end], end
		}
		syms := make([]Symbol, len(c.names))
		for i, nm := range c.names {
			syms[i], from = Symbol{Name: c.text[from:nm.end], Kind: nm.kind}, nm.end
		}
		var ni, si uint32
		for _, r := range c.files {
			f := File{Path: l.todo[r.path], Lang: l.langs[r.lang], Size: r.size, Test: r.test, Main: r.main, Length: int(r.length)}
			if r.imports > 0 {
				f.Imports = imps[ni : ni+r.imports : ni+r.imports]
				ni += r.imports
			}
			if r.names > 0 {
				f.Symbols = syms[si : si+r.names : si+r.names]
				si += r.names
			}
			entries = append(entries, f)
		}
	}
	return entries
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

// DropImports forgets m's import specifiers, its files' symbols and its
// import lookup: what resolving imports and PythonNameImports read. A
// caller streaming a large tree calls it once it has what it needs of
// them (locate, its export table), so the rest of its work does not hold
// them too; Deps stay. A later PythonNameImports would find no imports.
func (m *Map) DropImports() {
	m.imports = nil
	for i := range m.Entries {
		m.Entries[i].Imports = nil
		m.Entries[i].Symbols = nil
	}
}
