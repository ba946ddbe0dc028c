package repomap

// Vocabulary interns index terms as dense ids and remembers which terms
// each word of the text yields. Source code repeats its words, so folding,
// splitting, stemming and interning run once per distinct word instead of
// once per occurrence; every later occurrence costs one lookup. A
// Vocabulary is not safe for concurrent use: give each goroutine its own.
type Vocabulary struct {
	ids   map[string]uint32
	terms []string
	// words maps a word (a run of identifier bytes, as written) to its
	// entry in wordIDs: the number of terms, then their ids.
	words   map[string]uint32
	wordIDs []uint32
	scratch termScratch
}

// NewVocabulary returns an empty vocabulary.
func NewVocabulary() *Vocabulary {
	return &Vocabulary{ids: make(map[string]uint32, 1<<12), words: make(map[string]uint32, 1<<12)}
}

// Terms returns the interned terms; a term's id is its index.
func (v *Vocabulary) Terms() []string { return v.terms }

// Len is the number of terms interned so far.
func (v *Vocabulary) Len() int { return len(v.terms) }

// ID returns the id of term, interning it if it is new.
func (v *Vocabulary) ID(term []byte) uint32 {
	// Look up without allocating; only new terms become strings.
	if id, ok := v.ids[string(term)]; ok {
		return id
	}
	return v.intern(string(term))
}

// intern adds a term that is not in the vocabulary yet.
func (v *Vocabulary) intern(term string) uint32 {
	id := uint32(len(v.terms))
	v.ids[term] = id
	v.terms = append(v.terms, term)
	return id
}

// Merge interns other's terms and returns, for each of other's ids, the
// same term's id here.
func (v *Vocabulary) Merge(other *Vocabulary) []uint32 {
	ids := make([]uint32, len(other.terms))
	for local, t := range other.terms {
		id, ok := v.ids[t]
		if !ok {
			id = v.intern(t)
		}
		ids[local] = id
	}
	return ids
}

// Lookup returns the id of term if it has been interned.
func (v *Vocabulary) Lookup(term string) (uint32, bool) {
	id, ok := v.ids[term]
	return id, ok
}

// Add counts the terms of text (those EachTerm yields) into b.
func (v *Vocabulary) Add(b *Bag, text []byte) {
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
		at, ok := v.words[string(word)]
		if !ok {
			at = v.learn(word)
		}
		n := v.wordIDs[at]
		for _, id := range v.wordIDs[at+1 : at+1+n] {
			b.add(id)
		}
	}
}

// learn records the terms of a word seen for the first time.
func (v *Vocabulary) learn(word []byte) uint32 {
	at := uint32(len(v.wordIDs))
	v.wordIDs = append(v.wordIDs, 0)
	v.scratch.word(word, func(t []byte) {
		v.wordIDs = append(v.wordIDs, v.ID(t))
		v.wordIDs[at]++
	})
	v.words[string(word)] = at
	return at
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

// Bag counts the terms of one document (a file's contents, its path, its
// symbol names) by vocabulary id.
type Bag struct {
	counts  []uint32
	touched []uint32
	// Len is the number of term occurrences counted.
	Len int
}

func (b *Bag) add(id uint32) {
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
func (b *Bag) Drain(fn func(id, count uint32)) {
	for _, id := range b.touched {
		fn(id, b.counts[id])
		b.counts[id] = 0
	}
	b.touched = b.touched[:0]
	b.Len = 0
}

// Distinct is the number of distinct terms counted.
func (b *Bag) Distinct() int { return len(b.touched) }
