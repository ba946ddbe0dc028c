package repomap

// LightEntries spells out the files of a map Stream returned, which has
// no Entries, as Files for tests to compare with a built map's: path,
// language, flags and imports from the packed records, a Python file's
// module-level names (name and kind) and Deps from DepGraph. A built map
// gives its Entries.
func LightEntries(m *Map) []File {
	if m.light == nil {
		return m.Entries
	}
	l := m.light
	off, to := m.DepGraph()
	files := m.files()
	out := make([]File, files.len())
	for i := range out {
		f := &out[i]
		f.Path, f.Lang = files.path(i), files.lang(i)
		f.Test, f.Main = files.flags(i)
		imps := files.imports(i)
		for k := range imps.len() {
			f.Imports = append(f.Imports, imps.at(k))
		}
		l.namesOf(i, func(name string, kind SymbolKind) bool {
			f.Symbols = append(f.Symbols, Symbol{Name: name, Kind: kind})
			return true
		})
		for _, d := range to[off[i]:off[i+1]] {
			f.Deps = append(f.Deps, int32(d))
		}
	}
	return out
}
