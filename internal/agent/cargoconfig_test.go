package agent

import "testing"

// TestStripCargoCredentials: a token's value is emptied wherever TOML
// puts it (a line, an inline table, either quotes, an escaped quote
// inside), URL passwords go, and what names no token stays.
func TestStripCargoCredentials(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"token = \"a\"\n", "token = \"\"\n"},
		{"corp = { index = \"https://c/i\", token = 'b' }\n", "corp = { index = \"https://c/i\", token = \"\" }\n"},
		{"TOKEN=\"x\\\"y\"\n", "TOKEN=\"\"\n"},
		{"proxy = \"http://u:p@h:1\"\n", "proxy = \"http://h:1\"\n"},
		{"token-like = \"kept\"\ncredential-provider = \"cargo:token\"\n", "token-like = \"kept\"\ncredential-provider = \"cargo:token\"\n"},
	}
	for _, c := range cases {
		got, _ := stripCargoCredentials([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
