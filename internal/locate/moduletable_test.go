package locate

import (
	"encoding/binary"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
)

// TestModuleTablePrefersTheShortestPath checks the module table's choice
// when several files claim one module: the shortest path, and the first
// in file order among paths of one length, whichever comes first.
func TestModuleTablePrefersTheShortestPath(t *testing.T) {
	t.Parallel()
	paths := []string{
		"a/__init__.py", "a/x.py", // a, a.x
		"aa/y.py",          // y (longer, first)
		"b/x.py", "b/y.py", // x, y (shorter, later)
		"build/lib/a/__init__.py", "build/lib/a/x.py", // a, a.x again, longer
		"c/x.py",  // x again, as long as b/x.py
		"c/z.go",  // not Python
		"d/w.pyi", // w
	}
	m := &repomap.Map{}
	for _, p := range paths {
		lang := repomap.LangPython
		if p == "c/z.go" {
			lang = repomap.LangGo
		}
		m.Entries = append(m.Entries, repomap.File{Path: p, Lang: lang})
	}
	want := map[string]string{"a": "a/__init__.py", "a.x": "a/x.py", "x": "b/x.py", "y": "b/y.py", "w": "d/w.pyi"}
	tab := moduleTable(m)
	if tab.len() != len(want) {
		t.Fatalf("module table has %d modules, want %d", tab.len(), len(want))
	}
	for mod, p := range want {
		v := tab.get(mod)
		i, n := binary.Uvarint(v)
		if n <= 0 || n != len(v) || int(i) >= len(paths) || paths[i] != p {
			t.Errorf("module %s: value %v, want file %s", mod, v, p)
		}
	}
}
