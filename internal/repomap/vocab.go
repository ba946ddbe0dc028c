package repomap

import "hash/maphash"

// vocabulary interns index terms as dense ids and remembers which terms
// each word of the text yields. Source code repeats its words, so folding,
// splitting, stemming and interning run once per distinct word instead of
// once per occurrence; every later occurrence costs one lookup. A
// vocabulary is not safe for concurrent use: give each goroutine its own.
type vocabulary struct {
	// terms numbers the index terms; words are hashed under its seed.
	terms Interner
	// words finds a word (a run of identifier bytes, as written) by its
	// hash; word w's terms' ids are wordIDs[wordStart[w]:wordStart[w+1]]
	// and its text wordText[wordEnd[w-1]:wordEnd[w]] (from 0 for the
	// first): one buffer for every word's text, not a string each.
	words     []wordSlot
	nwords    int
	wordText  []byte
	wordEnd   []int
	wordStart []uint32
	wordIDs   []uint32
	scratch   termScratch
}

// newVocabulary returns an empty vocabulary.
func newVocabulary() *vocabulary {
	return &vocabulary{terms: NewInterner(1 << 13), words: make([]wordSlot, 1<<12), wordStart: []uint32{0}}
}

// Terms returns the interned terms; a term's id is its index.
func (v *vocabulary) Terms() []string { return v.terms.Strings() }

// ID returns the id of term, interning it if it is new.
func (v *vocabulary) ID(term []byte) uint32 { return v.terms.ID(term) }

// Merge interns other's terms and returns, for each of other's ids, the
// same term's id here.
func (v *vocabulary) Merge(other *vocabulary) []uint32 {
	ids := make([]uint32, len(other.Terms()))
	for local, t := range other.Terms() {
		ids[local] = v.terms.IDString(t)
	}
	return ids
}

