package locate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A cold query writes the index file without holding the index's term
// tables whole: each chunk of files the map hands over (repomap.Stream)
// is inverted into small tables, written as a run to a spill file, and
// freed; once every chunk is written the runs of each table are merged in
// key order into the table's sections, which are then copied into the
// index file. The file is byte for byte the one NewIndex and encode
// write: a run holds its chunk's postings with the chunk's own file
// numbers, and the merge renumbers them (see spill.merge).

// spillKind says how a table's values name files, so the merge can
// renumber them.
type spillKind uint8

const (
	// spillPostings are postings (appendPosting): file deltas.
	spillPostings spillKind = iota
	// spillDefs are definitions (appendDef): each names its file.
	spillDefs
)

// spill is one table's runs, all in one temporary file.
type spill struct {
	kind spillKind
	f    *os.File
	w    *bufio.Writer
	size int64
	runs []spillRun
	// fanIn is the most runs one merge reads at once (maxFanIn but in
	// tests).
	fanIn int
}

// maxFanIn bounds how many runs a merge reads at once, each through its
// own buffer: a table with more runs (one per chunk, so more than 64
// chunks of files) is first merged a group of runs at a time into fewer,
// longer runs (see spill.reduce), so the merge's memory is bounded
// whatever the tree's size.
const maxFanIn = 64

// spillRun is one chunk's table: its bytes in the spill file and the
// number the chunk's first file has in the index.
type spillRun struct {
	off, end int64
	first    int
}

// newSpill creates a spill of kind in dir (a private directory the
// caller removes).
func newSpill(dir string, kind spillKind) (*spill, error) {
	f, err := createTemp(dir, "run-*")
	if err != nil {
		return nil, err
	}
	return &spill{kind: kind, f: f, w: bufio.NewWriterSize(f, 32<<10), fanIn: maxFanIn}, nil
}

// createTemp creates a new file in dir, exclusively: a name that exists
// (a link planted there included) is never opened.
func createTemp(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("creating a temporary index file: %w", err)
	}
	return f, nil
}

// add writes t, the table of the chunk whose first file is first, as a
// run: per key its length and bytes, its value's length and bytes and,
// for postings, the chunk's number of the key's last file: lasts[i] for
// key i, or read from the postings when lasts is nil.
func (s *spill) add(t table, lasts []int32, first int) error {
	start := s.size
	var hdr []byte
	for i := 0; i < t.len(); i++ {
		k, v := t.key(i), t.val(i)
		last := 0
		switch {
		case s.kind != spillPostings:
		case lasts != nil:
			last = int(lasts[i])
		default:
			eachPosting(v, func(f int, _ uint32) { last = f })
		}
		var err error
		if hdr, err = spillEntry(s, hdr, k, v, last); err != nil {
			return err
		}
	}
	s.runs = append(s.runs, spillRun{off: start, end: s.size, first: first})
	return nil
}

// spillEntry writes one key and its value (and for postings the run's
// number of the key's last file) to the run of s being written; hdr is
// scratch space, returned for reuse. A key is a table's string or a
// merge's bytes, neither copied.
func spillEntry[K string | []byte](s *spill, hdr []byte, k K, v []byte, last int) ([]byte, error) {
	hdr = binary.AppendUvarint(hdr[:0], uint64(len(k)))
	hdr = append(hdr, k...)
	hdr = binary.AppendUvarint(hdr, uint64(len(v)))
	if err := s.write(hdr); err != nil {
		return hdr, err
	}
	if err := s.write(v); err != nil {
		return hdr, err
	}
	if s.kind == spillPostings {
		if err := s.write(binary.AppendUvarint(hdr[:0], uint64(last))); err != nil {
			return hdr, err
		}
	}
	return hdr, nil
}

func (s *spill) write(b []byte) error {
	n, err := s.w.Write(b)
	s.size += int64(n)
	if err != nil {
		return fmt.Errorf("writing a temporary index file: %w", err)
	}
	return nil
}

// runReader reads one run's entries in order.
type runReader struct {
	r     *bufio.Reader
	kind  spillKind
	first int
	seq   int
	key   []byte
	// pre is key's first eight bytes as a big-endian number, zero-padded:
	// two keys whose pre differ compare as their pre do, so most of the
	// merge's comparisons are one of integers (see runHeap.less).
	pre  uint64
	val  []byte
	last int
	done bool
}

// next reads the run's next entry, or sets done at its end.
func (r *runReader) next() error {
	klen, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
		r.done = true
		return nil
	}
	if err != nil {
		return r.damaged(err)
	}
	if r.key, err = readN(r.r, r.key, klen); err != nil {
		return r.damaged(err)
	}
	r.pre = keyPrefix(r.key)
	vlen, err := binary.ReadUvarint(r.r)
	if err != nil {
		return r.damaged(err)
	}
	if r.val, err = readN(r.r, r.val, vlen); err != nil {
		return r.damaged(err)
	}
	if r.kind == spillPostings {
		last, err := binary.ReadUvarint(r.r)
		if err != nil {
			return r.damaged(err)
		}
		r.last = int(last)
	}
	return nil
}

func (r *runReader) damaged(err error) error {
	return fmt.Errorf("reading a temporary index file: %w", err)
}

// maxSpillItem bounds a key or value read back from a run: the run was
// written by this process, so a larger length means a damaged file.
const maxSpillItem = 1 << 30

// readN reads n bytes into buf's storage.
func readN(r io.Reader, buf []byte, n uint64) ([]byte, error) {
	if n > maxSpillItem {
		return buf, errIndexDamaged
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, err
}

// runHeap orders run readers by their current key, then by run (chunk)
// order, so a key's values come out in file order. It is a binary heap
// with the least reader first, written out rather than through
// container/heap: the merge moves its root once per entry of every run,
// and each move made several calls through the heap.Interface.
type runHeap []*runReader

func (h runHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	if a.pre != b.pre {
		return a.pre < b.pre
	}
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

// keyPrefix is key's first eight bytes as a big-endian number, the bytes
// past its end zero. Where two prefixes differ they order as the keys do:
// either both keys have a byte there, or the shorter key ends there and
// so is a prefix of the other, and its padding zero is less than the
// other's byte, which is not zero or the prefixes would not differ there.
func keyPrefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var p uint64
	for i, c := range key {
		p |= uint64(c) << (56 - 8*i)
	}
	return p
}

// down moves the reader at i down to its place.
func (h runHeap) down(i int) {
	for {
		j := 2*i + 1
		if j >= len(h) {
			return
		}
		if r := j + 1; r < len(h) && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// heapify orders the whole heap.
func (h runHeap) heapify() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// popRoot removes the least reader.
func (h *runHeap) popRoot() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	old[n] = nil
	*h = old[:n]
	h.down(0)
}

// readers opens a reader on each of runs, whose files are numbered from
// base in what the merge writes.
func (s *spill) readers(runs []spillRun, base int) (runHeap, error) {
	h := make(runHeap, 0, len(runs))
	for i, run := range runs {
		r := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, run.off, run.end-run.off), 8<<10),
			kind: s.kind, first: run.first - base, seq: i}
		if err := r.next(); err != nil {
			return nil, err
		}
		if !r.done {
			h = append(h, r)
		}
	}
	h.heapify()
	return h, nil
}

// merge merges the runs into out's sections, in key order, each key's
// values in file order with their files renumbered. More runs than the
// fan-in are first reduced to fewer (see reduce).
func (s *spill) merge(out *tableOut) error {
	fan := max(s.fanIn, 2)
	for len(s.runs) > fan {
		if err := s.reduce(fan); err != nil {
			return err
		}
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing a temporary index file: %w", err)
	}
	return s.mergeRuns(s.runs, 0, func(key, val []byte, _ int) error { return out.add(key, val) })
}

// reduce merges groups of at most fan (at least 2) consecutive runs, from
// the first, each into one run appended to the spill's own file, until
// no more than fan runs are left or every run was read once: only the
// runs the fan-in requires are read and written again (37 of 100 at
// 100,000 files, where merging every group rewrote all 100), and the
// runs left alone are not copied. A group's files are numbered from its
// first run's, so the final merge renumbers them as it would the group's
// runs. The merged runs' old bytes stay in the file, which lives in the
// build's private directory until the index is saved.
func (s *spill) reduce(fan int) error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing a temporary index file: %w", err)
	}
	var hdr []byte
	var runs []spillRun
	excess, i := len(s.runs)-fan, 0
	// A group of one run would only copy it: the loop stops short of the
	// last run.
	for excess > 0 && i < len(s.runs)-1 {
		group := s.runs[i:min(i+fan, i+excess+1, len(s.runs))]
		off := s.size
		err := s.mergeRuns(group, group[0].first, func(key, val []byte, last int) (err error) {
			hdr, err = spillEntry(s, hdr, key, val, last)
			return err
		})
		if err != nil {
			return err
		}
		runs = append(runs, spillRun{off: off, end: s.size, first: group[0].first})
		excess -= len(group) - 1
		i += len(group)
	}
	s.runs = append(runs, s.runs[i:]...)
	return nil
}

// mergeRuns merges runs in key order and calls emit with each key, its
// values in file order with their files numbered from base, and the
// number of its last file.
func (s *spill) mergeRuns(runs []spillRun, base int, emit func(key, val []byte, last int) error) error {
	h, err := s.readers(runs, base)
	if err != nil {
		return err
	}
	var key, val []byte
	for len(h) > 0 {
		key = append(key[:0], h[0].key...)
		val = val[:0]
		prev := 0
		for len(h) > 0 && bytes.Equal(h[0].key, key) {
			r := h[0]
			val = s.renumber(val, r, &prev)
			if err := r.next(); err != nil {
				return err
			}
			if r.done {
				h.popRoot()
			} else {
				h.down(0)
			}
		}
		if err := emit(key, val, prev); err != nil {
			return err
		}
	}
	return nil
}

