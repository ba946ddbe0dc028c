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
		// Other TOML spellings: a quoted key, multi-line strings of either
		// kind, and the [env] table an admin gives builds secrets in.
		{"[registry]\n\"token\" = \"a\"\n", "[registry]\n\"token\" = \"\"\n"},
		{"registries.corp.'token' = 'b'\n", "registries.corp.'token' = \"\"\n"},
		{"token = '''c1'''\nx = 1\n", "token = \"\"\nx = 1\n"},
		{"token = \"\"\"\nc2\n\"\"\"\nx = 1\n", "token = \"\"\nx = 1\n"},
		{"[env]\nNPM_TOKEN = \"d1\"\nSENTRY_AUTH = { value = \"d2\", force = true }\nRUST_LOG = \"info\"\nOTHER = \"ghp0abcdefghij0123456789\"\n[build]\njobs = 2\n",
			"[env]\nNPM_TOKEN = \"\"\nSENTRY_AUTH = \"\"\nRUST_LOG = \"info\"\nOTHER = \"\"\n[build]\njobs = 2\n"},
		{"env.CI_SECRET = \"e\"\n", "env.CI_SECRET = \"\"\n"},
	}
	for _, c := range cases {
		got, _ := stripCargoCredentials([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
