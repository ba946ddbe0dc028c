package repomap

import (
	"slices"
	"testing"
)

// TestFactsOfListing checks what detection keeps of a listing before the
// map filters it in place: root names and top-level directories (a
// directory whose files are all deeper still counts), a conftest.py at
// any depth, and the manifests and CI files detect listed from the whole
// listing (vendored, documentation and deep manifests left out).
func TestFactsOfListing(t *testing.T) {
	t.Parallel()
	listed := []string{"src/pkg/tests/conftest.py", "spec/models/user_spec.rb", "Gemfile", "vendor/x/go.mod", "go.mod",
		".github/workflows/ci.yml", "docs/setup.py", "a/b/c/d/package.json", "pkg/package.json", "spec/helper.rb"}
	f := factsOf(listed)
	wantRoot := []string{".github/", "Gemfile", "a/", "docs/", "go.mod", "pkg/", "spec/", "src/", "vendor/"}
	if !slices.Equal(f.root, wantRoot) || !f.conftest {
		t.Errorf("root %v, conftest %v; want %v and true", f.root, f.conftest, wantRoot)
	}
	if want := []string{"Gemfile", "go.mod", "pkg/package.json"}; !slices.Equal(f.manifests, want) {
		t.Errorf("manifests %v, want %v", f.manifests, want)
	}
	if want := []string{".github/workflows/ci.yml"}; !slices.Equal(f.ciFiles, want) {
		t.Errorf("CI files %v, want %v", f.ciFiles, want)
	}
	d := &detector{facts: f}
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"has Gemfile", d.has("Gemfile"), true},
		{"has spec (a directory)", d.has("spec"), false},
		{"has pytest.ini", d.has("pytest.ini"), false},
		{"hasDir spec", d.hasDir("spec"), true},
		{"hasDir models (not at the root)", d.hasDir("models"), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if factsOf([]string{"conftest.py", "a/conftest.pyc"}).conftest {
		t.Error("a root conftest.py (has answers for it) or a conftest.pyc counted as one in a directory")
	}
}

// TestNewBuildMapFiltersInPlace checks that the files to read are the
// listing's own array, filtered and sorted, so a map does not hold a
// second list of every path while it reads them.
func TestNewBuildMapFiltersInPlace(t *testing.T) {
	t.Parallel()
	listed := []string{"z.go", "img/logo.png", "a.py", "vendor/x/y.go", "m/n.go"}
	m, todo := newBuildMap("/repo", listed)
	if want := []string{"a.py", "m/n.go", "z.go"}; !slices.Equal(todo, want) {
		t.Fatalf("files to read %v, want %v", todo, want)
	}
	if &todo[0] != &listed[0] {
		t.Error("the files to read are a copy of the listing, not the listing itself")
	}
	if m.Listed != 5 || m.Skipped["binary"] != 1 || m.Skipped["vendored"] != 1 {
		t.Errorf("listed %d, skipped %v; want 5 with one binary and one vendored", m.Listed, m.Skipped)
	}
}

// TestLightImportsHeldOnce checks that a chunk's packed records give each
// file its own imports in order, repeats included, while the chunk's text
// holds an import many files name once, and names follow the imports.
func TestLightImportsHeldOnce(t *testing.T) {
	t.Parallel()
	files := []File{
		{Path: "a.py", Lang: LangPython, Imports: []string{"pkg:helpers", "os"}, Symbols: []Symbol{{Name: "Alpha", Kind: KindClass}}},
		{Path: "b.py", Lang: LangPython, Imports: []string{"os", "pkg:helpers", "os"}},
		{Path: "c.go", Lang: LangGo},
		{Path: "d.py", Lang: LangPython, Imports: []string{"pkg:other"}, Symbols: []Symbol{{Name: "delta", Kind: KindFunc}}},
	}
	l := &lightFiles{todo: []string{"a.py", "b.py", "c.go", "d.py"}}
	l.add(0, files)
	if got, want := l.chunks[0].text, "pkg:helpersospkg:otherAlphadelta"; got != want {
		t.Errorf("chunk text %q, want %q", got, want)
	}
	set := fileSet{light: l}
	for i, f := range files {
		imps := set.imports(i)
		var got []string
		for k := range imps.len() {
			got = append(got, imps.at(k))
		}
		if !slices.Equal(got, f.Imports) {
			t.Errorf("%s: imports %q, want %q", f.Path, got, f.Imports)
		}
		for _, s := range f.Symbols {
			if !set.definesName(i, s.Name) {
				t.Errorf("%s does not define %s", f.Path, s.Name)
			}
		}
	}
	if set.definesName(1, "Alpha") || set.definesName(3, "Alpha") {
		t.Error("a name found in a file that does not define it")
	}
}
