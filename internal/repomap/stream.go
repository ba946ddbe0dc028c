package repomap

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// DefaultChunkFiles is how many files Stream reads before it hands them
// to its sink: large enough that a chunk's term tables share most of their
// terms' work, small enough that a chunk's full files are a few
// megabytes whatever the repository's size.
const DefaultChunkFiles = 4096

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
	opts, log := buildDefaults(opts)
	abs, err := repoDir(root)
	if err != nil {
		return nil, err
	}
	var git *gitInfo
	if !opts.NoGit {
		git = findGit(ctx, abs)
	}
	opts.NoCache = opts.NoCache || opts.Key == ""
	files, key, err := buildKey(ctx, abs, git, opts, log)
	if err != nil {
		return nil, err
	}
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
		for i := range files {
			m.Entries = append(m.Entries, lightFile(&files[i]))
		}
	}
	delete(m.Languages, "")
	detect(m, listed)
	resolveImports(m)
	return m, nil
}

// lightFile is what Stream keeps of f.
func lightFile(f *File) File {
	l := File{Path: f.Path, Lang: f.Lang, Size: f.Size, Test: f.Test, Main: f.Main, Imports: f.Imports, Length: f.Length}
	if f.Lang != LangPython {
		return l
	}
	n := 0
	for _, s := range f.Symbols {
		if moduleLevel(s) {
			n++
		}
	}
	if n > 0 {
		l.Symbols = make([]Symbol, 0, n)
		for _, s := range f.Symbols {
			if moduleLevel(s) {
				l.Symbols = append(l.Symbols, Symbol{Name: s.Name, Kind: s.Kind})
			}
		}
	}
	return l
}

// moduleLevel says whether s is defined at a file's module level, what
// PythonNameImports looks names up among.
func moduleLevel(s Symbol) bool { return s.Parent == "" && s.Kind != KindMethod }
