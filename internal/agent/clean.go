package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/termsafe"
)

// CleanText removes terminal escape sequences (colours, cursor moves,
// titles, hyperlinks) and control characters other than newline and tab
// from text a program printed, so that what planex stores in tasks.csv,
// context.md or a comment, and shows in a terminal, is plain text that
// cannot repaint a screen or hide what follows it.
func CleanText(s string) string {
	if !strings.ContainsFunc(s, termsafe.Drops) && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == 0x1b { // ESC: skip the whole sequence
			i = skipEscape(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x9b: // the one-character form of ESC [
			i = skipCSI(s, i+size)
			continue
		case termsafe.Drops(r):
			// Dropped, CR included: a lone CR redraws the line.
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// skipEscape returns the index after the escape sequence starting at
// s[i] (an ESC): CSI (ESC [ … final byte), OSC, DCS and similar strings
// (ESC ] … BEL or ESC \), or a two-byte sequence.
func skipEscape(s string, i int) int {
	i++
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', '_', '^', 'X':
		for j := i + 1; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	}
	// ESC followed by intermediates (0x20–0x2f) and one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) {
		i++
	}
	return i
}

// skipCSI skips parameter and intermediate bytes and the final byte.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// CleanJSON applies CleanText to every string (keys and values) of a
// JSON document. A document without control characters is returned as
// it is; invalid JSON is returned unchanged for the caller's validation
// to reject.
func CleanJSON(raw []byte) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	changed := false
	v = cleanValue(v, &changed)
	if !changed {
		return raw
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSpace(out.Bytes())
}

func cleanValue(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		c := CleanText(x)
		if c != x {
			*changed = true
		}
		return c
	case []any:
		for i := range x {
			x[i] = cleanValue(x[i], changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			ck := CleanText(k)
			if ck != k {
				*changed = true
			}
			out[ck] = cleanValue(val, changed)
		}
		return out
	}
	return v
}
