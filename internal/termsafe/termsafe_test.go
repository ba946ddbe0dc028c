package termsafe

import (
	"bytes"
	"errors"
	"testing"
)

func TestWriterDropsControls(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain text and unicode", []string{"T1: completed — done\n"}, "T1: completed — done\n"},
		{"tabs and newlines kept", []string{"a\tb\nc\n"}, "a\tb\nc\n"},
		{"CSI clear screen", []string{"x\x1b[2Jy"}, "x[2Jy"},
		{"OSC 52 clipboard write", []string{"\x1b]52;c;ZXZpbA==\x07ok"}, "]52;c;ZXZpbA==ok"},
		{"carriage return and backspace", []string{"safe\rforged\b\n"}, "safeforged\n"},
		{"DEL", []string{"a\x7fb"}, "ab"},
		{"C1 CSI", []string{"a\u009b2Jb"}, "a2Jb"},
		{"C1 split across writes", []string{"a\xc2", "\x9b2Jb"}, "a2Jb"},
		{"0xC2 lead of a printable rune split across writes", []string{"\xc2", "\xa9 2026"}, "© 2026"},
		{"0xC2 at the end, then an ASCII byte", []string{"\xc2", "x"}, "\xc2x"},
		{"Latin-1 supplement kept", []string{"café ©"}, "café ©"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b)
			for _, s := range tc.writes {
				n, err := w.Write([]byte(s))
				if err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsErrors(t *testing.T) {
	if _, err := NewWriter(failWriter{}).Write([]byte("x")); err == nil {
		t.Error("an error of the underlying writer was lost")
	}
	// Nothing left to write: nothing to fail.
	if n, err := NewWriter(failWriter{}).Write([]byte("\x1b")); err != nil || n != 1 {
		t.Errorf("Write of a dropped byte = %d, %v", n, err)
	}
}

func TestPath(t *testing.T) {
	for in, want := range map[string]string{
		"pkg/mod.py":     "pkg/mod.py",
		"docs/café.md":   "docs/café.md",
		"a b/c d.txt":    "a b/c d.txt",
		"evil\x1b[2J.py": `"evil\x1b[2J.py"`,
		"new\nline.py":   `"new\nline.py"`,
		"c1\u009b.py":    `"c1\u009b.py"`,
		"bad\xff.py":     `"bad\xff.py"`,
		`"quoted".py`:    `"\"quoted\".py"`,
		"":               "",
	} {
		if got := Path(in); got != want {
			t.Errorf("Path(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDrops(t *testing.T) {
	for r, want := range map[rune]bool{
		'\n': false, '\t': false, 'a': false, 'é': false, '\u00a0': false, '—': false,
		'\x00': true, '\x1b': true, '\a': true, '\r': true, '\b': true, '\x7f': true, '\u0085': true, '\u009b': true, '\u009f': true,
	} {
		if got := Drops(r); got != want {
			t.Errorf("Drops(%U) = %v, want %v", r, got, want)
		}
	}
}