// renumber appends r's value to val with its files numbered in the
// index; prev is the index's number of the key's last file so far.
func (s *spill) renumber(val []byte, r *runReader, prev *int) []byte {
	v := r.val
	if s.kind == spillPostings {
		f, n := binary.Uvarint(v)
		if n <= 0 {
			return val
		}
		val = binary.AppendUvarint(val, uint64(r.first+int(f)-*prev))
		*prev = r.first + r.last
		return append(val, v[n:]...)
	}
	for len(v) > 0 {
		f, n := binary.Uvarint(v)
		if n <= 0 || len(v) < n+1 {
			return val
		}
		val = binary.AppendUvarint(val, uint64(r.first)+f)
		val = append(val, v[n])
		v = v[n+1:]
		pl, n := binary.Uvarint(v)
		if n <= 0 || uint64(len(v)-n) < pl {
			return val
		}
		val = append(val, v[:n+int(pl)]...)
		v = v[n+int(pl):]
	}
	return val
}

// tableOut is a table's sections being written by a merge, each to its
// own temporary file (their lengths head them in the index file, so they
// are copied there once complete), and the table's sample in memory.
type tableOut struct {
	keys, koff, vals, voff *section
	n                      int
	sampleKeys             []byte
	sampleOff              []uint32
}

// section is one temporary file being written.
type section struct {
	f    *os.File
	w    *bufio.Writer
	size int64
	// num is u32's scratch: a local array passed to the writer escaped,
	// one allocation per offset written (twice per key of every table).
	num [4]byte
}

func newTableOut(dir string) (*tableOut, error) {
	t := &tableOut{sampleOff: []uint32{0}}
	for _, s := range []**section{&t.keys, &t.koff, &t.vals, &t.voff} {
		f, err := createTemp(dir, "section-*")
		if err != nil {
			return nil, err
		}
		*s = &section{f: f, w: bufio.NewWriterSize(f, 32<<10)}
	}
	// The offsets start with a zero.
	t.koff.u32(0)
	t.voff.u32(0)
	return t, nil
}

func (s *section) u32(v uint32) {
	binary.LittleEndian.PutUint32(s.num[:], v)
	s.write(s.num[:])
}

// write appends b; a failure shows in the flush before the copy.
func (s *section) write(b []byte) {
	n, _ := s.w.Write(b)
	s.size += int64(n)
}

// add appends one key and its value.
func (t *tableOut) add(key, val []byte) error {
	if t.n%tableBlock == 0 {
		t.sampleKeys = append(t.sampleKeys, key...)
		t.sampleOff = append(t.sampleOff, uint32(len(t.sampleKeys)))
	}
	t.n++
	t.keys.write(key)
	t.koff.u32(uint32(t.keys.size))
	t.vals.write(val)
	t.voff.u32(uint32(t.vals.size))
	if t.keys.size > math32 || t.vals.size > math32 {
		return errors.New("index table exceeds 4 GiB")
	}
	return nil
}

const math32 = 1<<32 - 1

// writeTo writes the table as encoder.table does.
func (t *tableOut) writeTo(w io.Writer) error {
	for _, s := range []struct {
		sec   *section
		count int64
	}{{t.keys, t.keys.size}, {t.koff, int64(t.n + 1)}, {t.vals, t.vals.size}, {t.voff, int64(t.n + 1)}} {
		if err := s.sec.copyTo(w, s.count); err != nil {
			return err
		}
	}
	e := &encoder{}
	e.bytes(t.sampleKeys)
	e.u32s(t.sampleOff)
	if _, err := w.Write(e.buf); err != nil {
		return fmt.Errorf("writing index file: %w", err)
	}
	return nil
}

// copyTo writes count, then the section's bytes.
func (s *section) copyTo(w io.Writer, count int64) error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing a temporary index file: %w", err)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(count))
	if _, err := w.Write(b[:]); err != nil {
		return fmt.Errorf("writing index file: %w", err)
	}
	// Read from the file itself (a limited *os.File, not a section
	// reader): once w's buffer is flushed, an index file under it copies
	// the rest in the kernel (copy_file_range), not through user space.
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("copying a temporary index file: %w", err)
	}
	if _, err := io.Copy(w, io.LimitReader(s.f, s.size)); err != nil {
		return fmt.Errorf("copying a temporary index file: %w", err)
	}
	return nil
}

// close closes the table's files (the caller removes their directory).
func (t *tableOut) close() {
	for _, s := range []*section{t.keys, t.koff, t.vals, t.voff} {
		if s != nil {
			s.f.Close()
		}
	}
}
