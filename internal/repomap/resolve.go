package repomap

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// PythonModule returns the dotted module name of a Python file, derived from
// the chain of packages (directories with __init__.py) it sits in:
// src/pkg/sub/mod.py -> pkg.sub.mod when src has no __init__.py.
func PythonModule(p string, exists func(string) bool) string {
	return pythonModule(p, func(dir, name string) bool { return exists(dir + name) })
}

// pythonModule is PythonModule with exists asked about a directory and a
// name in it apart (dir ends before the slash, name starts with it), so a
// lookup that can hash and compare the two parts needs no joined path:
// it is asked twice for every directory above every Python file.
func pythonModule(p string, exists func(dir, name string) bool) string {
	if !strings.HasSuffix(p, ".py") && !strings.HasSuffix(p, ".pyi") {
		return ""
	}
	// The module is cut from p itself, not split into parts and joined
	// again: it is computed for every Python file.
	s := strings.TrimSuffix(strings.TrimSuffix(p, ".pyi"), ".py")
	if s == "__init__" {
		return ""
	}
	s = strings.TrimSuffix(s, "/__init__")
	if s == "" || s[0] == '/' {
		return ""
	}
	// Climb while the containing directory is a package: s[from:] is
	// the module's part of the path.
	from := 0
	for end := len(s); ; {
		i := strings.LastIndexByte(s[:end], '/')
		if i < 0 {
			break
		}
		dir := s[:i]
		if !exists(dir, "/__init__.py") && !exists(dir, "/__init__.pyi") {
			from = i + 1
			break
		}
		end = i
	}
	return strings.ReplaceAll(s[from:], "/", ".")
}

// ModuleClaim is a Python module and the file that defines it (its
// number in Map.Entries).
type ModuleClaim struct {
	Module string
	File   int32
}

// PythonModules returns the map's Python modules sorted by name, one
// claim each: the file with the shortest path when two trees claim a
// module (a package and a copy under docs/ or build/), the first in file
// order among equals. Import resolution looks modules up in it, and it
// stays when DropImports drops the rest of the import lookup (locate's
// module table is written from it).
func (m *Map) PythonModules() []ModuleClaim {
	m.lazy.Lock()
	defer m.lazy.Unlock()
	if m.modules == nil {
		files := m.files()
		has := newPathIndex(files)
		m.modules = pythonModules(files, has.hasJoined)
	}
	return m.modules
}

// pythonModules is PythonModules computed (never nil).
func pythonModules(files fileSet, exists func(dir, name string) bool) []ModuleClaim {
	n := 0
	for i := range files.len() {
		if files.lang(i) == LangPython {
			n++
		}
	}
	claims := make([]ModuleClaim, 0, n)
	for i := range files.len() {
		if files.lang(i) == LangPython {
			if mod := pythonModule(files.path(i), exists); mod != "" {
				claims = append(claims, ModuleClaim{mod, int32(i)})
			}
		}
	}
	slices.SortFunc(claims, func(a, b ModuleClaim) int {
		if c := strings.Compare(a.Module, b.Module); c != 0 {
			return c
		}
		if c := len(files.path(int(a.File))) - len(files.path(int(b.File))); c != 0 {
			return c
		}
		return int(a.File - b.File)
	})
	return slices.CompactFunc(claims, func(a, b ModuleClaim) bool { return a.Module == b.Module })
}

// moduleLookup finds a module's file among sorted claims.
type moduleLookup struct {
	claims []ModuleClaim
	files  fileSet
}

// find is the path of the file defining the module mod.name, or mod
// when name is "" (mod alone when mod is ""), found without joining the
// two.
func (l moduleLookup) find(mod, name string) (string, bool) {
	if name == "" {
		mod, name = "", mod
	}
	i, ok := slices.BinarySearchFunc(l.claims, name, func(c ModuleClaim, name string) int { return compareJoined(c.Module, mod, name) })
	if !ok {
		return "", false
	}
	return l.files.path(int(l.claims[i].File)), true
}