// Add counts the terms of text (those EachTerm yields) into b.
func (v *vocabulary) Add(b *termBag, text []byte) {
	i := 0
	for i < len(text) {
		if !identByte(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && identByte(text[j]) {
			j++
		}
		word := text[i:j]
		i = j
		if len(word) < 2 || len(word) > 64 {
			// Such words yield no terms (see termScratch.word).
			continue
		}
		w := v.word(word)
		for _, id := range v.wordIDs[v.wordStart[w]:v.wordStart[w+1]] {
			b.add(id)
		}
	}
}

// wordSlot is an entry of vocabulary.words: a word's hash and its
// number plus one (0 marks a free slot).
type wordSlot struct{ hash, w1 uint32 }

// word returns the number of word, learning it if it is new. Words are
// found by open addressing (linear probing, at most half full) rather
// than in a Go map: this is the innermost lookup of a cold map, once per
// word of every file. The hash is maphash under the vocabulary's seed: a
// hash computed while scanning (h*31 + byte) let a repository fill one
// probe run with words of equal hash ("Aa" and "BB" collide, so do all
// their concatenations), making each new word walk every earlier one.
func (v *vocabulary) word(word []byte) uint32 {
	h := uint32(maphash.Bytes(v.terms.seed, word))
	mask := uint32(len(v.words) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := v.words[i]
		if s.w1 == 0 {
			w := v.learn(word)
			v.words[i] = wordSlot{hash: h, w1: w + 1}
			if v.nwords++; 2*v.nwords > len(v.words) {
				v.growWords()
			}
			return w
		}
		if s.hash == h && string(v.wordAt(s.w1-1)) == string(word) {
			return s.w1 - 1
		}
	}
}

// wordAt is the text of word w.
func (v *vocabulary) wordAt(w uint32) []byte {
	start := 0
	if w > 0 {
		start = v.wordEnd[w-1]
	}
	return v.wordText[start:v.wordEnd[w]]
}

// growWords doubles the word table.
func (v *vocabulary) growWords() { v.words = regrow(v.words) }

// regrow returns an open-addressing table twice the size of old holding
// old's entries, placed by the hashes they keep.
func regrow(old []wordSlot) []wordSlot {
	table := make([]wordSlot, 2*len(old))
	mask := uint32(len(table) - 1)
	for _, s := range old {
		if s.w1 == 0 {
			continue
		}
		i := s.hash & mask
		for table[i].w1 != 0 {
			i = (i + 1) & mask
		}
		table[i] = s
	}
	return table
}

// forgetWords drops what the vocabulary remembers about words, keeping
// its terms: once a map's files are counted only the terms are needed.
func (v *vocabulary) forgetWords() {
	v.words, v.wordText, v.wordEnd, v.wordStart, v.wordIDs = nil, nil, nil, nil, nil
}

// learn records the terms of a word seen for the first time.
func (v *vocabulary) learn(word []byte) uint32 {
	w := uint32(len(v.wordEnd))
	v.scratch.word(word, func(t []byte) { v.wordIDs = append(v.wordIDs, v.ID(t)) })
	v.wordText = append(v.wordText, word...)
	v.wordEnd = append(v.wordEnd, len(v.wordText))
	v.wordStart = append(v.wordStart, uint32(len(v.wordIDs)))
	return w
}

// identByte is IsIdentByte as two bit sets, for the innermost loop.
func identByte(c byte) bool {
	const (
		// Digits (48-57) among bytes 0-63.
		low = (1<<10 - 1) << 48
		// Upper case (65-90), '_' (95) and lower case (97-122) among
		// bytes 64-127.
		high = (1<<26-1)<<1 | 1<<31 | (1<<26-1)<<33
	)
	if c < 64 {
		return low>>c&1 != 0
	}
	return c < 128 && high>>(c-64)&1 != 0
}

// termBag counts the terms of one document (a file's contents, its path, its
// symbol names) by vocabulary id.
type termBag struct {
	counts  []uint32
	touched []uint32
	// Len is the number of term occurrences counted.
	Len int
}

func (b *termBag) add(id uint32) {
	if int(id) >= len(b.counts) {
		b.counts = append(b.counts, make([]uint32, int(id)+1-len(b.counts))...)
	}
	if b.counts[id] == 0 {
		b.touched = append(b.touched, id)
	}
	b.counts[id]++
	b.Len++
}

// Drain calls fn with each distinct term counted, in the order each was
// first seen, and empties the bag.
func (b *termBag) Drain(fn func(id, count uint32)) {
	for _, id := range b.touched {
		fn(id, b.counts[id])
		b.counts[id] = 0
	}
	b.touched = b.touched[:0]
	b.Len = 0
}

// packedLen is the length drainCounts packs the bag into.
func (b *termBag) packedLen() int {
	n := 0
	for _, id := range b.touched {
		n += countLen(id, b.counts[id])
	}
	return n
}

// Distinct is the number of distinct terms counted.
func (b *termBag) Distinct() int { return len(b.touched) }

// TermNumberer counts the terms of texts as EachTerm yields them and
// numbers them in the order first met, for a caller outside the map (the
// history's commit messages): like a worker's vocabulary, it folds,
// splits and stems each distinct word once, not at every occurrence,
// and makes no string a term but the first. Not safe for concurrent use.
type TermNumberer struct {
	v   *vocabulary
	bag termBag
}

// NewTermNumberer returns a TermNumberer that has met no term.
func NewTermNumberer() *TermNumberer { return &TermNumberer{v: newVocabulary()} }

// Count calls fn with the number and count of each distinct term of text,
// in the order text first yields them, and returns how many terms text
// yields, repeats included.
func (n *TermNumberer) Count(text []byte, fn func(id, count uint32)) int {
	n.v.Add(&n.bag, text)
	total := n.bag.Len
	n.bag.Drain(fn)
	return total
}

// Terms are the terms met so far; a term's number is its index.
func (n *TermNumberer) Terms() []string { return n.v.Terms() }
