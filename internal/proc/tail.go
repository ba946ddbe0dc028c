package proc

import "sync"

// Tail is an io.Writer for a child's output that keeps only the last Max
// bytes written to it, so a program printing without end costs a bounded
// amount of memory (at most twice Max). It is safe for concurrent use.
type Tail struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

// NewTail returns a Tail keeping the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps the end of p; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if len(t.buf)+len(p) > 2*t.max {
		keep := t.max - len(p)
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// Bytes returns the last Max bytes written (fewer when less was).
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.max {
		return t.buf[len(t.buf)-t.max:]
	}
	return t.buf
}

// String is Bytes as a string.
func (t *Tail) String() string { return string(t.Bytes()) }

// Dropped is how many bytes written are no longer kept.
func (t *Tail) Dropped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := int64(min(len(t.buf), t.max))
	return t.total - kept
}
