package repomap

import (
	"sort"
	"strings"
)

// NameImport counts how many files import one name from one file.
type NameImport struct {
	// File is the index in Map.Entries of the file that defines the name.
	File int
	// Importers is how many other files import the name from it, directly
	// or through packages that re-export it.
	Importers int
}

// maxReexportHops bounds how many "from .x import name" re-exports are
// followed from an importer to the file that defines the name.
const maxReexportHops = 4

// PythonNameImports maps each name that Python files import with
// "from M import name" to the files that define it at module level and
// how many files import it from each. Re-exports are followed, so
// "from pkg import where" counts for pkg/core/computation.py when
// pkg/__init__.py takes where from there. A name many files import from
// one place marks that place as the name's home, however many other files
// define a method or local of the same name.
func PythonNameImports(m *Map) map[string][]NameImport {
	r := newNameResolver(m)
	// One map counts every (name, defining file) pair: a map per name,
	// most of them holding one file, took about 200 bytes a name at the
	// cold query's peak.
	counts := map[nameAt]int{}
	seen := map[string]bool{}
	for i := range r.files.len() {
		if r.files.lang(i) != LangPython {
			continue
		}
		clear(seen)
		imps := r.files.imports(i)
		for k := range imps.len() {
			mod, name, ok := strings.Cut(imps.at(k), ":")
			if !ok || name == "*" || seen[name] {
				continue
			}
			def := r.definer(i, mod, name, 0)
			if def < 0 || def == i {
				continue
			}
			seen[name] = true
			counts[nameAt{name, def}]++
		}
	}
	out := map[string][]NameImport{}
	for k, n := range counts {
		out[k.name] = append(out[k.name], NameImport{File: k.file, Importers: n})
	}
	for _, list := range out {
		sort.Slice(list, func(a, b int) bool { return list[a].File < list[b].File })
	}
	return out
}

// nameAt is a name imported from the file that defines it.
type nameAt struct {
	name string
	file int
}

// nameResolver follows from-imports to the files that define names.
type nameResolver struct {
	files fileSet
	ix    *importIndex
}

func newNameResolver(m *Map) *nameResolver {
	return &nameResolver{files: m.files(), ix: m.importIndex()}
}

// definer is the file that defines name when file `from` imports it from
// mod, or -1: a submodule of that name, an unresolved module or a chain
// longer than maxReexportHops name no definition.
func (r *nameResolver) definer(from int, mod, name string, hops int) int {
	p := r.files.path(from)
	selfMod := r.ix.selfModule(p, mod)
	isPkg := strings.HasSuffix(p, "__init__.py")
	abs, ok := absolutePythonModule(mod, selfMod, isPkg)
	if !ok {
		return -1
	}
	modPath := pythonModuleFile(abs, r.ix.pyMods.find)
	if modPath == "" {
		return -1
	}
	// The module is resolved once: resolving "mod:name" again would
	// repeat its lookups to find the same file unless name is a module
	// of its own.
	if name != "" && name != "*" {
		if p, ok := r.ix.pyMods.find(abs, name); ok && p != modPath {
			return -1 // "from pkg import submodule"
		}
	}
	t, ok := r.files.find(modPath)
	if !ok || t == from {
		return -1
	}
	if r.defines(t, name) {
		return t
	}
	if hops >= maxReexportHops {
		return -1
	}
	imps := r.files.imports(t)
	for k := range imps.len() {
		m2, n2, ok := strings.Cut(imps.at(k), ":")
		if ok && n2 == name {
			return r.definer(t, m2, name, hops+1)
		}
	}
	return -1
}

// defines says whether file i defines name at module level. The file's
// symbols are scanned each time: a set of names cached per visited file
// (a small map each) held about 200 bytes for every Python file some
// file imports from, most of a large tree's, at the cold query's peak.
func (r *nameResolver) defines(i int, name string) bool { return r.files.definesName(i, name) }