// compareJoined compares s with a+"."+b (b alone when a is ""), without
// joining them.
func compareJoined(s, a, b string) int {
	if a == "" {
		return strings.Compare(s, b)
	}
	n := min(len(s), len(a))
	if c := strings.Compare(s[:n], a[:n]); c != 0 {
		return c
	}
	if len(s) <= len(a) {
		return -1 // s is a prefix of a, so shorter than a.b
	}
	if s[len(a)] != '.' {
		return cmp.Compare(s[len(a)], '.')
	}
	return strings.Compare(s[len(a)+1:], b)
}

// resolveImports fills File.Deps with the repository files each file
// imports, for the languages whose import syntax maps onto paths, sorted
// and without repeats. The targets are gathered in one scratch list
// reused across files: no set per file. Each file's Deps are cut from a
// shared block (depsBlock numbers at a time), capacity capped at their
// length so an append copies them, instead of one allocation a file (at
// 100,000 files about 60,000 allocations of 4 to 80 bytes, 4 MB).
//
// A map Stream returned has no Entries: its Deps go to a depGraph
// instead, in the same order.
func resolveImports(m *Map) {
	ix := m.importIndex()
	files := m.files()
	var g *depGraph
	if m.light != nil {
		g = newDepGraph(files.len())
		m.deps = g
	}
	var scratch, block []int32
	var paths []string
	for i := range files.len() {
		scratch = scratch[:0]
		from, lang := files.path(i), files.lang(i)
		imps := files.imports(i)
		for k := range imps.len() {
			paths = ix.targets(from, lang, imps.at(k), paths[:0])
			for _, p := range paths {
				if j, ok := ix.byPath.find(p); ok && p != from {
					scratch = append(scratch, j)
				}
			}
		}
		var deps []int32
		if len(scratch) > 0 {
			slices.Sort(scratch)
			deps = slices.Compact(scratch)
		}
		if g != nil {
			g.add(deps)
			continue
		}
		f := &m.Entries[i]
		f.Deps = nil
		if len(deps) > 0 {
			if cap(block)-len(block) < len(deps) {
				block = make([]int32, 0, max(depsBlock, len(deps)))
			}
			start := len(block)
			block = append(block, deps...)
			f.Deps = block[start:len(block):len(block)]
		}
	}
}

// depsBlock is how many Deps numbers resolveImports allocates at once:
// 256 KB, so what a block's last file leaves unused is a small share.
const depsBlock = 64 << 10

// depGraph is a streamed map's import graph: file i's Deps are
// to[off[i]:off[i+1]]. Import resolution writes them into blocks of
// depsBlock numbers, so no array is grown and copied while the import
// lookup is live (the cold query's highest heap); DepGraph joins them.
type depGraph struct {
	off    []uint32
	blocks [][]uint32
	to     []uint32
}

func newDepGraph(files int) *depGraph { return &depGraph{off: make([]uint32, 1, files+1)} }

// add appends the next file's Deps.
func (g *depGraph) add(deps []int32) {
	for _, d := range deps {
		if k := len(g.blocks) - 1; k < 0 || len(g.blocks[k]) == cap(g.blocks[k]) {
			g.blocks = append(g.blocks, make([]uint32, 0, depsBlock))
		}
		k := len(g.blocks) - 1
		g.blocks[k] = append(g.blocks[k], uint32(d))
	}
	g.off = append(g.off, g.off[len(g.off)-1]+uint32(len(deps)))
}

// DepGraph is the map's import graph as offsets and targets: file i's
// Deps are to[off[i]:off[i+1]] (numbers of files, ascending), without
// the file itself. For a map Stream returned it is what import
// resolution wrote, its blocks joined on the first call; for a built map
// it is copied from the Entries' Deps on every call. The caller must not
// change either slice.
func (m *Map) DepGraph() (off, to []uint32) {
	if g := m.deps; g != nil {
		if g.to == nil {
			g.to = make([]uint32, 0, g.off[len(g.off)-1])
			for _, b := range g.blocks {
				g.to = append(g.to, b...)
			}
			g.blocks = nil
		}
		return g.off, g.to
	}
	edges := 0
	for i := range m.Entries {
		edges += len(m.Entries[i].Deps)
	}
	off, to = make([]uint32, 1, len(m.Entries)+1), make([]uint32, 0, edges)
	for i := range m.Entries {
		for _, d := range m.Entries[i].Deps {
			if int(d) != i {
				to = append(to, uint32(d))
			}
		}
		off = append(off, uint32(len(to)))
	}
	return off, to
}

