package locate

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

func TestIssueRefs(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"I suppose this is related to #4422, and #4422 again", []string{"4422"}},
		{"(#12) and #0345", []string{"12", "345"}},
		{"see https://github.com/o/r/issues/123 and https://github.com/o/r/pull/45#discussion", []string{"123", "45"}},
		{"a colour &#123; and a link/#99 are not citations", nil},
		{"word#12 is not one either, nor is #7 (too short) or #1234567 (too long)", nil},
	}
	for _, c := range cases {
		if got := issueRefs(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("issueRefs(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// citingRepo is the project with history citing issue numbers: a squashed
// fix "(#321)" to the units, a pull request #654 merged with a merge
// commit (its branch commit cites nothing; the merge's change against the
// first parent is the projection), and a sweeping change citing #777.
func citingRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	git := func(args ...string) { repomaptest.Git(t, dir, args...) }
	commit := func(msg string, files map[string]string) { commitFiles(t, dir, msg, files) }
	commit("Round yards in conversions (#321)", map[string]string{"geo/units.py": project["geo/units.py"] + "\n# yards\n"})
	git("checkout", "-q", "-b", "poles")
	commit("Clamp latitudes near the poles", map[string]string{"geo/projection.py": project["geo/projection.py"] + "\n# clamp\n"})
	git("checkout", "-q", "-")
	commit("Unrelated reader tweak", map[string]string{"geo/io/reader.py": project["geo/io/reader.py"] + "\n# tweak\n"})
	git("merge", "-q", "--no-ff", "--no-gpg-sign", "-m", "Merge pull request #654 from someone/poles", "poles")
	commit("Reformat everything (#777)", sweeping("geo/shapes.py"))
	return dir
}

// TestCitedIssueSignal checks that an issue citing a number marks the
// files the commits citing it changed, a merge by its change against the
// first parent, that a sweeping commit marks nothing, and that the cited
// commits survive the index file.
func TestCitedIssueSignal(t *testing.T) {
	dir := citingRepo(t)
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	marked := func(query string) map[string]string {
		ev := &evidence{feats: newFeatureColumns(len(ix.files))}
		ix.citedChanges(query, ev)
		out := map[string]string{}
		for i := range ev.feats.len() {
			if ev.feats.at(fIssueRefs, i) > 0 {
				out[ix.files[i].path] = ev.noteOf(fIssueRefs, i)
			}
		}
		return out
	}
	got := marked("Poles overflow again, like in #654")
	if len(got) != 1 || !strings.Contains(got["geo/projection.py"], "cites #654") || !strings.Contains(got["geo/projection.py"], "Merge pull request #654") {
		t.Errorf("citing #654 marked %v, want geo/projection.py by the merge", got)
	}
	got = marked("yards are off, see https://example.org/o/r/issues/321")
	if len(got) != 1 || got["geo/units.py"] == "" {
		t.Errorf("citing /issues/321 marked %v, want geo/units.py", got)
	}
	for _, q := range []string{"a sweep: #777", "nothing cites #999", "no citation at all"} {
		if got := marked(q); len(got) != 0 {
			t.Errorf("%q marked %v, want nothing", q, got)
		}
	}

	// Through Rank, the signal shows in --explain.
	w := DefaultWeights()
	w[fIssueRefs] = 5
	rs, err := ix.Rank("Mercator overflows at latitude 90 again, as in #654", 3, Options{Weights: w})
	if err != nil || len(rs) == 0 || rs[0].Path != "geo/projection.py" || !strings.Contains(strings.Join(rs[0].Reasons, "\n"), "cites #654") {
		t.Errorf("ranking %v (%v), want geo/projection.py first with its citing commit", rs, err)
	}

	mem := builtIndex(t, dir)
	back, err := decodeIndex(mem.encode())
	if err != nil {
		t.Fatal(err)
	}
	sameTable(t, "cited numbers", &mem.cited.terms, &back.cited.terms)
	ct0, bct := mem.cited, back.cited
	ct0.terms, bct.terms = table{}, table{}
	if !reflect.DeepEqual(bct, ct0) {
		t.Error("cited commits do not survive encoding")
	}
	ct := back.cited
	off := append([]uint32(nil), ct.off...)
	off[len(off)-1] = uint32(len(ct.to) + 1)
	if err := checkLists("cited commits", len(off)-1, off, ct.to, len(back.files)); err == nil {
		t.Error("a cited-commit offset past its files passed the check")
	}
}
