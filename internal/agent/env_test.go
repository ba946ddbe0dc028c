package agent

import (
	"encoding/base64"
	"io"
	"slices"
	"strings"
	"testing"
)

// leakedInIssue29 are the variables a red-team round found reaching the
// agent under the old deny-list: none looks like a secret by its name.
var leakedInIssue29 = []string{
	"DATABASE_URL=postgres://app:hunter2-db-pass@db.internal:5432/app",
	"DB_PASS=db-pass-0123456789", "SMTP_PWD=smtp-pwd-0123456789",
	`DOCKER_AUTH_CONFIG={"auths":{"r.example":{"auth":"ZG9ja2VyOnB3"}}}`,
	"APIKEY=apikey-0123456789", "PRIVATE_KEY_PEM=-----BEGIN PRIVATE KEY-----MIIEvQ",
	"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "SENTRY_DSN=https://abc123def@o1.ingest.sentry.io/1",
	"NPM_AUTH=npm-auth-0123456789", "SESSION_COOKIE=session-cookie-0123456789",
}

func TestScrubEnv(t *testing.T) {
	t.Parallel()
	base := []string{
		"PATH=/bin", "HOME=/h", "LANG=C", "LC_ALL=C.UTF-8", "TZ=UTC", "TERM=xterm", "USER=u", "CI=true",
		"GITHUB_REPOSITORY=o/r", "GITHUB_SHA=abc", "RUNNER_OS=Linux",
		"GITHUB_TOKEN=1", "GH_TOKEN=1b", "INPUT_GITHUB_TOKEN=2", "INPUT_AGENT=3", "ACTIONS_RUNTIME_TOKEN=4",
		"ACTIONS_ID_TOKEN_REQUEST_URL=5", "GITHUB_ENV=/r/env", "GITHUB_PATH=/r/path", "GITHUB_OUTPUT=/r/out",
		"GITHUB_STATE=/r/state", "GITHUB_STEP_SUMMARY=/r/sum", "BASH_ENV=/x", "ENV=/y",
		"SSH_AUTH_SOCK=/s", "KEYBOARD=us", "PLANEX_AGENT_CMD=agent", "XDG_CONFIG_HOME=/h/.config",
		"LLM_GATEWAY=11", "ANTHROPIC_API_KEY=9",
	}
	defaults := []string{"PATH=/bin", "HOME=/h", "LANG=C", "LC_ALL=C.UTF-8", "TZ=UTC", "TERM=xterm", "USER=u", "CI=true",
		"GITHUB_REPOSITORY=o/r", "GITHUB_SHA=abc", "RUNNER_OS=Linux"}
	cases := []struct {
		name    string
		env     []string
		allow   []string
		secrets []string
		want    []string
	}{
		{"only the default list passes", base, nil, nil, defaults},
		{"every variable the issue found leaking is dropped", append([]string{"PATH=/bin"}, leakedInIssue29...), nil, nil, []string{"PATH=/bin"}},
		{"allowed names pass, the never-pass list does not", base,
			[]string{"KEYBOARD", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "INPUT_AGENT", "ACTIONS_RUNTIME_TOKEN", "GITHUB_ENV", "BASH_ENV", "ENV", " SSH_AUTH_SOCK "}, nil,
			append(slices.Clone(defaults[:11]), "SSH_AUTH_SOCK=/s", "KEYBOARD=us", "ANTHROPIC_API_KEY=9")},
		{"the --api-key-env variable is dropped even from the default list", []string{"PATH=/bin", "HOME=/h"}, nil, []string{"HOME"}, []string{"PATH=/bin"}},
		{"the --api-key-env variable passes when allowed by name", []string{"LLM_GATEWAY=k"}, []string{"LLM_GATEWAY"}, []string{"LLM_GATEWAY"}, []string{"LLM_GATEWAY=k"}},
		{"PATH keeps only its absolute folders: an empty entry, . or node_modules/.bin is the repository",
			[]string{"PATH=node_modules/.bin::/usr/local/bin:.:bin:./tools:/usr/bin:"}, nil, nil, []string{"PATH=/usr/local/bin:/usr/bin"}},
		{"a PATH of only relative folders is empty", []string{"PATH=.:node_modules/.bin"}, nil, nil, []string{"PATH="}},
		{"names are exact: no prefix or case folding", []string{"PATHX=1", "path=2", "HOMEDIR=3", "LC=4", "LC_=5", "lc_all=6"}, nil, nil, nil},
		// OpenSSH passes LC_* from every client by default, so people
		// carry their own variables through ssh under such names.
		{"only the locale categories of LC_", []string{"LC_CTYPE=C", "LC_MESSAGES=de_DE", "LC_DEPLOY_TOKEN=tok-0123456789", "LC_TERMINAL=iTerm2"}, nil, nil, []string{"LC_CTYPE=C", "LC_MESSAGES=de_DE"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := ScrubEnv(c.env, c.allow, c.secrets...)
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("ScrubEnv =\n%v\nwant\n%v", got, want)
			}
		})
	}
}

