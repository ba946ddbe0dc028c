package locate

import (
	"encoding/binary"
	"io"
	"slices"
	"sort"
	"strings"
)

// table maps sorted string keys to opaque byte values. It is the unit of the
// on-disk index. A table NewIndex builds is held in memory; one loaded
// from an index file stays there (disk) and a lookup reads only the block
// of keys its term falls in and that term's value (see diskTable).
type table struct {
	keys string   // keys concatenated, in sorted order
	koff []uint32 // key i is keys[koff[i]:koff[i+1]]
	vals []byte
	voff []uint32
	// disk, when set, answers get from an index file; the fields above
	// are then empty.
	disk *diskTable
}

func (t *table) len() int { return len(t.koff) - 1 }

func (t *table) key(i int) string { return t.keys[t.koff[i]:t.koff[i+1]] }

func (t *table) val(i int) []byte { return t.vals[t.voff[i]:t.voff[i+1]] }

// get returns the value stored under k, or nil.
func (t *table) get(k string) []byte {
	if t.disk != nil {
		return t.disk.get(k)
	}
	if t.len() <= 0 {
		return nil
	}
	i := sort.Search(t.len(), func(i int) bool { return t.key(i) >= k })
	if i < t.len() && t.key(i) == k {
		return t.val(i)
	}
	return nil
}

// tableBuilder collects values per key; build sorts the keys.
type tableBuilder map[string][]byte

func (b tableBuilder) build() table {
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return sortedTable(len(keys), func(i int) string { return keys[i] }, func(i int) []byte { return b[keys[i]] })
}

// sortedTable builds a table of n entries whose keys come in ascending
// order without repeats.
func sortedTable(n int, key func(int) string, val func(int) []byte) table {
	klen, vlen := 0, 0
	for i := 0; i < n; i++ {
		klen += len(key(i))
		vlen += len(val(i))
	}
	t := table{koff: make([]uint32, 1, n+1), voff: make([]uint32, 1, n+1), vals: make([]byte, 0, vlen)}
	var sb strings.Builder
	sb.Grow(klen)
	for i := 0; i < n; i++ {
		sb.WriteString(key(i))
		t.koff = append(t.koff, uint32(sb.Len()))
		t.vals = append(t.vals, val(i)...)
		t.voff = append(t.voff, uint32(len(t.vals)))
	}
	t.keys = sb.String()
	return t
}

// postings are (file, count) pairs, files ascending, varint coded with the
// file as a delta.
func appendPosting(buf []byte, last *int, file int, count uint32) []byte {
	buf = binary.AppendUvarint(buf, uint64(file-*last))
	*last = file
	return binary.AppendUvarint(buf, uint64(count))
}

// eachPosting decodes a postings value.
func eachPosting(v []byte, fn func(file int, count uint32)) {
	file := 0
	for len(v) > 0 {
		d, n := binary.Uvarint(v)
		if n <= 0 {
			return
		}
		v = v[n:]
		c, n := binary.Uvarint(v)
		if n <= 0 {
			return
		}
		v = v[n:]
		file += int(d)
		fn(file, uint32(c))
	}
}

// encoder writes the index file: length-prefixed sections, little endian.
// With w set, what it has encoded goes to w whenever buf holds
// encoderFlush bytes, and a long string or byte section goes to w
// directly: the sections a cold query writes (file table, import graph,
// name tables) are never held whole in buf, nor regrown into it (at
// 100,000 files that growth allocated 45 MB, at the build's peak). The
// first error writing stops the writes; err reports it.
type encoder struct {
	buf []byte
	w   io.Writer
	err error
}

// encoderFlush is how many bytes an encoder with a writer keeps before
// writing them.
const encoderFlush = 64 << 10

// spill writes buf to w once it holds encoderFlush bytes (never without w).
func (e *encoder) spill() {
	if e.w != nil && len(e.buf) >= encoderFlush {
		e.flush()
	}
}

// flush writes buf to w and empties it.
func (e *encoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) u32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }

func (e *encoder) u32s(vs []uint32) {
	e.u32(uint32(len(vs)))
	for len(vs) > 0 {
		block := vs[:min(len(vs), encoderFlush/4)]
		vs = vs[len(block):]
		off := len(e.buf)
		e.buf = slices.Grow(e.buf, 4*len(block))[:off+4*len(block)]
		for i, v := range block {
			binary.LittleEndian.PutUint32(e.buf[off+4*i:], v)
		}
		e.spill()
	}
}

// u32Each writes n values, the i-th at(i), as u32s would write them in
// a slice, without the slice.
func (e *encoder) u32Each(n int, at func(i int) uint32) {
	e.u32(uint32(n))
	for i := range n {
		e.u32(at(i))
		e.spill()
	}
}

func (e *encoder) bytes(b []byte) {
	e.u32(uint32(len(b)))
	if e.w != nil && len(b) >= encoderFlush {
		e.flush()
		if e.err == nil {
			_, e.err = e.w.Write(b)
		}
		return
	}
	e.buf = append(e.buf, b...)
	e.spill()
}

func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.rawString(s)
}

// rawString appends s without a length, or writes it straight to w when
// it is long.
func (e *encoder) rawString(s string) {
	if e.w != nil && len(s) >= encoderFlush {
		e.flush()
		if e.err == nil {
			_, e.err = io.WriteString(e.w, s)
		}
		return
	}
	e.buf = append(e.buf, s...)
	e.spill()
}

// tableSize is how many bytes table writes for t, its sample aside
// (sample keys are a small share of the keys).
func tableSize(t table) int {
	return 24 + len(t.keys)*(tableBlock+1)/tableBlock + len(t.vals) + 4*(len(t.koff)+len(t.voff)+len(t.koff)/tableBlock+1)
}

// table writes t's sections, then its sample (see cursor.table).
func (e *encoder) table(t table) {
	e.str(t.keys)
	e.u32s(t.koff)
	e.bytes(t.vals)
	e.u32s(t.voff)
	e.sample(t)
}
