package locate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/planexhq/planex/internal/plural"
)

// A saved index is read piecemeal: loading it reads the file table (every
// query needs each file's path, lengths and prior), the history's commit
// lists and, per term table, one key in every tableBlock; a lookup then
// reads the block of keys its term falls in and that term's postings, and
// the import graph is read a file at a time. So a query on a built index
// holds what its terms touch, not the whole file, whatever the
// repository's size.

// tableBlock is how many keys of a table one sampled key stands for: a
// lookup reads at most this many keys.
const tableBlock = 32

var (
	errShortIndex   = errors.New("index file is truncated")
	errIndexDamaged = errors.New("index file is damaged")
	// errFilesDisagree is a file table whose sections hold different
	// numbers of files.
	errFilesDisagree = errors.New("index sections disagree on the number of files")
)

// indexFile is an open index file read at offsets. A read that fails or
// falls outside the file records the first such error, which Rank
// returns, and yields nothing.
type indexFile struct {
	r      io.ReaderAt
	size   int64
	closer io.Closer

	mu  sync.Mutex
	err error
	// bytesRead counts what read returned, for the tests.
	bytesRead atomic.Int64
}

func (f *indexFile) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *indexFile) readErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// read returns the n bytes at off, or nil (the error recorded).
func (f *indexFile) read(off int64, n int) []byte {
	if off < 0 || n < 0 || off > f.size || int64(n) > f.size-off {
		f.fail(errShortIndex)
		return nil
	}
	buf := make([]byte, n)
	if n == 0 {
		return buf
	}
	if _, err := f.r.ReadAt(buf, off); err != nil {
		f.fail(fmt.Errorf("reading index: %w", err))
		return nil
	}
	f.bytesRead.Add(int64(n))
	return buf
}

