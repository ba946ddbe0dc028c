package locate

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
)

// postingsOf decodes a table of postings into term -> file -> count,
// failing on a list whose files do not strictly ascend.
func postingsOf(t *testing.T, name string, tb *table) map[string]map[int]uint32 {
	t.Helper()
	out := map[string]map[int]uint32{}
	for k := 0; k < tb.len(); k++ {
		term, files := tb.key(k), map[int]uint32{}
		last := -1
		eachPosting(tb.val(k), func(file int, count uint32) {
			if file <= last {
				t.Errorf("%s postings of %q: file %d after %d", name, term, file, last)
			}
			last = file
			files[file] = count
		})
		out[term] = files
	}
	return out
}

// refCounts adds the terms of text (as repomap.Terms yields them) for file
// to want and returns how many there were.
func refCounts(want map[string]map[int]uint32, file int, text string) uint32 {
	terms := repomap.Terms(text)
	for _, term := range terms {
		if want[term] == nil {
			want[term] = map[int]uint32{}
		}
		want[term][file]++
	}
	return uint32(len(terms))
}

// TestIndexPostingsMatchTerms checks the index built from a map of this
// repository against postings computed directly from repomap.Terms on each
// file's contents, path and symbol names: the map counts terms through
// per-worker vocabularies and the index through its own, and neither may
// change what ranking sees.
func TestIndexPostingsMatchTerms(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	m, err := repomap.Build(context.Background(), root, repomap.Options{NoCache: true, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) < 100 {
		t.Fatalf("map of %s has only %d files", root, len(m.Entries))
	}
	ix := NewIndex(m)
	content, paths, syms := map[string]map[int]uint32{}, map[string]map[int]uint32{}, map[string]map[int]uint32{}
	for i, f := range m.Entries {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range f.Symbols {
			names = append(names, s.Name)
		}
		e := ix.files[i]
		lengths := [3]uint32{e.length, e.pathLen, e.symLen}
		want := [3]uint32{
			refCounts(content, i, string(data)),
			refCounts(paths, i, strings.TrimSuffix(f.Path, path.Ext(f.Path))),
			// Names are separate words: a space joins them safely.
			refCounts(syms, i, strings.Join(names, " ")),
		}
		if lengths != want {
			t.Errorf("%s: content, path and symbol lengths %v, want %v", f.Path, lengths, want)
		}
	}
	for _, c := range []struct {
		name string
		tb   *table
		want map[string]map[int]uint32
	}{{"content", &ix.content, content}, {"path", &ix.pathTerms, paths}, {"symbol", &ix.symTerms, syms}} {
		got := postingsOf(t, c.name, c.tb)
		if !reflect.DeepEqual(got, c.want) {
			n := 0
			for term, files := range c.want {
				if !reflect.DeepEqual(got[term], files) && n < 5 {
					t.Errorf("%s postings of %q = %v, want %v", c.name, term, got[term], files)
					n++
				}
			}
			t.Errorf("%s postings differ: %d terms, want %d", c.name, len(got), len(c.want))
		}
	}
}

// TestSortedTerms checks that ordering ids by their terms' first eight
// bytes, then by the whole term, gives the order of the terms themselves:
// terms equal in their first eight bytes, one a prefix of another, the
// empty term, bytes above 0x7f and a zero byte.
func TestSortedTerms(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"short":          {"b", "a", "ab", "aa", "", "a\x00", "ba"},
		"shared prefix":  {"parserconfigb", "parserconfiga", "parserconfig", "parserconf", "parsercon", "parserconfigaa"},
		"high bytes":     {"caf\xc3\xa9", "cafe", "caf\xff", "caf", "\xffzz", "zz"},
		"eighth byte":    {"abcdefgh", "abcdefgi", "abcdefg", "abcdefgh0", "abcdefgg9"},
		"numbered terms": {"term10", "term9", "term100", "term1", "term09", "term0010"},
	}
	// Many terms, random in every byte of the prefix and past it, with
	// runs sharing their first eight bytes: every radix pass moves them.
	seed := uint64(7)
	random := func() uint64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return seed >> 24
	}
	seen := map[string]bool{}
	var many []string
	for len(many) < 20000 {
		b := make([]byte, random()%14)
		for i := range b {
			b[i] = byte(random())
			if random()%4 == 0 {
				b[i] = 'a' + byte(random()%3) // shared prefixes
			}
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			many = append(many, string(b))
		}
	}
	cases["random"] = many
	// Runs longer than a comparison sort's threshold sharing 8, 16 and
	// 24 bytes, and terms equal once padded with zeros ("ab", "ab\x00").
	var long []string
	for _, stem := range []string{"managercolumn", "managercolumnsegmentrow", "ab", "ab\x00", "ab\x00\x00\x00\x00\x00\x00", "abcdefgh\x00", "abcdefgh"} {
		long = append(long, stem)
		for i := range 300 {
			long = append(long, stem+strconv.Itoa(i*7919%1000), stem+"\x00"+strconv.Itoa(i))
		}
	}
	clear(seen)
	cases["long runs"] = slices.DeleteFunc(long, func(t string) bool {
		dup := seen[t]
		seen[t] = true
		return dup
	})
	cases["empty"] = nil
	cases["one"] = []string{"x"}
	for name, vocab := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := slices.Clone(vocab)
			slices.Sort(want)
			var got []string
			for _, id := range sortedTerms(vocab) {
				got = append(got, vocab[id])
			}
			if !slices.Equal(got, want) {
				t.Errorf("sorted %q, want %q", got, want)
			}
		})
	}
}

