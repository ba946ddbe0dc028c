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
	m.Entries = make([]File, 0, len(todo))
	chunk := opts.ChunkFiles
	if chunk <= 0 {
		chunk = DefaultChunkFiles
	}
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
		if err := sink(Chunk{First: len(m.Entries), Files: files, Vocab: vocab}); err != nil {
			return nil, fmt.Errorf("mapping %s: %w", root, err)
		}
		m.Entries = lightFiles(m.Entries, files)
	}
	delete(m.Languages, "")
	// The last chunks' garbage is collected before detection and import
	// resolution allocate the import lookup and Deps (about 27 MB at
	// 100,000 files): otherwise those land on a heap that may already be
	// near the collector's goal, twice what was live with the last chunk
	// in hand, which made the end of the scan a cold query's highest heap.
	runtime.GC()
	detect(m, listed)
	resolveImports(m)
	return m, nil
}

// lightFiles appends what Stream keeps of files to entries. Their
// imports and module-level names are copied into one string, one slice
// of imports and one of symbols for the whole chunk: a few contiguous
// allocations that outlive the chunk instead of small ones scattered
// among its garbage, which would keep most of the heap's spans partly
// used (and resident) after the chunk is freed.
func lightFiles(entries []File, files []File) []File {
	var text, imports, symbols int
	for i := range files {
		f := &files[i]
		imports += len(f.Imports)
		for _, imp := range f.Imports {
			text += len(imp)
		}
		for _, s := range pythonNames(f) {
			if moduleLevel(s) {
				symbols++
				text += len(s.Name)
			}
		}
	}
	var sb strings.Builder
	sb.Grow(text)
	imps := make([]string, 0, imports)
	syms := make([]Symbol, 0, symbols)
	for i := range files {
		f := &files[i]
		l := File{Path: f.Path, Lang: f.Lang, Size: f.Size, Test: f.Test, Main: f.Main, Length: f.Length}
		start := len(imps)
		for _, imp := range f.Imports {
			imps = append(imps, copyInto(&sb, imp))
		}
		if len(imps) > start {
			l.Imports = imps[start:len(imps):len(imps)]
		}
		start = len(syms)
		for _, s := range pythonNames(f) {
			if moduleLevel(s) {
				syms = append(syms, Symbol{Name: copyInto(&sb, s.Name), Kind: s.Kind})
			}
		}
		if len(syms) > start {
			l.Symbols = syms[start:len(syms):len(syms)]
		}
		entries = append(entries, l)
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

// copyInto appends s to sb, whose capacity is reserved, and returns the
// copy: a substring of sb's one buffer.
func copyInto(sb *strings.Builder, s string) string {
	start := sb.Len()
	sb.WriteString(s)
	all := sb.String()
	return all[start:]
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
