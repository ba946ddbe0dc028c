package locate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// spreadAndDense is a repository where two large modules hold the same
// words: scattered over hundreds of lines in one, side by side in one
// function of the other. Whole-file statistics cannot tell them apart;
// a window of lines can.
func spreadAndDense() map[string]string {
	filler := func(tag string, n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "def %s_helper_%d(x):\n    return x + %d\n\n", tag, i, i)
		}
		return b.String()
	}
	spread := "def load_calendar(x):\n    return x\n\n" + filler("a", 60) +
		"def parse_offset(x):\n    return x\n\n" + filler("b", 60) +
		"def timezone_name(x):\n    return x\n"
	dense := filler("c", 60) +
		"def shift(calendar, offset):\n    # parse the offset, load the calendar: an offset loses the timezone name unless kept\n    return calendar, offset\n\n" +
		filler("d", 60)
	return map[string]string{
		"pkg/__init__.py": "",
		"pkg/spread.py":   spread,
		"pkg/dense.py":    dense,
		"pkg/other.py":    "def unrelated():\n    pass\n",
	}
}

// mapTree writes files into a new repository and maps it.
func mapTree(t *testing.T, files map[string]string) (string, *repomap.Map) {
	t.Helper()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, files)
	m, err := repomap.Build(context.Background(), dir, repomap.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

func TestBestWindowPrefersWordsTogether(t *testing.T) {
	idfs := map[string]float64{"calendar": 1, "offset": 1, "timezon": 1}
	lines := func(text string) [][]string {
		return lineTerms(bytesLines(text))
	}
	together := lines(strings.Repeat("x = 1\n", 100) + "calendar offset timezone\n" + strings.Repeat("x = 1\n", 100))
	apart := lines("calendar\n" + strings.Repeat("x = 1\n", 100) + "offset\n" + strings.Repeat("x = 1\n", 100) + "timezone\n")
	st, at := newWindowScorer(idfs).best(together)
	sa, _ := newWindowScorer(idfs).best(apart)
	if st <= sa {
		t.Fatalf("together %.3f <= apart %.3f", st, sa)
	}
	// The window reported must hold line 101.
	if at > 100 || at+passageLines <= 100 {
		t.Errorf("best window starts at line %d, does not hold line 101", at+1)
	}
	if s, _ := newWindowScorer(map[string]float64{"nothing": 1}).best(together); s != 0 {
		t.Errorf("no query term: score %.3f", s)
	}
}

func bytesLines(s string) [][]byte {
	var out [][]byte
	for _, l := range strings.Split(s, "\n") {
		out = append(out, []byte(l))
	}
	return out
}

func TestRankExplainsPassages(t *testing.T) {
	_, m := mapTree(t, spreadAndDense())
	// The package-level Rank reads the map's own root.
	got, err := Rank(m, "parse the offset, load the calendar, keep the timezone name", 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].Path != "pkg/dense.py" {
		t.Fatalf("top = %v, want pkg/dense.py", pathsOf(got))
	}
	why := strings.Join(got[0].Reasons, "\n")
	for _, want := range []string{"closest passage at lines", "a line shares words in the issue's order", "closest passage to the title at lines", "content matches the title's words “"} {
		if !strings.Contains(why, want) {
			t.Errorf("reasons %q lack %q", got[0].Reasons, want)
		}
	}
}

func TestPhrasesWeighRareWords(t *testing.T) {
	issue := "ERROR: at column 23: unexpected character \"\\\""
	idfs := map[string]float64{}
	for i, term := range repomap.Terms(issue) {
		idfs[term] = float64(i + 1)
	}
	ph := queryPhrases(issue, idfs)
	msg := strings.Join(repomap.Terms("unexpected character"), " ")
	if ph[msg] == 0 {
		t.Fatalf("phrases = %v, lack %q", ph, msg)
	}
	// The error message as the code spells it, with a placeholder.
	file := lineTerms(bytesLines("msg = f'unexpected character \"{c}\"'\n"))
	v, n := phraseHits(file, ph)
	if n != 1 || v != ph[msg] {
		t.Errorf("hits = %v, %d; want the message's pair worth %v", v, n, ph[msg])
	}
	if v, n := phraseHits(lineTerms(bytesLines("character unexpected\n")), ph); n != 0 || v != 0 {
		t.Errorf("reversed words matched: %v, %d", v, n)
	}
}

func TestIssueCode(t *testing.T) {
	q := "Title\nCalling `ds.rolling(dim)` fails:\n```python\nimport xarray as xr\nxr.concat([a, b])\n```\nand `x`."
	got := issueCode(q)
	for _, want := range []string{"ds.rolling(dim)", "xr.concat([a, b])", "x\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("issueCode = %q, lacks %q", got, want)
		}
	}
	if strings.Contains(got, "Title") || strings.Contains(got, "fails") {
		t.Errorf("issueCode kept prose: %q", got)
	}
}

func TestOpenedIndexReadsPassages(t *testing.T) {
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, spreadAndDense())
	cache := t.TempDir()
	for _, want := range []bool{false, true} {
		ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		if ix.fromCache != want {
			t.Fatalf("fromCache = %v, want %v", ix.fromCache, want)
		}
		got, err := ix.Rank("parse the offset, load the calendar, keep the timezone name", 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !strings.Contains(strings.Join(got[0].Reasons, "\n"), "closest passage at lines") {
			t.Errorf("fromCache %v: %v has no passage reason", want, got)
		}
	}
}