// TestBM25BestTerms checks the terms a BM25 note names, now kept as term
// numbers and spelled out only for the files explained, against each
// term's share scored alone: the file's four largest shares, largest
// first (an earlier term before a later one of equal share), none for a
// file that did not score.
func TestBM25BestTerms(t *testing.T) {
	t.Parallel()
	ix := NewIndex(buildProject(t))
	qts := queryTerms("metres feet inches convert length geojson shapes circle area units projection mercator latitude")
	scores, m := ix.bm25(qts, fieldContent, true)
	plain, none := ix.bm25(qts, fieldContent, false)
	if none != nil || !slices.Equal(plain, scores) {
		t.Fatalf("scoring without the best terms gave %v (%v), want %v", plain, none, scores)
	}
	n := len(ix.files)
	// Found for a few files, given out of order and twice, then for all.
	few := []int{n - 1, 2, 0, 2}
	_, some := ix.bm25(qts, fieldContent, true)
	some.find(few)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	m.find(all)
	for i := range ix.files {
		if got, want := some.terms(i), m.terms(i); !slices.Contains(few, i) && got != nil || slices.Contains(few, i) && !slices.Equal(got, want) {
			t.Errorf("%s: best terms found among a few files %q, among all %q", ix.files[i].path, got, want)
		}
	}
	shares := make([][]float32, n)
	for _, q := range qts {
		alone := make([]float32, n)
		if v := ix.content.get(q.term); v != nil {
			bm25Term(v, n, q.weight, func(i int) int { return int(ix.files[i].length) }, ix.avgContent, func(i int, s float64) { alone[i] = float32(s) })
		}
		for i := range shares {
			shares[i] = append(shares[i], alone[i])
		}
	}
	named := 0
	for i := range ix.files {
		order := make([]int, len(qts))
		for k := range order {
			order[k] = k
		}
		sort.SliceStable(order, func(a, b int) bool { return shares[i][order[a]] > shares[i][order[b]] })
		var want []string
		for _, k := range order {
			if len(want) < bm25Keep && shares[i][k] > 0 && scores[i] != 0 {
				want = append(want, qts[k].term)
			}
		}
		got := m.terms(i)
		if !slices.Equal(got, want) {
			t.Errorf("%s: best terms %q, want %q", ix.files[i].path, got, want)
		}
		if len(got) == bm25Keep {
			named++
		}
	}
	if named == 0 {
		t.Fatal("no file matched four query terms: the test checks no cut")
	}
	// Each field's scores are, to the bit, the sums bm25Term gives term
	// by term in the query's order.
	for _, fl := range []field{fieldContent, fieldPath, fieldSymbols} {
		tb, avg := fieldPostings(ix, fl)
		want := make([]float64, n)
		for _, q := range qts {
			if v := tb.get(q.term); v != nil {
				bm25Term(v, n, q.weight, func(i int) int { return int(ix.files[i].fieldLen(fl)) }, avg, func(i int, s float64) { want[i] += s })
			}
		}
		got, _ := ix.bm25(qts, fl, false)
		if !slices.Equal(got, want) || slices.Max(want) == 0 {
			t.Errorf("field %d: scores %v, want %v (term by term)", fl, got, want)
		}
	}
}