// u32s reads n little-endian uint32s at off.
func (f *indexFile) u32s(off int64, n int) []uint32 {
	if n < 0 || int64(n) > f.size/4 {
		f.fail(errShortIndex)
		return nil
	}
	b := f.read(off, 4*n)
	if b == nil {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// readBlock is how many bytes readString and eachU32 read at a time.
const readBlock = 64 << 10

// readString returns the n bytes at off as a string, or "" (the error
// recorded). The bytes are copied once, into the string, through a
// buffer of at most readBlock bytes: read then converted, a file table's
// paths (3.5 MB at 100,000 files) were held twice while it loaded.
func (f *indexFile) readString(off int64, n int) string {
	if off < 0 || n < 0 || off > f.size || int64(n) > f.size-off {
		f.fail(errShortIndex)
		return ""
	}
	var sb strings.Builder
	sb.Grow(n)
	buf := make([]byte, min(n, readBlock))
	for done := 0; done < n; {
		part := buf[:min(len(buf), n-done)]
		if _, err := f.r.ReadAt(part, off+int64(done)); err != nil {
			f.fail(fmt.Errorf("reading index: %w", err))
			return ""
		}
		sb.Write(part)
		done += len(part)
	}
	f.bytesRead.Add(int64(n))
	return sb.String()
}

// eachU32 calls fn with the place and value of each of the n
// little-endian uint32s at off, in order, reading readBlock bytes at a
// time, until fn returns false; it reports whether every value was read
// and accepted (a failed read is recorded). A column read this way into
// where it is kept allocates no array of its own.
func (f *indexFile) eachU32(off int64, n int, fn func(i int, v uint32) bool) bool {
	if off < 0 || n < 0 || int64(n) > f.size/4 || off > f.size || 4*int64(n) > f.size-off {
		f.fail(errShortIndex)
		return false
	}
	buf := make([]byte, min(4*n, readBlock))
	for i := 0; i < n; {
		part := buf[:min(len(buf), 4*(n-i))]
		if _, err := f.r.ReadAt(part, off+4*int64(i)); err != nil {
			f.fail(fmt.Errorf("reading index: %w", err))
			return false
		}
		f.bytesRead.Add(int64(len(part)))
		for k := 0; k < len(part); k, i = k+4, i+1 {
			if !fn(i, binary.LittleEndian.Uint32(part[k:])) {
				return false
			}
		}
	}
	return true
}

// ascending reports whether offs never decrease and stay within limit.
func ascending(offs []uint32, limit uint32) bool {
	for i, o := range offs {
		if o > limit || (i > 0 && o < offs[i-1]) {
			return false
		}
	}
	return true
}

// diskTable is a table left in its index file: n entries whose key
// section, key offsets, value section and value offsets start at the
// given positions, and in memory every tableBlock-th key (sample).
type diskTable struct {
	f                              *indexFile
	n                              int
	keysAt, koffAt, valsAt, voffAt int64
	keysLen, valsLen               uint32
	sample                         table
}

func (d *diskTable) get(k string) []byte {
	// The block is the one whose first key is the last sampled key not
	// above k.
	b := sort.Search(d.sample.len(), func(i int) bool { return d.sample.key(i) > k }) - 1
	lo := b * tableBlock
	if b < 0 || lo >= d.n {
		return nil
	}
	hi := min(lo+tableBlock, d.n)
	koff := d.f.u32s(d.koffAt+4*int64(lo), hi-lo+1)
	if koff == nil {
		return nil
	}
	if !ascending(koff, d.keysLen) {
		d.f.fail(errIndexDamaged)
		return nil
	}
	keys := d.f.read(d.keysAt+int64(koff[0]), int(koff[hi-lo]-koff[0]))
	if keys == nil {
		return nil
	}
	key := func(i int) string { return string(keys[koff[i]-koff[0] : koff[i+1]-koff[0]]) }
	i := sort.Search(hi-lo, func(i int) bool { return key(i) >= k })
	if i == hi-lo || key(i) != k {
		return nil
	}
	voff := d.f.u32s(d.voffAt+4*int64(lo+i), 2)
	if voff == nil {
		return nil
	}
	if !ascending(voff, d.valsLen) {
		d.f.fail(errIndexDamaged)
		return nil
	}
	return d.f.read(d.valsAt+int64(voff[0]), int(voff[1]-voff[0]))
}

// diskLists are adjacency lists left in the index file (the import
// graph): row r's entries are to[off[r]:off[r+1]], each a file below n.
type diskLists struct {
	f           *indexFile
	rows, n     int
	offAt, toAt int64
	toLen       uint32
}

func (l *diskLists) row(r int) []uint32 {
	if l == nil || r < 0 || r >= l.rows {
		return nil
	}
	off := l.f.u32s(l.offAt+4*int64(r), 2)
	if off == nil {
		return nil
	}
	if !ascending(off, l.toLen) {
		l.f.fail(errIndexDamaged)
		return nil
	}
	to := l.f.u32s(l.toAt+4*int64(off[0]), int(off[1]-off[0]))
	for _, j := range to {
		if int(j) >= l.n {
			l.f.fail(errIndexDamaged)
			return nil
		}
	}
	return to
}

// cursor walks an index file's sections in order; the first error sticks.
type cursor struct {
	f   *indexFile
	pos int64
	err error
}

func (c *cursor) u32() uint32 {
	v := c.f.u32s(c.pos, 1)
	if v == nil {
		c.err = errShortIndex
		return 0
	}
	c.pos += 4
	return v[0]
}

// skip passes over a section of count items of width bytes each,
// returning where its items start and how many there are.
func (c *cursor) skip(width int64) (at int64, count int) {
	count = int(c.u32())
	at = c.pos
	// A count past int's range on a 32-bit platform reads as negative.
	if c.err == nil && (count < 0 || int64(count) > (c.f.size-at)/width) {
		c.err = errShortIndex
	}
	if c.err != nil {
		return 0, 0
	}
	c.pos += int64(count) * width
	return at, count
}

func (c *cursor) bytes() []byte {
	at, n := c.skip(1)
	if c.err != nil {
		return nil
	}
	b := c.f.read(at, n)
	if b == nil {
		c.err = errShortIndex
	}
	return b
}

func (c *cursor) str() string {
	at, n := c.skip(1)
	if c.err != nil {
		return ""
	}
	s := c.f.readString(at, n)
	if len(s) != n {
		c.err = errShortIndex
	}
	return s
}

// column reads a section of n uint32s, calling fn with each (see
// eachU32); a section of another length is an error.
func (c *cursor) column(n int, fn func(i int, v uint32) bool) {
	at, count := c.skip(4)
	switch {
	case c.err != nil:
	case count != n:
		c.err = errFilesDisagree
	case !c.f.eachU32(at, n, fn):
		c.err = errIndexDamaged
		if err := c.f.readErr(); err != nil {
			c.err = err
		}
	}
}

func (c *cursor) u32s() []uint32 {
	at, n := c.skip(4)
	if c.err != nil {
		return nil
	}
	v := c.f.u32s(at, n)
	if v == nil {
		c.err = errShortIndex
	}
	return v
}

// table passes over a table the encoder wrote, reading only its sample.
func (c *cursor) table() table {
	d := &diskTable{f: c.f}
	var keysLen, koffs, valsLen, voffs int
	d.keysAt, keysLen = c.skip(1)
	d.koffAt, koffs = c.skip(4)
	d.valsAt, valsLen = c.skip(1)
	d.voffAt, voffs = c.skip(4)
	d.sample = table{keys: c.str(), koff: c.u32s()}
	if c.err != nil {
		return table{}
	}
	d.n, d.keysLen, d.valsLen = koffs-1, uint32(keysLen), uint32(valsLen)
	s := &d.sample
	if koffs == 0 || koffs != voffs || len(s.koff) != (d.n+tableBlock-1)/tableBlock+1 ||
		!ascending(s.koff, uint32(len(s.keys))) || s.koff[len(s.koff)-1] != uint32(len(s.keys)) {
		c.err = fmt.Errorf("index table is inconsistent (%d keys, %d values, %d sampled)", koffs, voffs, len(s.koff))
		return table{}
	}
	return table{disk: d}
}

// lists passes over adjacency lists of rows rows whose entries are files
// below n, reading none of them.
func (c *cursor) lists(rows, n int) *diskLists {
	l := &diskLists{f: c.f, rows: rows, n: n}
	var offs, tos int
	l.offAt, offs = c.skip(4)
	l.toAt, tos = c.skip(4)
	l.toLen = uint32(tos)
	if c.err == nil && offs != rows+1 {
		c.err = fmt.Errorf("index import graph: %s for %s", plural.Count(offs, "offset", "offsets"), plural.Count(rows, "file", "files"))
	}
	return l
}

// appendSample writes t's sample: every tableBlock-th key, as a table of
// keys without values.
func (e *encoder) sample(t table) {
	var keys []byte
	koff := []uint32{0}
	for i := 0; i < t.len(); i += tableBlock {
		keys = append(keys, t.key(i)...)
		koff = append(koff, uint32(len(keys)))
	}
	e.bytes(keys)
	e.u32s(koff)
}
