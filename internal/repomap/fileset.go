package repomap

import "sort"

// fileSet is how detection, import resolution and PythonNameImports read
// a map's files: a built map's Entries, or the packed records Stream
// keeps (lightFiles), which are never spelled out as Files (at 100,000
// files those Files, their imports' string headers and names' Symbols
// were 20 MB of the cold query's highest heap). Exactly one of the two
// is set; each accessor branches on which, so nothing goes through an
// interface on paths run for every import.
type fileSet struct {
	entries []File
	light   *lightFiles
}

// files is m's fileSet.
func (m *Map) files() fileSet { return fileSet{entries: m.Entries, light: m.light} }

func (s fileSet) len() int {
	if s.light != nil {
		return len(s.light.recs)
	}
	return len(s.entries)
}

func (s fileSet) path(i int) string {
	if s.light != nil {
		return s.light.todo[s.light.recs[i].path]
	}
	return s.entries[i].Path
}

func (s fileSet) lang(i int) string {
	if s.light != nil {
		return s.light.langs[s.light.recs[i].lang]
	}
	return s.entries[i].Lang
}

// flags are file i's Test and Main.
func (s fileSet) flags(i int) (test, main bool) {
	if s.light != nil {
		r := &s.light.recs[i]
		return r.test, r.main
	}
	// Read by pointer: a copy of the File would read the term ids
	// build renumbers meanwhile.
	f := &s.entries[i]
	return f.Test, f.Main
}

// imports are file i's import specifiers as written.
func (s fileSet) imports(i int) textList {
	if s.light != nil {
		return s.light.importsOf(i)
	}
	return textList{strs: s.entries[i].Imports}
}

// definesName says whether file i defines name at module level (a
// Python file's; a light record keeps no other names).
func (s fileSet) definesName(i int, name string) bool {
	if s.light != nil {
		return s.light.definesName(i, name)
	}
	for _, sym := range s.entries[i].Symbols {
		if sym.Name == name && moduleLevel(sym) {
			return true
		}
	}
	return false
}

// find is the index of the file at path p (the first if it is listed
// twice), found by binary search: the files are in path order.
func (s fileSet) find(p string) (int, bool) {
	n := s.len()
	i := sort.Search(n, func(i int) bool { return s.path(i) >= p })
	return i, i < n && s.path(i) == p
}

// textList is a list of strings: a slice of them, or numbers of strings
// cut from one text at ends (the j-th from ends[j-1], the first from 0,
// to ends[j]), so a streamed map's imports need no string header each
// and an import many files of a chunk name is held once.
type textList struct {
	strs []string
	text string
	ends []uint32
	ids  []uint32
}

func (l textList) len() int {
	if l.ids != nil {
		return len(l.ids)
	}
	return len(l.strs)
}

// at is the k-th string.
func (l textList) at(k int) string {
	if l.ids == nil {
		return l.strs[k]
	}
	j := l.ids[k]
	from := uint32(0)
	if j > 0 {
		from = l.ends[j-1]
	}
	return l.text[from:l.ends[j]]
}