// TestSortedTermsEqualTermsByID checks that sortedTerms, given repeated
// terms (basesTable's file base names), orders equal terms by id, in the
// short runs sorted by comparison and in the long ones sorted by radix.
func TestSortedTermsEqualTermsByID(t *testing.T) {
	t.Parallel()
	short := make([]string, 30) // sorted by comparison alone
	for i := range short {
		short[i] = []string{"b", "a", "c"}[i*7%3]
	}
	var long []string
	for i := range 500 {
		// Runs longer than 32 of one term, of terms sharing eight-byte
		// prefixes, and of terms ending within them.
		long = append(long, []string{"mod.py", "__init__.py", "x", "handler_config_" + strconv.Itoa(i%3) + ".go", ""}[i%5])
	}
	for _, vocab := range [][]string{short, long} {
		checkSortedByID(t, vocab)
	}
}

// checkSortedByID checks sortedTerms(vocab) against a stable sort.
func checkSortedByID(t *testing.T, vocab []string) {
	t.Helper()
	got := sortedTerms(vocab)
	want := make([]uint32, len(vocab))
	for i := range want {
		want[i] = uint32(i)
	}
	slices.SortStableFunc(want, func(a, b uint32) int { return strings.Compare(vocab[a], vocab[b]) })
	if !slices.Equal(got, want) {
		t.Errorf("sorted ids %v, want %v", got, want)
	}
}

// TestBasesTableMatchesInterned compares basesTable, written from the
// files sorted by base name, with the same table built by interning the
// names (keyedTable, what it replaced): the same keys, and each key's
// files in file order.
func TestBasesTableMatchesInterned(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"empty":    nil,
		"one":      {"main.go"},
		"repeated": {"a/__init__.py", "a/b/__init__.py", "a/b/mod.py", "c/mod.py", "c/x.go", "d/__init__.py", "mod.py", "z/y/x.go"},
	}
	var many []string
	for i := range 3000 {
		many = append(many, "pkg"+strconv.Itoa(i%97)+"/file_"+strconv.Itoa(i%701)+".py")
	}
	slices.Sort(many)
	cases["many"] = slices.Compact(many)
	for name, paths := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := basesTable(len(paths), func(i int) string { return paths[i] })
			want := keyedTable(len(paths), func(i int) string { return path.Base(paths[i]) }, func(buf []byte, i int) []byte {
				return binary.AppendUvarint(buf, uint64(i))
			})
			if got.len() != want.len() {
				t.Fatalf("%d keys, want %d", got.len(), want.len())
			}
			for k := 0; k < want.len(); k++ {
				if got.key(k) != want.key(k) || !bytes.Equal(got.val(k), want.val(k)) {
					t.Errorf("key %d: %q %v, want %q %v", k, got.key(k), got.val(k), want.key(k), want.val(k))
				}
			}
		})
	}
}