func TestSecretValues(t *testing.T) {
	t.Parallel()
	env := append([]string{
		"PATH=/usr/bin:/bin", "HOME=/home/runner", "GITHUB_TOKEN=ghs_abcdefgh", "SHORT=abc",
		"OK_KEY=allowed-value", "PWD=/home/runner", // the agent has that value through HOME
		"INPUT_MODEL=claude-sonnet-4", "INPUT_BOT_LOGIN=planex-app[bot]", "INPUT_AGENT_COMMAND=/usr/bin/my-agent --key sk-12345678",
		"INPUT_GITHUB-TOKEN=ghs_inputtoken1", "EXISTING=/etc/passwd", "MISSING=/no/such/file/at/all",
		"INPUT_MCP_CONFIG=.mcp.json", `INPUT_MCP_CONFIG_INLINE={"mcpServers":{}}`,
	}, leakedInIssue29...)
	got := heldValues(env, []string{"OK_KEY"}, nil, func(p string) bool { return p == "/etc/passwd" || p == ".mcp.json" })
	want := map[string]string{
		"ghs_abcdefgh": "GITHUB_TOKEN", "/usr/bin/my-agent --key sk-12345678": "INPUT_AGENT_COMMAND",
		"ghs_inputtoken1": "INPUT_GITHUB-TOKEN", "/no/such/file/at/all": "MISSING",
		`{"mcpServers":{}}`: "INPUT_MCP_CONFIG_INLINE",
	}
	for _, kv := range leakedInIssue29 {
		name, value, _ := strings.Cut(kv, "=")
		want[value] = name
	}
	if len(got) != len(want) {
		t.Errorf("SecretValues has %d values, want %d: %v", len(got), len(want), got)
	}
	for v, name := range want {
		if got[v] != name {
			t.Errorf("SecretValues[%q] = %q, want %q", v, got[v], name)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	values := map[string]string{"ghs_abcdefgh": "GITHUB_TOKEN", "key-12345678": "LLM", "key-12345678-long": "LONG"}
	cases := []struct{ in, want string }{
		{"token ghs_abcdefgh and key-12345678!", "token [redacted GITHUB_TOKEN] and [redacted LLM]!"},
		{"key-12345678-long", "[redacted LONG]"},
		{"auth " + base64.StdEncoding.EncodeToString([]byte("key-12345678")), "auth [redacted LLM]"},
		{"nothing here", "nothing here"},
		// The Markdown escaper's joiner in a URL, or an agent's own.
		{"see ghs_\u200dabcdefgh and key-\u200b1234\u20605678", "see [redacted GITHUB_TOKEN] and [redacted LLM]"},
		{"both key-12345678 and key-1234\ufeff5678", "both [redacted LLM] and [redacted LLM]"},
		{"joiner\u200d alone", "joiner\u200d alone"},
	}
	for _, c := range cases {
		if got := Redact(c.in, values); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMatcherFinds(t *testing.T) {
	t.Parallel()
	secret := "s3cr3t-VALUE-0123456789"
	m := NewMatcher(map[string]string{secret: "DB_PASS", "other-value-xyz": "OTHER"})
	enc := func(prefix string, e *base64.Encoding) string {
		return e.EncodeToString([]byte(prefix + secret + "!tail"))
	}
	cases := []struct {
		name, text string
		want       []string
	}{
		{"plain", "x = " + secret, []string{"DB_PASS"}},
		{"split across lines", `p = "s3cr3t-VAL"` + " +\n\t\"UE-0123456789\"", []string{"DB_PASS"}},
		{"shell continuation", "s3cr3t-VALUE-01\\\n23456789", []string{"DB_PASS"}},
		{"base64 at offset 0", enc("", base64.StdEncoding), []string{"DB_PASS"}},
		{"base64 at offset 1", enc("a", base64.StdEncoding), []string{"DB_PASS"}},
		{"base64 at offset 2", enc("ab", base64.URLEncoding), []string{"DB_PASS"}},
		{"base64 wrapped at 4 columns", wrap(enc("abc:", base64.StdEncoding), 4), []string{"DB_PASS"}},
		{"both", secret + " other-value-xyz", []string{"DB_PASS", "OTHER"}},
		{"a part is not the value", "s3cr3t-VALUE-01234", nil},
		{"nothing", "hello", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := m.FindString(c.text); !slices.Equal(got, c.want) {
				t.Errorf("FindString(%q) = %v, want %v", c.text, got, c.want)
			}
		})
	}
}

func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	return b.String() + s
}

// TestMatcherChunkBoundary: a value across the boundary of two chunks,
// at every offset, is found.
func TestMatcherChunkBoundary(t *testing.T) {
	t.Parallel()
	secret := "boundary-secret-ABCDEFGH"
	m := NewMatcher(map[string]string{secret: "S"})
	for off := 1; off < len(secret); off++ {
		r := io.MultiReader(strings.NewReader(strings.Repeat("z", chunkSize-off)), strings.NewReader(secret), strings.NewReader("zz"))
		got, err := m.Find(r)
		if err != nil || !slices.Equal(got, []string{"S"}) {
			t.Fatalf("offset %d: Find = %v, %v", off, got, err)
		}
	}
}

// TestNormalizeMatchesBytewise: the eight-at-a-time path drops exactly
// the bytes the byte-by-byte rule drops.
func TestNormalizeMatchesBytewise(t *testing.T) {
	t.Parallel()
	alphabet := []byte("ab+\"'`\\ \t\n\x00\x01\x1f!\x7f\x80\xffZ09=/")
	src := make([]byte, 4099)
	seed := uint32(1)
	for i := range src {
		seed = seed*1664525 + 1013904223
		src[i] = alphabet[int(seed>>16)%len(alphabet)]
	}
	copy(src[100:], make([]byte, 64)) // a run of NULs
	copy(src[300:], strings.Repeat("plainTEXT", 8))
	var want []byte
	for _, c := range src {
		if !ignored(c) {
			want = append(want, c)
		}
	}
	for start := 0; start < 9; start++ {
		var w2 []byte
		for _, c := range src[start:] {
			if !ignored(c) {
				w2 = append(w2, c)
			}
		}
		if got := normalize(nil, src[start:]); string(got) != string(w2) {
			t.Fatalf("from %d: normalize differs from the byte-by-byte rule", start)
		}
	}
	if got := normalize(nil, src); string(got) != string(want) {
		t.Fatal("normalize differs from the byte-by-byte rule")
	}
}
