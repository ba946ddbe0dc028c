// Package termsafe keeps text that planex prints from acting on the
// terminal that shows it. planex's output quotes what agents and
// repositories wrote (task titles and errors, findings, file names,
// commit subjects); an escape sequence among them could clear the
// screen, rewrite a line already shown, set the window title or, through
// OSC 52, the user's clipboard.
package termsafe

import (
	"io"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Writer passes text on without the control characters a terminal acts
// on: C0 controls other than tab and newline (ESC, BEL, carriage return,
// backspace among them), DEL, and the C1 controls (U+0080–U+009F, which
// some terminals read as ESC sequences). Everything else is passed as it
// is, invalid UTF-8 included (but for a lone 0xC2 as the very last byte
// written, held back in case a C1 control's second byte follows). It is
// safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending bool // the last Write ended with 0xC2, the lead byte of a C1 control
	buf     []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write filters p and writes what is left. It reports len(p) on success:
// the dropped bytes count as written.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.buf[:0]
	i := 0
	if t.pending {
		t.pending = false
		if len(p) > 0 && isC1Tail(p[0]) {
			i = 1
		} else {
			out = append(out, 0xC2)
		}
	}
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c < 0x80 && Drops(rune(c)):
			// dropped
		case c == 0xC2 && i+1 == len(p):
			t.pending = true
		case c == 0xC2 && isC1Tail(p[i+1]):
			i++
		default:
			out = append(out, c)
		}
	}
	t.buf = out
	if len(out) > 0 {
		if _, err := t.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Drops reports whether r is a control character a terminal acts on: C0
// other than newline and tab, DEL, and C1. What planex prints never holds
// one (Writer); text planex stores from agents is cleaned of them too.
func Drops(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f)
}

// isC1Tail reports whether b, after 0xC2, makes a C1 control (U+0080–U+009F).
func isC1Tail(b byte) bool { return b >= 0x80 && b <= 0x9f }

// Path returns a file path as it may be printed one per line: as it is
// when it holds no control character and is valid UTF-8, else quoted
// with Go's escapes ("a\x1b[2Jb.py"), the way git quotes unusual names.
// A path that itself starts with a double quote is quoted too, so that a
// quoted line is never ambiguous.
func Path(p string) string {
	if !utf8.ValidString(p) || (p != "" && p[0] == '"') {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return strconv.Quote(p)
		}
	}
	return p
}
