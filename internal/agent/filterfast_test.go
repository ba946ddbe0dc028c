package agent

import (
	"bytes"
	"strings"
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

// TestShellFilterSkipsOnlyLinesWithoutAssignments: the lines the shell
// filter leaves to withoutTokenWords alone (no =, no set) are those no
// assignment expression matches, and those shellSecretFiles skips (no
// read either) are those shellNamesSet does not match; a line with an
// assignment still loses its secret.
func TestShellFilterSkipsOnlyLinesWithoutAssignments(t *testing.T) {
	t.Parallel()
	f := newShellFilter(nil, nil, nil)
	tests := []struct{ line, want string }{
		{`if [ -d /opt/bin ]; then`, `if [ -d /opt/bin ]; then`},
		{`  . /etc/bash_completion`, `  . /etc/bash_completion`},
		{`echo ghp_0123456789abcdefghijABCDEFGHIJ`, `echo `},
		{`export DEPLOY_TOKEN=abc`, `export DEPLOY_TOKEN=`},
		{`setenv GH_TOKEN abc`, `setenv GH_TOKEN `},
		{`set -gx NPM_TOKEN abc`, `set -gx NPM_TOKEN `},
		{`true && API_KEY=abc run`, `true && API_KEY= run`},
		{`PS1='\u@\h:\w\$ '`, `PS1='\u@\h:\w\$ '`},
	}
	for _, tt := range tests {
		if got := withoutShellSecret(tt.line, f); got != tt.want {
			t.Errorf("withoutShellSecret(%q) = %q, want %q", tt.line, got, tt.want)
		}
		if !mayAssign(tt.line) && (cshAssignment.MatchString(tt.line) || shellAssignment.MatchString(tt.line) || shellWordAssignment.MatchString(tt.line)) {
			t.Errorf("%q is skipped but an assignment expression matches it", tt.line)
		}
		if !mayAssign(tt.line) && !strings.Contains(tt.line, "read") && shellNamesSet.MatchString(tt.line) {
			t.Errorf("%q is skipped but shellNamesSet matches it", tt.line)
		}
	}
	for _, line := range []string{`read -r DEPLOY_KEY < /srv/ci/key`, `export GH_TOKEN=$(cat /etc/ci/gh-token)`} {
		if got := shellSecretFiles(line, nil, nil); len(got) != 1 {
			t.Errorf("shellSecretFiles(%q) = %q, want the one file read", line, got)
		}
	}
}

// TestWithoutSeparators: a key loses its underscores and hyphens only,
// bytes that are no UTF-8 kept as they are.
func TestWithoutSeparators(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "password", "proxy_password", "http-passwd", "-_-", "a_b-c\xff_d"} {
		if got, want := withoutSeparators(k), strings.NewReplacer("_", "", "-", "").Replace(k); got != want {
			t.Errorf("withoutSeparators(%q) = %q, want %q", k, got, want)
		}
	}
}

// TestShellURLLinesWithoutSchemeKept: in a machine's shell file a line
// without :// is shown as the expressions would leave it, and one with
// a URL still loses its credentials and path token.
func TestShellURLLinesWithoutSchemeKept(t *testing.T) {
	t.Parallel()
	in := "PS1='\\u@\\h:\\w '\nexport http_proxy=http://ci:hunter2@proxy:3128\nexport PIP_INDEX_URL=https://pypi.fury.io/tok3n/acme/\nalias ll='ls -l'\n"
	want := "PS1='\\u@\\h:\\w '\nexport http_proxy=http://proxy:3128\nexport PIP_INDEX_URL=https://pypi.fury.io/acme/\nalias ll='ls -l'\n"
	if got, _ := filterSysConfig([]byte(in), filterShellURLs, nil, nil); string(got) != want {
		t.Errorf("filtered\n%s\nwant\n%s", got, want)
	}
}
