package locate

import (
	"bytes"
	"context"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/repomap"
)

// historyByMaps is setHistory as it was before terms were numbered: a map
// of term strings a commit, the subject cut from the whole message made a
// string. TestSetHistoryAsMaps holds the new one to its output.
func historyByMaps(ix *Index, out []byte) history {
	postings := map[string][]byte{}
	last := map[string]int{}
	h := history{fileOff: []uint32{0}}
	var subjects strings.Builder
	sum := 0
	ix.eachCommit(out, nil, func(hash, msg []byte, files []uint32) {
		c := h.commits()
		counts := map[string]uint32{}
		n := 0
		repomap.EachTerm(msg, func(t string) { counts[t]++; n++ })
		for t, k := range counts {
			l := last[t]
			postings[t] = appendPosting(postings[t], &l, c, k)
			last[t] = l
		}
		sum += n
		h.lengths = append(h.lengths, uint32(n))
		h.fileTo = append(h.fileTo, files...)
		h.fileOff = append(h.fileOff, uint32(len(h.fileTo)))
		subjects.WriteString(string(hash) + " " + abbrev.Truncate(abbrev.FirstLine(string(msg)), historySubject) + "\n")
	})
	h.terms = tableBuilder(postings).build()
	h.subjects = subjects.String()
	if len(h.lengths) > 0 {
		h.avg = float64(float32(math.Max(1, float64(sum)/float64(len(h.lengths)))))
	}
	return h
}

// TestSetHistoryAsMaps checks the history setHistory indexes (terms and
// their postings, lengths, files, subjects) is the one the map-based
// indexing gave, on records with awkward messages: blank and spaced first
// lines, a one-line message with trailing space, Unicode spaces, a
// subject past historySubject runes, invalid UTF-8, no message, commits
// changing no indexed file or too many, and the same terms across
// commits. setCited is checked to keep the same subjects for commits
// citing a number.
func TestSetHistoryAsMaps(t *testing.T) {
	t.Parallel()
	ix := &Index{}
	for _, p := range []string{"a.go", "b/c.py", "d.md", "e.go"} {
		ix.files = append(ix.files, fileEntry{path: p})
	}
	many := strings.Repeat("a.go\n", historyMaxFiles+1)
	recs := []struct{ hash, msg, names string }{
		{"1111111", "Fix parsing of aliases\n\nThe parser read aliases twice (#12).\n", "\na.go\nb/c.py\n"},
		{"2222222", "\n\n   Leading blank lines, spaced subject   \nbody body body", "\nd.md\n"},
		{"3333333", "one line with trailing space   ", "\ne.go\n"},
		{"4444444", "\u00a0\u2003unicode spaces\u2003\nsecond line #7 #7 #0012", "\na.go\n"},
		{"5555555", strings.Repeat("ünïcode subject ", 10) + "\nrest", "\nb/c.py\n"},
		{"6666666", "invalid \xff\xfe utf-8 parsing parsed\n", "\na.go\ne.go\n"},
		{"7777777", "", "\na.go\n"},
		{"8888888", "changes nothing indexed", "\nmissing.go\n"},
		{"9999999", "sweeping change #5", "\n" + many},
		{"aaaaaaa", "Fix parsing again, aliases aliases", "\n b/c.py \n"},
	}
	var out bytes.Buffer
	out.WriteString("preamble without a record")
	for _, r := range recs {
		out.WriteString("\x00" + r.hash + "\x01" + r.msg + "\x02" + r.names)
	}
	out.WriteString("\x00truncated record without its marks")
	want := historyByMaps(ix, out.Bytes())
	ix.setHistory(out.Bytes())
	if !reflect.DeepEqual(ix.hist, want) {
		t.Errorf("setHistory:\n%+v\nwant (map of strings):\n%+v", ix.hist, want)
	}
	if n := ix.hist.commits(); n != 8 {
		t.Errorf("%d commits indexed, want 8", n)
	}
	ix.setCited(out.Bytes())
	wantCited := "1111111 Fix parsing of aliases\n4444444 unicode spaces\u2003\n" // FirstLine trims the message, not its line
	if ix.cited.subjects != wantCited {
		t.Errorf("cited subjects %q, want %q", ix.cited.subjects, wantCited)
	}
}

// BenchmarkHistoryApply indexes the history of the repository at
// PLANEX_BENCH_TREE (this module when unset) as a cold query does once
// the map is built: setHistory and setCited on readLogs' two logs.
func BenchmarkHistoryApply(b *testing.B) {
	root := os.Getenv("PLANEX_BENCH_TREE")
	if root == "" {
		root = "../.."
	}
	m, err := repomap.Build(context.Background(), root, repomap.Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	ix := NewIndex(m)
	hist, cited, err := readLogs(context.Background(), historySource{dir: root})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(hist) + len(cited)))
	b.ResetTimer()
	for range b.N {
		ix.setHistory(hist)
		ix.setCited(cited)
	}
}
