package repomap_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// termMultiset spells out c's terms through vocab, with their counts.
func termMultiset(c repomap.TermCounts, vocab []string) map[string]uint32 {
	out := map[string]uint32{}
	c.Each(func(id, count uint32) { out[vocab[id]] += count })
	return out
}

// TestStreamHandsEveryFileOnce checks that Stream hands each file Build
// maps to its sink exactly once, in path order and in full (symbols,
// imports, term counts through the chunk's own vocabulary), and that the
// light map it returns resolves imports and Python name imports as the
// full map does.
func TestStreamHandsEveryFileOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 300)
	// Files skipped for their contents, amid the chunks' kept files:
	// the light map must still give each kept file its own path.
	for _, p := range []string{"pkg/a_blob.go", "py/m_blob.py", "py/z_blob.py"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x = 1\x00\x01\x02\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A name one package re-exports, imported from it by two files: the
	// light map's names and imports must find its home as the full map's.
	for p, src := range map[string]string{
		"reexp/__init__.py": "from .core import where\n",
		"reexp/core.py":     "def where():\n    return 1\n",
		"use_a.py":          "from reexp import where\n",
		"use_b.py":          "from reexp import where\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	full, err := repomap.Build(ctx, dir, repomap.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	chunks, next := 0, 0
	light, err := repomap.Stream(ctx, dir, repomap.Options{ChunkFiles: 37}, func(c repomap.Chunk) error {
		chunks++
		if c.First != next {
			t.Fatalf("chunk %d starts at file %d, want %d", chunks, c.First, next)
		}
		checkChunk(t, c, full)
		next += len(c.Files)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (len(full.Entries) + 36) / 37; chunks < want || next != len(full.Entries) {
		t.Fatalf("%d chunks handed %d files, want %d chunks and %d files", chunks, next, want, len(full.Entries))
	}
	if light.Len() != len(full.Entries) || light.Entries != nil || len(light.Vocab) != 0 {
		t.Fatalf("light map has %d files, %d Entries and %d terms, want %d files, no Entries and no terms",
			light.Len(), len(light.Entries), len(light.Vocab), len(full.Entries))
	}
	checkLightMap(t, light, full)
	if light.Skipped["binary"] < 3 {
		t.Errorf("the light map skipped %v, want the 3 binary files among them", light.Skipped)
	}
}

// checkChunk checks that each file of a streamed chunk is the built map's
// file at the same place, in full: symbols, imports, length and term
// counts (read through each map's own vocabulary).
func checkChunk(t *testing.T, c repomap.Chunk, full *repomap.Map) {
	t.Helper()
	for i := range c.Files {
		got, want := &c.Files[i], &full.Entries[c.First+i]
		if got.Path != want.Path || !reflect.DeepEqual(got.Symbols, want.Symbols) || !reflect.DeepEqual(got.Imports, want.Imports) || got.Length != want.Length {
			t.Fatalf("file %d: streamed %+v, built %+v", c.First+i, got, want)
		}
		for _, f := range []struct{ got, want repomap.TermCounts }{
			{got.Content(), want.Content()}, {got.PathTerms(), want.PathTerms()}, {got.SymbolTerms(), want.SymbolTerms()},
		} {
			if g, w := termMultiset(f.got, c.Vocab), termMultiset(f.want, full.Vocab); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: streamed terms %v, built %v", got.Path, g, w)
			}
		}
	}
}

// checkLightMap checks that the light map Stream returns resolves what
// the full map does (Deps, the import graph, Python modules and name
// imports, counts) and keeps of the symbols only a Python file's
// module-level names.
func checkLightMap(t *testing.T, light, full *repomap.Map) {
	t.Helper()
	deps := 0
	entries := repomap.LightEntries(light)
	for i := range entries {
		l, f := &entries[i], &full.Entries[i]
		if l.Path != f.Path || l.Lang != f.Lang || l.Test != f.Test || l.Main != f.Main ||
			!slices.Equal(l.Imports, f.Imports) || !slices.Equal(l.Deps, f.Deps) {
			t.Fatalf("light %+v, full %+v", l, f)
		}
		if p := light.DepPath(int32(i)); p != f.Path {
			t.Fatalf("light DepPath(%d) = %s, want %s", i, p, f.Path)
		}
		if got, want := l.Symbols, moduleNames(f); !slices.Equal(got, want) {
			t.Fatalf("light map of %s keeps symbols %+v, want the module-level Python names %+v", l.Path, got, want)
		}
		deps += len(l.Deps)
	}
	if deps == 0 {
		t.Fatal("the generated tree resolved no imports: the comparison shows nothing")
	}
	lo, lt := light.DepGraph()
	fo, ft := full.DepGraph()
	if !slices.Equal(lo, fo) || !slices.Equal(lt, ft) {
		t.Errorf("import graph of the light map %v %v, of the full map %v %v", lo, lt, fo, ft)
	}
	if got, want := light.PythonModules(), full.PythonModules(); !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("Python modules of the light map %v, of the full map %v", got, want)
	}
	if got, want := repomap.PythonNameImports(light), repomap.PythonNameImports(full); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("name imports of the light map %v, of the full map %v", got, want)
	}
	if !reflect.DeepEqual(light.EntryPoints, full.EntryPoints) || !reflect.DeepEqual(light.TestLayout, full.TestLayout) ||
		!reflect.DeepEqual(light.Commands, full.Commands) || len(light.Commands) == 0 {
		t.Errorf("light map detected %v %v %v, full %v %v %v", light.EntryPoints, light.TestLayout, light.Commands,
			full.EntryPoints, full.TestLayout, full.Commands)
	}
	if !reflect.DeepEqual(light.Languages, full.Languages) || !reflect.DeepEqual(light.Skipped, full.Skipped) || light.GoModule != full.GoModule {
		t.Errorf("light map counts %v %v %q, full %v %v %q", light.Languages, light.Skipped, light.GoModule, full.Languages, full.Skipped, full.GoModule)
	}
}

