package agent

import (
	"slices"
	"testing"
)

// TestSysConfigFilters: what each filter leaves of a line, and what it
// keeps: continued lines judged whole, quoting read as systemd reads it,
// a password key in every spelling yum, dnf and wget accept.
func TestSysConfigFilters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		filter sysConfigFilter
		in     string
		want   string
		keys   []string
	}{
		{"apt proxy", filterURLs, `Acquire::ftp::Proxy "ftp://u:p@proxy:21/";` + "\n", `Acquire::ftp::Proxy "ftp://proxy:21/";` + "\n", nil},
		{"apt plain", filterURLs, "APT::Install-Recommends \"false\";\n", "APT::Install-Recommends \"false\";\n", nil},
		{"pem anywhere", filterURLs, "a\nkey=-----BEGIN RSA PRIVATE KEY-----x\nb\n", "a\nb\n", nil},
		{"wget spellings", filterPasswords, "passwd=a\nHTTP-Password = b\nftp_passwd=c\nuser=ci\n", "user=ci\n", nil},
		{"dnf key", filterPasswords, "proxy_sslclientkey = /k/p.key\nsslclientkey=\"rel.key\"\n", "proxy_sslclientkey = /k/p.key\nsslclientkey=\"rel.key\"\n", []string{"/k/p.key", "rel.key"}},
		{"continued", filterEnvironment, "Environment=TZ=UTC \\\n  SECRET=x\nUser=ci\n", "Environment=TZ=UTC\nUser=ci\n", nil},
		{"quoted", filterEnvironment, `Environment="LANG=C.UTF-8" 'API_KEY=a b' "TZ=Europe/X Y"` + "\n", `Environment=LANG=C.UTF-8 "TZ=Europe/X Y"` + "\n", nil},
		{"none passes", filterEnvironment, "DefaultEnvironment=TOKEN=a\n[Manager]\n", "[Manager]\n", nil},
		{"other key", filterEnvironment, "PassEnvironment=TOKEN\n", "PassEnvironment=TOKEN\n", nil},
		{"shell words", filterShellURLs, "PS1='${c:+($c)}\\u@\\h:\\w' \\\n  x=\"https://u:p@h/\"\n", "PS1='${c:+($c)}\\u@\\h:\\w' \\\n  x=\"https://h/\"\n", nil},
		{"space separated", filterPasswords, "  bindpw s\n  passwordeval gpg -d p\npassive_ftp = on\n", "  passwordeval gpg -d p\npassive_ftp = on\n", nil},
		{"continued and colon", filterPasswords, "[a]\npassword =\n  p1\n\n\tp2\nuser: ci\nproxy_password: p3\nPWD=p4\npassword3 = p5\nhost = h\n", "[a]\nuser: ci\nhost = h\n", nil},
		{"mount options", filterMountOptions, "# pass=x\n//n/s  /m cifs  pw=a,credentials=/c,ro  0 0\n", "# pass=x\n//n/s  /m cifs  credentials=/c,ro  0 0\n", []string{"/c"}},
		{"path tokens", filterURLs, "a https://dl.cloudsmith.io/tok1/acme/r/ b https://dl.cloudsmith.io/public/acme/r/ c https://conda.anaconda.org/t/tok2/main d https://example.test/t/x/y\n", "a https://dl.cloudsmith.io/acme/r/ b https://dl.cloudsmith.io/public/acme/r/ c https://conda.anaconda.org/main d https://example.test/t/x/y\n", nil},
		{"gemfury", filterURLs, "a https://pypi.fury.io/tok1/acme/ b https://NPM-Proxy.Fury.io:443/tok2/acme c https://pypi.fury.io/acme/ d https://api.fury.io/1/packages e https://notfury.io/x/y\n", "a https://pypi.fury.io/acme/ b https://NPM-Proxy.Fury.io:443/acme c https://pypi.fury.io/acme/ d https://api.fury.io/1/packages e https://notfury.io/x/y\n", nil},
		{"nuget", filterNuGetPasswords, "<add key=\"Username\" value=\"ci\" />\n<add KEY = 'ClearTextPassword' value='a'/>\n<add key=\"password\" value=\"b\"/>\n<add key=\"PasswordHint\" value=\"c\"/>\n", "<add key=\"Username\" value=\"ci\" />\n<add key=\"PasswordHint\" value=\"c\"/>\n", nil},
		{"shell secrets", filterShellURLs, "export A_TOKEN='x' # c\n  SVC_PW=y; run\nexport LONG=abcdefghij0123456789xyz\ndeclare -rx B_SECRET=z\nreadonly C_AUTH=w\n", "export A_TOKEN=\n  SVC_PW=\nexport LONG=\ndeclare -rx B_SECRET=\nreadonly C_AUTH=\n", nil},
		{"shell secrets later on a line", filterShellURLs, "export A=1 DEPLOY_TOKEN=x1\n[ -n \"$PS1\" ] && export B_SECRET='y 2'; run\nexport C_PW=z3 # for $USER\nif true; then D_AUTH=\"w4\"; fi\n", "export A=1 DEPLOY_TOKEN=\n[ -n \"$PS1\" ] && export B_SECRET=; run\nexport C_PW= # for $USER\nif true; then D_AUTH=; fi\n", nil},
		{"csh and fish secrets", filterShellURLs, "setenv DEPLOY_TOKEN x1\n  setenv\tLONG abcdefghij0123456789xyz # c\nset B_SECRET = 'y 2'\nset -gx C_AUTH z3\nset --export --global D_PW w4\nsetenv PATH /bin:$PATH\nsetenv LANG C.UTF-8\nset -gx E_KEY $K\n", "setenv DEPLOY_TOKEN \n  setenv\tLONG \nset B_SECRET = \nset -gx C_AUTH \nset --export --global D_PW \nsetenv PATH /bin:$PATH\nsetenv LANG C.UTF-8\nset -gx E_KEY $K\n", nil},
		{"nuget prefixed over lines", filterNuGetPasswords, "<n:add xmlns:n=\"urn:x\" key=\"ClearTextPassword\"\n   value=\"p1\" />\n<add key=\"Username\" value=\"ci\" />\n", "<add key=\"Username\" value=\"ci\" />\n", nil},
		{"nuget over lines", filterNuGetPasswords, "<add key=\"ClearTextPassword\"\n     value=\"p1\" />\n<add value=\"p>2\"\n  key='Password' />\n<add key=\"Username\" value=\"ci\" />\n", "<add key=\"Username\" value=\"ci\" />\n", nil},
		{"shell kept", filterShellURLs, "LANG=C.UTF-8\nKEYBOARD=us\nX_TOKEN=$T\nY_KEY=`cat k`\nP=/opt/abcdefghij0123456789\nZ=abcdefghijklmnopqrstuvwxyz\n", "LANG=C.UTF-8\nKEYBOARD=us\nX_TOKEN=$T\nY_KEY=`cat k`\nP=/opt/abcdefghij0123456789\nZ=abcdefghijklmnopqrstuvwxyz\n", nil},
		{"allowed proxy", filterEnvironment, "Environment=LANG=http://u:p@h\n", "Environment=LANG=http://h\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, keys := filterSysConfig([]byte(c.in), c.filter, nil, nil)
			if string(got) != c.want || !slices.Equal(keys, c.keys) {
				t.Errorf("got %q %q, want %q %q", got, keys, c.want, c.keys)
			}
		})
	}
}
