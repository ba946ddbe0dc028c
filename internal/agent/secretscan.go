package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"sort"
)

// Variants are the forms of a secret value looked for besides the value
// itself: its base64 encodings (standard and URL alphabets), as they
// appear inside a longer encoded text whichever of the three byte
// positions the value starts at, so only the whole 3-byte groups that
// never mix with the bytes around it. Forms shorter than minSecretLen are
// left out. Other encodings (hex, reversed, encrypted) are not looked
// for: the check is a tripwire for an agent that got hold of a value,
// not what keeps values from agents (the environment filter and the
// sandbox are).
func Variants(v string) []string {
	out := []string{v}
	for skip := 0; skip < 3 && skip < len(v); skip++ {
		rest := v[skip:]
		whole := rest[:len(rest)/3*3]
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if s := enc.EncodeToString([]byte(whole)); len(s) >= minSecretLen && s != v {
				out = append(out, s)
			}
		}
	}
	return dedupe(out)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// ignored reports the bytes a Matcher skips on both sides: white space
// and control bytes (a value split across lines or indented) and the
// quotes, plus signs and backslashes that join the pieces of a string
// split in source code.
func ignored(c byte) bool {
	switch c {
	case '"', '\'', '`', '+', '\\', 0x7f:
		return true
	}
	return c <= ' '
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasByte reports whether any byte of w is c.
func hasByte(w uint64, c byte) bool {
	x := w ^ (ones * uint64(c))
	return (x-ones)&^x&highs != 0
}

// plain reports whether no byte of w is one the Matcher ignores (false
// may be wrong the other way: the caller then looks at each byte).
func plain(w uint64) bool {
	const below = ones * 0x21 // a byte under '!' is white space or control
	if (w-below)&^w&highs != 0 {
		return false
	}
	return !hasByte(w, '"') && !hasByte(w, '\'') && !hasByte(w, '`') && !hasByte(w, '+') && !hasByte(w, '\\') && !hasByte(w, 0x7f)
}

// normalize appends src to dst without the ignored bytes, eight at a time
// where it can.
func normalize(dst, src []byte) []byte {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		w := binary.LittleEndian.Uint64(src[i:])
		switch {
		case w&(ones*0xe0) == 0: // every byte a control byte (NULs of a sparse file)
		case plain(w):
			dst = append(dst, src[i:i+8]...)
		default:
			for _, c := range src[i : i+8] {
				if !ignored(c) {
					dst = append(dst, c)
				}
			}
		}
	}
	for _, c := range src[i:] {
		if !ignored(c) {
			dst = append(dst, c)
		}
	}
	return dst
}

// keyLen is the length of the prefix a Matcher indexes needles by: the
// shortest value looked for.
const keyLen = minSecretLen

type needle struct {
	text []byte
	name string
}

// Matcher finds secret values (and their Variants) in text of any size
// in one pass and bounded memory, whatever bytes the Matcher ignores
// stand between their characters.
type Matcher struct {
	first  [1 << 16 / 64]uint64 // the first two bytes of some needle
	byKey  map[uint64][]needle
	maxLen int
}

// NewMatcher prepares a Matcher for values (value → variable name).
func NewMatcher(values map[string]string) *Matcher {
	m := &Matcher{byKey: map[uint64][]needle{}}
	for v, name := range values {
		for _, form := range Variants(v) {
			text := normalize(nil, []byte(form))
			if len(text) < keyLen {
				continue
			}
			k := binary.LittleEndian.Uint64(text)
			m.byKey[k] = append(m.byKey[k], needle{text, name})
			f := binary.LittleEndian.Uint16(text)
			m.first[f/64] |= 1 << (f % 64)
			m.maxLen = max(m.maxLen, len(text))
		}
	}
	return m
}

// Empty reports whether there is nothing to look for.
func (m *Matcher) Empty() bool { return len(m.byKey) == 0 }

// chunkSize is how much is read at a time.
const chunkSize = 1 << 20

// Find reads r to its end and returns the names of the variables whose
// values it holds, sorted. It keeps one chunk and the last bytes of the
// one before (as many as the longest value), so a value spanning two
// chunks is found too.
func (m *Matcher) Find(r io.Reader) ([]string, error) {
	found := map[string]bool{}
	if m.Empty() {
		_, err := io.Copy(io.Discard, r)
		return nil, err
	}
	raw := make([]byte, chunkSize)
	window := make([]byte, 0, chunkSize+m.maxLen)
	for {
		n, err := io.ReadFull(r, raw)
		window = normalize(window, raw[:n])
		m.scan(window, found)
		if keep := m.maxLen - 1; len(window) > keep {
			window = append(window[:0], window[len(window)-keep:]...)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return sortedKeys(found), err
		}
	}
	return sortedKeys(found), nil
}

// FindString is Find for a string.
func (m *Matcher) FindString(s string) []string {
	found, _ := m.Find(bytes.NewReader([]byte(s)))
	return found
}

func (m *Matcher) scan(w []byte, found map[string]bool) {
	for i := 0; i+keyLen <= len(w); i++ {
		f := binary.LittleEndian.Uint16(w[i:])
		if m.first[f/64]&(1<<(f%64)) == 0 {
			continue
		}
		for _, n := range m.byKey[binary.LittleEndian.Uint64(w[i:])] {
			if bytes.HasPrefix(w[i:], n.text) {
				found[n.name] = true
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
