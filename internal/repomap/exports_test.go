package repomap

import (
	"context"
	"testing"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestPythonNameImports builds a package that re-exports a function from a
// submodule, as numpy-style libraries do, and checks that imports through
// the package count for the defining file, not for the many files with a
// method or local of the same name.
func TestPythonNameImports(t *testing.T) {
	dir := t.TempDir()
	repomaptest.WriteFiles(t, dir, map[string]string{
		"lib/__init__.py":           "from .core.computation import where, polyval\nfrom .core import api\nfrom .core.frame import Frame\n",
		"lib/core/__init__.py":      "",
		"lib/core/computation.py":   "def where(cond, x, y):\n    pass\n\ndef polyval(c, x):\n    pass\n",
		"lib/core/frame.py":         "class Frame:\n    def where(self, cond):\n        pass\n",
		"lib/core/api.py":           "from .computation import where\n\ndef load():\n    pass\n",
		"lib/core/ops.py":           "from lib.core.frame import Frame\nfrom . import computation\nfrom .missing import nothing\nfrom .api import where\n",
		"lib/core/other.py":         "def where(a):\n    pass\n",
		"tests/test_computation.py": "from lib import where, polyval, Frame\nfrom lib.core.api import load\nfrom lib import *\n",
		"scripts/loop_a.py":         "from .loop_b import spin\n",
	})
	repomaptest.Git(t, dir, "init", "-q", "-b", "main")
	repomaptest.Git(t, dir, "add", "-A")
	repomaptest.Git(t, dir, "commit", "-q", "-m", "init", "--no-gpg-sign")
	m, err := Build(context.Background(), dir, Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	got := PythonNameImports(m)
	named := func(name string) map[string]int {
		out := map[string]int{}
		for _, ni := range got[name] {
			out[m.Entries[ni.File].Path] = ni.Importers
		}
		return out
	}
	cases := []struct {
		name string
		want map[string]int
	}{
		// lib/__init__.py, api.py (directly), ops.py (through api.py) and
		// the test (through lib/__init__.py).
		{"where", map[string]int{"lib/core/computation.py": 4}},
		{"polyval", map[string]int{"lib/core/computation.py": 2}},
		{"Frame", map[string]int{"lib/core/frame.py": 3}},
		{"load", map[string]int{"lib/core/api.py": 1}},
		// A submodule, an unresolved module and a star import name no
		// definition.
		{"api", map[string]int{}},
		{"computation", map[string]int{}},
		{"nothing", map[string]int{}},
		{"spin", map[string]int{}},
		{"*", map[string]int{}},
	}
	for _, c := range cases {
		g := named(c.name)
		if len(g) != len(c.want) {
			t.Errorf("%s: homes %v, want %v", c.name, g, c.want)
			continue
		}
		for p, n := range c.want {
			if g[p] != n {
				t.Errorf("%s: homes %v, want %v", c.name, g, c.want)
			}
		}
	}
}
