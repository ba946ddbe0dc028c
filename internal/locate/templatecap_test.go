package locate

import (
	"testing"
)

// postingIndex is an index of n files whose contents table holds, for each
// term, the postings of its first files[term] files (each posting two
// bytes: a delta of one, a count of one).
func postingIndex(n int, files map[string]int) *Index {
	b := tableBuilder{}
	for term, k := range files {
		var v []byte
		last := 0
		for f := 1; f <= k; f++ {
			v = appendPosting(v, &last, f, 1)
		}
		b[term] = v
	}
	return &Index{files: make([]fileEntry, n+1), content: b.build()}
}

// The files a shown line's template is looked for in are chosen by its
// terms' postings; a term held by tens of thousands of files would be
// decoded for every line of every query, and weighs next to nothing. A
// posting list past templatePostingBytes is left out: removing the cap
// makes the decoded counts below grow by the common term's files.
func TestLineFilesSkipsLongPostings(t *testing.T) {
	t.Parallel()
	atCap := templatePostingBytes / 2 // two bytes a posting
	ix := postingIndex(atCap+100, map[string]int{
		"atcap":   atCap,
		"overcap": atCap + 1,
		"rare":    3,
	})
	if got := len(ix.content.get("overcap")); got <= templatePostingBytes {
		t.Fatalf("overcap's postings take %d bytes, not past the cap %d", got, templatePostingBytes)
	}
	cases := []struct {
		line    string
		decoded int // postings the line's terms decode (keep's calls)
		df      map[string]int
		top     int // the best file
	}{
		{"rare overcap", 3, map[string]int{"rare": 3, "overcap": 0}, 1},
		{"overcap", 0, map[string]int{"overcap": 0}, -1},
		{"atcap rare", atCap + 3, map[string]int{"atcap": atCap, "rare": 3}, 1},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			t.Parallel()
			decoded := 0
			lf := newLineFiles(ix, func(int) bool { decoded++; return true })
			best := lf.best(c.line)
			if decoded != c.decoded {
				t.Errorf("decoded %d postings, want %d", decoded, c.decoded)
			}
			for term, want := range c.df {
				if got := lf.terms[term].df; got != want {
					t.Errorf("%s: %d files counted, want %d", term, got, want)
				}
			}
			if c.top < 0 {
				if len(best) != 0 {
					t.Errorf("best = %v, want none", best)
				}
			} else if len(best) == 0 || best[0] != c.top {
				t.Errorf("best = %v, want %d first", best, c.top)
			}
			// A second line with the same terms decodes nothing again.
			decoded = 0
			lf.best(c.line)
			if decoded != 0 {
				t.Errorf("second line decoded %d postings, want 0", decoded)
			}
		})
	}
}
