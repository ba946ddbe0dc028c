package locate

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// encodeSample writes sections longer and shorter than encoderFlush.
func encodeSample(e *encoder) {
	long := make([]uint32, 100_000)
	for i := range long {
		long[i] = uint32(i * 7)
	}
	e.u32s(long)
	e.str(strings.Repeat("ab", 100_000))
	e.bytes(bytes.Repeat([]byte{1, 2, 3}, 30_000))
	e.u32Each(70_000, func(i int) uint32 { return uint32(i * i) })
	e.str("short")
	e.bytes([]byte{9})
	e.u32s([]uint32{1, 2, 3})
}

// TestEncoderWritesAsItGoes checks that an encoder with a writer writes
// the same bytes as one building them in memory, while holding at most
// about encoderFlush of them, and that it reports a failed write.
func TestEncoderWritesAsItGoes(t *testing.T) {
	t.Parallel()
	var whole encoder
	encodeSample(&whole)
	var out bytes.Buffer
	streamed := encoder{w: &out}
	encodeSample(&streamed)
	streamed.flush()
	if streamed.err != nil {
		t.Fatal(streamed.err)
	}
	if !bytes.Equal(out.Bytes(), whole.buf) {
		t.Fatalf("streamed %d bytes, not the %d built in memory", out.Len(), len(whole.buf))
	}
	if c := cap(streamed.buf); c > 2*encoderFlush {
		t.Errorf("the streaming encoder's buffer grew to %d bytes, want at most %d", c, 2*encoderFlush)
	}
	errFull := errors.New("disk full")
	failing := encoder{w: failWriter{errFull}}
	encodeSample(&failing)
	failing.flush()
	if !errors.Is(failing.err, errFull) {
		t.Errorf("a failed write reported %v, want %v", failing.err, errFull)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }
