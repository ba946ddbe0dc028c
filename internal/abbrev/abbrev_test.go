package abbrev

import "testing"

func TestSHA(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"abc":              "abc",
		"0123456789":       "0123456789",
		"0123456789abcdef": "0123456789",
		"ABCDEF0123":       "ABCDEF0123",
		// A commit id from a state ref whoever can push wrote ends at its
		// first character that is no hex digit: a backtick, a bracket or
		// a line break would close the code span it is shown in.
		"ab`![x](https://drop.example/?d=1)": "ab",
		"12\n/approve":                       "12",
		"<img src=x>":                        "",
	} {
		if got := SHA(in); got != want {
			t.Errorf("SHA(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "",
		"  a\n\tb  c\r\n":       "a b c",
		"exit status 1\nstderr": "exit status 1 stderr",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"title":               "title",
		"\n\n  title \nbody":  "title ",
		"one\ntwo\nthree":     "one",
		"  only line  \n\n  ": "only line",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"a longer text", 6, "a lon…"},
		{"ünïcödé", 4, "ünï…"}, // cut between runes, not bytes
		{"abc", 1, "a"},
		{"abc", 0, ""},
	}
	for _, tc := range tests {
		if got := Truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestPlainLine(t *testing.T) {
	for in, want := range map[string]string{
		"Fix \x1b[31mred\x1b[0m": "Fix [31mred[0m",
		"tab\there\r\ncr":        "tab here cr",
		"\x1b]0;title\x07 set":   "]0;title set",
		"plain — unicode":        "plain — unicode",
	} {
		if got := PlainLine(in); got != want {
			t.Errorf("PlainLine(%q) = %q, want %q", in, got, want)
		}
	}
}
