package repomap

import (
	"path"
	"slices"
	"strings"
)

// PythonModule returns the dotted module name of a Python file, derived from
// the chain of packages (directories with __init__.py) it sits in:
// src/pkg/sub/mod.py -> pkg.sub.mod when src has no __init__.py.
func PythonModule(p string, exists func(string) bool) string {
	if !strings.HasSuffix(p, ".py") && !strings.HasSuffix(p, ".pyi") {
		return ""
	}
	// The module is cut from p itself, not split into parts and joined
	// again: it is computed for every Python file, twice in a cold query.
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
		if !exists(dir+"/__init__.py") && !exists(dir+"/__init__.pyi") {
			from = i + 1
			break
		}
		end = i
	}
	return strings.ReplaceAll(s[from:], "/", ".")
}

// resolveImports fills File.Deps with the repository files each file
// imports, for the languages whose import syntax maps onto paths, sorted
// and without repeats. The targets are gathered in one scratch list
// reused across files and each file keeps an exact copy: no set per file.
func resolveImports(m *Map) {
	ix := m.importIndex()
	var scratch []int32
	for i := range m.Entries {
		f := &m.Entries[i]
		scratch = scratch[:0]
		for _, imp := range f.Imports {
			for _, p := range ix.targets(f, imp) {
				if j, ok := ix.byPath.find(p); ok && p != f.Path {
					scratch = append(scratch, j)
				}
			}
		}
		f.Deps = nil
		if len(scratch) > 0 {
			slices.Sort(scratch)
			f.Deps = slices.Clone(slices.Compact(scratch))
		}
	}
}

// DepPath is the path of d, one of a file's Deps.
func (m *Map) DepPath(d int32) string { return m.Entries[d].Path }

// importIndex returns the map's import lookup, built on first use.
func (m *Map) importIndex() *importIndex {
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
	pyMods       map[string]string   // dotted module -> file
	fileMod      map[string]string   // Python file -> dotted module
	javaBySuffix map[string][]string // Java files by base name
}

func newImportIndex(m *Map) *importIndex {
	// The Python maps are sized up front: growing a Go map rehashes
	// every key it holds, and on a large tree they hold one per file.
	python := 0
	for i := range m.Entries {
		if m.Entries[i].Lang == LangPython {
			python++
		}
	}
	ix := &importIndex{byPath: newPathIndex(m.Entries), goMod: m.goModulePath(),
		goDirs: map[string][]string{}, pyMods: make(map[string]string, python), fileMod: make(map[string]string, python),
		javaBySuffix: map[string][]string{}}
	// Entries are read by pointer: term ids are renumbered in them at the
	// same time (build), and a copy of a File would read those fields too.
	for i := range m.Entries {
		f := &m.Entries[i]
		switch f.Lang {
		case LangGo:
			if !strings.HasSuffix(f.Path, "_test.go") {
				d := path.Dir(f.Path)
				ix.goDirs[d] = append(ix.goDirs[d], f.Path)
			}
		case LangPython:
			if mod := PythonModule(f.Path, ix.has); mod != "" {
				ix.fileMod[f.Path] = mod
				// Prefer the shortest path when two trees claim a module
				// (a package and a copy under docs/ or build/).
				if old, ok := ix.pyMods[mod]; !ok || len(f.Path) < len(old) {
					ix.pyMods[mod] = f.Path
				}
			}
		case LangJava:
			ix.javaBySuffix[path.Base(f.Path)] = append(ix.javaBySuffix[path.Base(f.Path)], f.Path)
		}
	}
	return ix
}

func (ix *importIndex) has(p string) bool { _, ok := ix.byPath.find(p); return ok }

// targets are the files one import of f may name (unchecked: the caller
// keeps those that exist).
func (ix *importIndex) targets(f *File, imp string) []string {
	switch f.Lang {
	case LangGo:
		if ix.goMod == "" || (imp != ix.goMod && !strings.HasPrefix(imp, ix.goMod+"/")) {
			return nil
		}
		dir := strings.TrimPrefix(strings.TrimPrefix(imp, ix.goMod), "/")
		if dir == "" {
			dir = "."
		}
		return ix.goDirs[dir]
	case LangPython:
		return []string{resolvePython(imp, ix.fileMod[f.Path], strings.HasSuffix(f.Path, "__init__.py"), ix.pyMods)}
	case LangJavaScript, LangTypeScript:
		return []string{resolveJS(f.Path, imp, ix.has)}
	case LangJava:
		parts := strings.Split(strings.TrimSuffix(imp, ".*"), ".")
		want := strings.Join(parts, "/") + ".java"
		var out []string
		for _, p := range ix.javaBySuffix[parts[len(parts)-1]+".java"] {
			if strings.HasSuffix(p, want) {
				out = append(out, p)
			}
		}
		return out
	case LangRust:
		return []string{resolveRust(f.Path, imp, ix.has)}
	}
	return nil
}

func (m *Map) goModulePath() string { return m.GoModule }

// resolvePython resolves "pkg.mod" (import) or "pkg.mod:name" (from-import)
// against the module table, relative imports against the importer's package.
func resolvePython(imp, self string, selfIsPkg bool, mods map[string]string) string {
	mod, name, _ := strings.Cut(imp, ":")
	if strings.HasPrefix(mod, ".") {
		dots := len(mod) - len(strings.TrimLeft(mod, "."))
		pkg := strings.Split(self, ".")
		if !selfIsPkg && len(pkg) > 0 {
			pkg = pkg[:len(pkg)-1]
		}
		up := dots - 1
		if up > len(pkg) {
			return ""
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
	}
	if name != "" && name != "*" {
		if p, ok := mods[joinDot(mod, name)]; ok {
			return p
		}
	}
	for mod != "" {
		if p, ok := mods[mod]; ok {
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

func joinDot(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
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