// Path is the path of file i (Entries[i].Path, or for a map Stream
// returned, which has no Entries, its packed record's).
func (m *Map) Path(i int) string { return m.files().path(i) }

// DepPath is the path of d, one of a file's Deps.
func (m *Map) DepPath(d int32) string { return m.files().path(int(d)) }

// importIndex returns the map's import lookup, built on first use.
func (m *Map) importIndex() *importIndex {
	m.lazy.Lock()
	defer m.lazy.Unlock()
	if m.imports == nil {
		m.imports = newImportIndex(m)
	}
	return m.imports
}

// importIndex is what resolving imports looks paths up in.
type importIndex struct {
	// byPath numbers every file by its place in Map.Entries.
	byPath       pathIndex
	goMod        string
	goDirs       map[string][]string // non-test Go files by directory
	pyMods       moduleLookup        // dotted module -> file
	javaBySuffix map[string][]string // Java files by base name
}

func newImportIndex(m *Map) *importIndex {
	files := m.files()
	ix := &importIndex{byPath: newPathIndex(files), goMod: m.goModulePath(),
		goDirs: map[string][]string{}, javaBySuffix: map[string][]string{}}
	// The Python modules are one sorted slice of claims looked up by
	// binary search, and a file's own module is worked out only for a
	// relative import: a map from every module to its file and one from
	// every file to its module took about 10 MB at 100,000 files.
	if m.modules == nil {
		m.modules = pythonModules(files, ix.byPath.hasJoined)
	}
	ix.pyMods = moduleLookup{claims: m.modules, files: files}
	for i := range files.len() {
		switch p := files.path(i); files.lang(i) {
		case LangGo:
			if !strings.HasSuffix(p, "_test.go") {
				d := path.Dir(p)
				ix.goDirs[d] = append(ix.goDirs[d], p)
			}
		case LangJava:
			ix.javaBySuffix[path.Base(p)] = append(ix.javaBySuffix[path.Base(p)], p)
		}
	}
	return ix
}

// selfModule is the module of the file at from, the importer of mod,
// when mod is relative (the only case that reads it), and "" otherwise.
func (ix *importIndex) selfModule(from, mod string) string {
	if !strings.HasPrefix(mod, ".") {
		return ""
	}
	return pythonModule(from, ix.byPath.hasJoined)
}

func (ix *importIndex) has(p string) bool { _, ok := ix.byPath.find(p); return ok }

// targets appends to out the files one import of the file at from, in
// lang, may name (unchecked: the caller keeps those that exist). The
// caller's out is reused from
// import to import: a slice of one path made for every import was about
// 2.5 MB of garbage at 100,000 files.
func (ix *importIndex) targets(from, lang, imp string, out []string) []string {
	switch lang {
	case LangGo:
		rest, ok := strings.CutPrefix(imp, ix.goMod)
		if ix.goMod == "" || !ok || (rest != "" && rest[0] != '/') {
			return out
		}
		dir := strings.TrimPrefix(rest, "/")
		if dir == "" {
			dir = "."
		}
		return append(out, ix.goDirs[dir]...)
	case LangPython:
		return append(out, resolvePython(imp, ix.selfModule(from, imp), strings.HasSuffix(from, "__init__.py"), ix.pyMods.find))
	case LangJavaScript, LangTypeScript:
		return append(out, resolveJS(from, imp, ix.has))
	case LangJava:
		parts := strings.Split(strings.TrimSuffix(imp, ".*"), ".")
		want := strings.Join(parts, "/") + ".java"
		for _, p := range ix.javaBySuffix[parts[len(parts)-1]+".java"] {
			if strings.HasSuffix(p, want) {
				out = append(out, p)
			}
		}
		return out
	case LangRust:
		return append(out, resolveRust(from, imp, ix.has))
	}
	return out
}

