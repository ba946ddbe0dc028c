package repomap

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// termCounts counts text's terms as EachTerm yields them.
func termCounts(text []byte) (map[string]uint32, int) {
	counts := map[string]uint32{}
	n := 0
	EachTerm(text, func(t string) {
		counts[t]++
		n++
	})
	return counts, n
}

// bagCounts counts text's terms through v and a bag.
func bagCounts(v *vocabulary, b *termBag, text []byte) (map[string]uint32, int) {
	v.Add(b, text)
	n := b.Len
	counts := map[string]uint32{}
	b.Drain(func(id, c uint32) {
		if _, dup := counts[v.Terms()[id]]; dup {
			panic("term drained twice: " + v.Terms()[id])
		}
		counts[v.Terms()[id]] = c
	})
	return counts, n
}

// TestVocabularyMatchesTerms checks that counting through a vocabulary
// (which remembers each word's terms) gives every file of this module, and
// some awkward texts, exactly the terms and counts EachTerm gives.
func TestVocabularyMatchesTerms(t *testing.T) {
	texts := map[string][]byte{
		"camel":     []byte("getUserName parseHTTPRequest_v2 XMLServer aliases aliases"),
		"digits":    []byte("the 12345 of L031 x1 1x __ _a a_ _"),
		"bytes":     []byte("caf\xe9 ok \x00\xff na\xefve"),
		"long word": []byte(strings.Repeat("a", 64) + " " + strings.Repeat("b", 65) + " " + strings.Repeat("aB", 40)),
		"stems":     []byte("parsing parsed classes boxes libraries buses"),
	}
	files := 0
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		texts[p] = data
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d files found under ../..", files)
	}
	// One vocabulary for all texts, as a worker uses it: words learnt on
	// one file are reused on the next.
	v := newVocabulary()
	var b termBag
	for name, text := range texts {
		want, wantN := termCounts(text)
		got, gotN := bagCounts(v, &b, text)
		if gotN != wantN || !maps.Equal(got, want) {
			t.Errorf("%s: %d terms through the vocabulary, %d by EachTerm; counts equal: %v", name, gotN, wantN, maps.Equal(got, want))
		}
	}
	n := len(v.Terms())
	for id, term := range v.Terms() {
		if got := v.ID([]byte(term)); got != uint32(id) {
			t.Errorf("id of %q = %d; want %d", term, got, id)
		}
	}
	if len(v.Terms()) != n {
		t.Errorf("looking known terms up interned %d more", len(v.Terms())-n)
	}
}

// TestVocabularyTermTableGrows interns far more terms than the term
// table starts with, so it is regrown many times, and checks that every
// term keeps its id and is interned once.
func TestVocabularyTermTableGrows(t *testing.T) {
	t.Parallel()
	v := newVocabulary()
	const n = 200_000
	for i := range n {
		if id := v.ID(fmt.Appendf(nil, "term%d", i)); id != uint32(i) {
			t.Fatalf("new term %d got id %d", i, id)
		}
	}
	for i := range n {
		if id := v.ID(fmt.Appendf(nil, "term%d", i)); id != uint32(i) {
			t.Fatalf("known term %d got id %d", i, id)
		}
	}
	if len(v.Terms()) != n || 2*n > len(v.terms.slots) {
		t.Fatalf("%d terms in %d slots, want %d in at least twice as many", len(v.Terms()), len(v.terms.slots), n)
	}
}

func TestVocabularyMerge(t *testing.T) {
	a, b := newVocabulary(), newVocabulary()
	var bag termBag
	a.Add(&bag, []byte("alpha beta"))
	b.Add(&bag, []byte("gamma alpha"))
	ids := a.Merge(b)
	for local, term := range b.Terms() {
		if a.Terms()[ids[local]] != term {
			t.Errorf("merged id of %q names %q", term, a.Terms()[ids[local]])
		}
	}
	if len(a.Terms()) != 3 {
		t.Errorf("merged vocabulary has %d terms, want 3: %q", len(a.Terms()), a.Terms())
	}
}

func TestIdentByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		if identByte(byte(c)) != IsIdentByte(byte(c)) {
			t.Errorf("identByte(%q) = %v, IsIdentByte says %v", rune(c), identByte(byte(c)), IsIdentByte(byte(c)))
		}
	}
}

// TestRedTeamCollidingWordsStayApart: a repository's file holds 2^14
// distinct words built of the blocks "Aa" and "BB", which a hash computed
// as h*31 + byte gives one and the same value (so does any other
// unseeded, public hash for words an attacker computes offline). In an
// open-addressing table such words share one probe run, and each new
// word walks every earlier one: the map's build grows with the square of
// the file. Under the vocabulary's seeded hash the longest run of
// occupied slots stays short.
func TestRedTeamCollidingWordsStayApart(t *testing.T) {
	t.Parallel()
	const blocks = 14
	var text strings.Builder
	for n := 0; n < 1<<blocks; n++ {
		for b := 0; b < blocks; b++ {
			text.WriteString([]string{"Aa", "BB"}[n>>b&1])
		}
		text.WriteByte(' ')
	}
	v := newVocabulary()
	b := &termBag{}
	v.Add(b, []byte(text.String()))
	if v.nwords != 1<<blocks {
		t.Fatalf("the vocabulary learnt %d words, want %d", v.nwords, 1<<blocks)
	}
	longest, run := 0, 0
	for _, s := range append(v.words, v.words...) { // a run may wrap around
		if s.w1 == 0 {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	if longest > 256 {
		t.Errorf("%d words of equal scan hash made a probe run of %d slots (of %d), want a short one", 1<<blocks, longest, len(v.words))
	}
}

// TestTermNumbererMatchesTerms counts texts one after another through one
// TermNumberer and checks each text's terms, counts and total against
// EachTerm's, a term keeping its number from text to text.
func TestTermNumbererMatchesTerms(t *testing.T) {
	t.Parallel()
	n := NewTermNumberer()
	for _, text := range []string{
		"Fix parsing of aliases (#12)\n\nThe parser read aliases twice.",
		"",
		"getUserName parseHTTPRequest_v2 XMLServer aliases",
		"caf\xe9 na\xefve \x00 the of 12345 x1",
		"aliases parsing getUserName",
	} {
		want, wantN := termCounts([]byte(text))
		got := map[string]uint32{}
		gotN := n.Count([]byte(text), func(id, c uint32) {
			term := n.Terms()[id]
			if _, dup := got[term]; dup {
				t.Errorf("%q: term %q given twice", text, term)
			}
			got[term] = c
		})
		if gotN != wantN || !maps.Equal(got, want) {
			t.Errorf("%q: %d terms %v, EachTerm gives %d %v", text, gotN, got, wantN, want)
		}
	}
	seen := map[string]bool{}
	for _, term := range n.Terms() {
		if seen[term] {
			t.Errorf("term %q numbered twice", term)
		}
		seen[term] = true
	}
}
