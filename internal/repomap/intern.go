package repomap

import "hash/maphash"

// Interner numbers distinct strings in the order they are first seen. It
// finds a string by its hash (maphash under a seed of its own, so a
// repository's contents cannot choose strings that collide) in an
// open-addressing table of (hash, number+1) pairs kept at most half
// full: growing it moves eight bytes a slot and hashes no string again,
// where a Go map keyed by the strings rehashes every key as it grows.
// Only new strings are copied. An Interner is not safe for concurrent use.
type Interner struct {
	seed  maphash.Seed
	slots []wordSlot
	strs  []string
}

// NewInterner returns an empty Interner whose table starts with room for
// about half of slots (a power of two) strings.
func NewInterner(slots int) Interner {
	return Interner{seed: maphash.MakeSeed(), slots: make([]wordSlot, slots)}
}

// ID returns b's number, giving it the next one if it is new.
func (t *Interner) ID(b []byte) uint32 {
	h := uint32(maphash.Bytes(t.seed, b))
	slot, id, ok := t.find(h, string(b)) // no copy: only compared
	if ok {
		return id
	}
	return t.add(slot, h, string(b))
}

// IDString is ID for a string.
func (t *Interner) IDString(s string) uint32 {
	h := uint32(maphash.String(t.seed, s))
	slot, id, ok := t.find(h, s)
	if ok {
		return id
	}
	return t.add(slot, h, s)
}

// Strings returns the interned strings; a string's number is its index.
func (t *Interner) Strings() []string { return t.strs }

// find looks s (whose hash is h) up; when it is not known it returns the
// free slot it belongs in.
func (t *Interner) find(h uint32, s string) (slot int, id uint32, ok bool) {
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := t.slots[i]
		if e.w1 == 0 {
			return int(i), 0, false
		}
		if e.hash == h && t.strs[e.w1-1] == s {
			return int(i), e.w1 - 1, true
		}
	}
}

// add numbers s, which is not interned yet, in slot, the free slot find
// returned for it.
func (t *Interner) add(slot int, h uint32, s string) uint32 {
	id := uint32(len(t.strs))
	t.strs = append(t.strs, s)
	t.slots[slot] = wordSlot{hash: h, w1: id + 1}
	if 2*len(t.strs) > len(t.slots) {
		t.slots = regrow(t.slots)
	}
	return id
}
