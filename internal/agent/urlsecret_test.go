package agent

import (
	"bytes"
	"testing"
)

// TestWithoutUserinfoSkipsOnlyLinesWithoutSecrets: the lines
// withoutUserinfo leaves unread (no @, no ://) are those none of its
// three expressions matches, and a line that is read loses what the
// expressions remove, as before the shortcut.
func TestWithoutUserinfoSkipsOnlyLinesWithoutSecrets(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, want string }{
		{"export PATH=/usr/local/bin:$PATH\n", "export PATH=/usr/local/bin:$PATH\n"},
		{"proxy=http://user:pw@proxy.example:3128\n", "proxy=http://proxy.example:3128\n"},
		{"http_proxy=user:pw@proxy.example:3128\n", "http_proxy=proxy.example:3128\n"},
		{"registry=https://dl.cloudsmith.io/s3cr3tT0ken/acme/repo/\n", "registry=https://dl.cloudsmith.io/acme/repo/\n"},
		{"index-url = https://pypi.fury.io/tok3n/acme/\n", "index-url = https://pypi.fury.io/acme/\n"},
		{"channel: https://conda.anaconda.org/t/tok-123/acme\n", "channel: https://conda.anaconda.org/acme\n"},
		{"mail=root@localhost\n", "mail=root@localhost\n"},
		{"key: value\n", "key: value\n"},
		{"", ""},
	}
	for _, tt := range tests {
		line := []byte(tt.line)
		full := withoutPathTokens(bareUserinfo.ReplaceAll(urlUserinfo.ReplaceAll(line, []byte("$1")), []byte("$1")))
		if got := withoutUserinfo(line); string(got) != tt.want || !bytes.Equal(got, full) {
			t.Errorf("withoutUserinfo(%q) = %q, want %q (the expressions give %q)", tt.line, got, tt.want, full)
		}
		if !mayHoldURLSecret(line) && (urlUserinfo.Match(line) || bareUserinfo.Match(line) || pathToken.Match(line)) {
			t.Errorf("%q is skipped but an expression matches it", tt.line)
		}
	}
}