func (m *Map) goModulePath() string { return m.GoModule }

// resolvePython resolves "pkg.mod" (import) or "pkg.mod:name" (from-import)
// against the module table, relative imports against the importer's package.
func resolvePython(imp, self string, selfIsPkg bool, mods func(mod, name string) (string, bool)) string {
	mod, name, _ := strings.Cut(imp, ":")
	mod, ok := absolutePythonModule(mod, self, selfIsPkg)
	if !ok {
		return ""
	}
	if name != "" && name != "*" {
		if p, ok := mods(mod, name); ok {
			return p
		}
	}
	return pythonModuleFile(mod, mods)
}

// absolutePythonModule is mod with a relative import's leading dots
// resolved against the importer's module self; false when the dots climb
// above the top package.
func absolutePythonModule(mod, self string, selfIsPkg bool) (string, bool) {
	if !strings.HasPrefix(mod, ".") {
		return mod, true
	}
	dots := len(mod) - len(strings.TrimLeft(mod, "."))
	pkg := strings.Split(self, ".")
	if !selfIsPkg && len(pkg) > 0 {
		pkg = pkg[:len(pkg)-1]
	}
	up := dots - 1
	if up > len(pkg) {
		return "", false
	}
	pkg = pkg[:len(pkg)-up]
	rest := strings.TrimLeft(mod, ".")
	mod = strings.Join(pkg, ".")
	if rest != "" {
		if mod != "" {
			mod += "."
		}
		mod += rest
	}
	return mod, true
}

// pythonModuleFile is the file of the absolute module mod or of its
// nearest enclosing package found, or "".
func pythonModuleFile(mod string, mods func(mod, name string) (string, bool)) string {
	for mod != "" {
		if p, ok := mods(mod, ""); ok {
			return p
		}
		i := strings.LastIndexByte(mod, '.')
		if i < 0 {
			break
		}
		mod = mod[:i]
	}
	return ""
}

var jsExts = []string{"", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", "/index.ts", "/index.tsx", "/index.js", "/index.jsx"}

func resolveJS(from, spec string, has func(string) bool) string {
	if !strings.HasPrefix(spec, ".") {
		return ""
	}
	base := path.Join(path.Dir(from), spec)
	for _, ext := range jsExts {
		if has(base + ext) {
			return base + ext
		}
	}
	// TypeScript sources import "./x.js" meaning "./x.ts".
	if trimmed := strings.TrimSuffix(base, path.Ext(base)); trimmed != base {
		for _, ext := range []string{".ts", ".tsx"} {
			if has(trimmed + ext) {
				return trimmed + ext
			}
		}
	}
	return ""
}

func resolveRust(from, imp string, has func(string) bool) string {
	dir := path.Dir(from)
	base := path.Base(from)
	if name, ok := strings.CutPrefix(imp, "mod:"); ok {
		modDir := dir
		if base != "mod.rs" && base != "lib.rs" && base != "main.rs" {
			modDir = path.Join(dir, strings.TrimSuffix(base, ".rs"))
		}
		for _, c := range []string{modDir + "/" + name + ".rs", modDir + "/" + name + "/mod.rs"} {
			if has(c) {
				return c
			}
		}
		return ""
	}
	rest, ok := strings.CutPrefix(imp, "crate::")
	if !ok {
		return ""
	}
	// The crate root is the nearest ancestor src/ directory.
	root := dir
	for root != "." && path.Base(root) != "src" {
		root = path.Dir(root)
	}
	if path.Base(root) != "src" {
		return ""
	}
	parts := strings.Split(rest, "::")
	for n := len(parts); n > 0; n-- {
		p := path.Join(append([]string{root}, parts[:n]...)...)
		if has(p + ".rs") {
			return p + ".rs"
		}
		if has(p + "/mod.rs") {
			return p + "/mod.rs"
		}
	}
	return ""
}