// moduleNames are what a light map keeps of f's symbols: a Python file's
// module-level names, by name and kind alone.
func moduleNames(f *repomap.File) []repomap.Symbol {
	var out []repomap.Symbol
	for _, s := range f.Symbols {
		if f.Lang == repomap.LangPython && s.Parent == "" && s.Kind != repomap.KindMethod {
			out = append(out, repomap.Symbol{Name: s.Name, Kind: s.Kind})
		}
	}
	return out
}

// TestStreamStopsOnSinkError checks that a sink's error ends Stream at
// once and comes back wrapped.
func TestStreamStopsOnSinkError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 100)
	stop := errors.New("disk full")
	calls := 0
	_, err := repomap.Stream(context.Background(), dir, repomap.Options{ChunkFiles: 10}, func(repomap.Chunk) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Stream returned %v after %d calls, want the sink's error after one", err, calls)
	}
}

// TestStreamKeepsNoChunk checks that once a chunk's sink returns, Stream
// keeps nothing of it alive: not its files, their symbols and term
// counts, nor its vocabulary. Only the light record per file stays (its
// own allocations), so what a cold map holds does not grow with what the
// files hold.
func TestStreamKeepsNoChunk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 200)
	var files []weak.Pointer[repomap.File]
	var syms []weak.Pointer[repomap.Symbol]
	var counts []weak.Pointer[byte]
	var vocabs []weak.Pointer[string]
	m, err := repomap.Stream(context.Background(), dir, repomap.Options{ChunkFiles: 25}, func(c repomap.Chunk) error {
		files = append(files, weak.Make(&c.Files[0]))
		vocabs = append(vocabs, weak.Make(&c.Vocab[0]))
		for i := range c.Files {
			if f := &c.Files[i]; len(f.Symbols) > 0 && len(f.Content().Packed) > 0 {
				syms = append(syms, weak.Make(&f.Symbols[0]))
				counts = append(counts, weak.Make(&f.Terms.Content.Packed[0]))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 || len(syms) == 0 {
		t.Fatalf("%d chunks, %d files with symbols: too few to show anything", len(files), len(syms))
	}
	runtime.GC()
	runtime.GC()
	live := 0
	for _, p := range files {
		if p.Value() != nil {
			live++
		}
	}
	for _, p := range vocabs {
		if p.Value() != nil {
			live++
		}
	}
	for i := range syms {
		if syms[i].Value() != nil || counts[i].Value() != nil {
			live++
		}
	}
	if live != 0 {
		t.Errorf("%d of the chunks' files, vocabularies, symbols or term counts are still reachable after Stream", live)
	}
	runtime.KeepAlive(m)
}

// TestDropImportsKeepsDeps checks that DropImports, which a cold query
// calls once its export table is built, forgets every file's imports and
// names and the import lookup, while the import graph (Deps) and the
// files stay as they were.
func TestDropImportsKeepsDeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 120)
	m, err := repomap.Stream(context.Background(), dir, repomap.Options{NoCache: true}, func(repomap.Chunk) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	before := repomap.LightEntries(m)
	imports, names := 0, 0
	for i := range before {
		imports += len(before[i].Imports)
		names += len(before[i].Symbols)
	}
	if imports == 0 || names == 0 {
		t.Fatalf("the light map holds %d imports and %d Python names, nothing to drop", imports, names)
	}
	deps := 0
	m.DropImports()
	after := repomap.LightEntries(m)
	for i := range after {
		f, was := &after[i], &before[i]
		if f.Imports != nil || f.Symbols != nil {
			t.Fatalf("%s kept %d imports and %d names", f.Path, len(f.Imports), len(f.Symbols))
		}
		if f.Path != was.Path || f.Lang != was.Lang || !slices.Equal(f.Deps, was.Deps) {
			t.Fatalf("dropping imports changed %+v into %+v", was, f)
		}
		deps += len(f.Deps)
	}
	if deps == 0 {
		t.Fatal("no file of the generated tree has Deps")
	}
	if got := repomap.PythonNameImports(m); len(got) != 0 {
		t.Fatalf("name imports after DropImports: %d names", len(got))
	}
}

// TestDepsSharedBlockIsolated checks that a built map's Deps, cut from
// resolveImports' shared block, behave as a slice of their own each:
// sorted, without repeats or the file itself, and capacity capped so
// that appending to one file's Deps leaves every other file's as they
// were.
func TestDepsSharedBlockIsolated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 200)
	m, err := repomap.Build(context.Background(), dir, repomap.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	was := make([][]int32, len(m.Entries))
	with := 0
	for i := range m.Entries {
		d := m.Entries[i].Deps
		was[i] = slices.Clone(d)
		if len(d) == 0 {
			continue
		}
		with++
		if cap(d) != len(d) {
			t.Fatalf("%s: Deps of length %d have capacity %d", m.Entries[i].Path, len(d), cap(d))
		}
		for k, j := range d {
			if int(j) == i || (k > 0 && d[k-1] >= j) {
				t.Fatalf("%s: Deps %v not sorted, distinct and without the file", m.Entries[i].Path, d)
			}
		}
	}
	if with < 2 {
		t.Fatalf("%d files with Deps: nothing shares a block", with)
	}
	for i := range m.Entries {
		if len(m.Entries[i].Deps) > 0 {
			m.Entries[i].Deps = append(m.Entries[i].Deps, -1, -1, -1)
		}
	}
	for i := range m.Entries {
		if d := m.Entries[i].Deps; len(d) > 0 && !slices.Equal(d[:len(d)-3], was[i]) {
			t.Fatalf("%s: Deps %v after the others were appended to, want %v", m.Entries[i].Path, d, was[i])
		}
	}
}
