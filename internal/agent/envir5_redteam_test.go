package agent

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamIniPasswordForms: the machine-wide files whose password
// lines planex leaves out are read by parsers that take more than
// `key = value` on one line: Python's configparser (yum, pip) and
// Subversion take `key: value` and continue a value on the indented
// lines after it, ODBC's drivers take the password as PWD, and MySQL 8
// clients take password1 to password3 (multi-factor), as mount.cifs
// takes password2. A contained agent read each of these passwords; the
// other settings of the files stay.
func TestRedTeamIniPasswordForms(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-iniforms-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/yum.conf":             "[main]\nproxy=http://proxy.corp:3128\nproxy_password =\n    loot-yum-continued\n\n    loot-yum-after-blank\ngpgcheck=1",
		"etc/dnf/dnf.conf":         "[main]\nproxy_password: loot-dnf-colon\nproxy_username: ci",
		"etc/subversion/servers":   "[global]\nhttp-proxy-password : loot-svn-colon\nssl-client-cert-password =\n  loot-svn-continued\nhttp-proxy-host = proxy.corp",
		"etc/odbc.ini":             "[corp]\nDriver=MySQL\nPWD=loot-odbc-pwd\nUID=ci",
		"etc/mysql/conf.d/mfa.cnf": "[client]\nuser=ci\npassword1=loot-mysql-first\npassword2 = loot-mysql-second",
		"etc/msmtprc":              "account default\n  host smtp.corp\n  password loot-msmtp-indented\n  user ci",
		"etc/fstab":                "//nas/b /mnt/b cifs username=ci,password2=loot-cifs-second,uid=1000 0 0",
	}
	out := catPlanted(t, box, dir, etc, files)
	for _, kept := range []string{
		"proxy=http://proxy.corp:3128", "gpgcheck=1", "proxy_username: ci", "http-proxy-host = proxy.corp",
		"Driver=MySQL", "UID=ci", "user=ci", "  host smtp.corp", "  user ci", "cifs username=ci,uid=1000",
	} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's configuration lost %q:\n%s", kept, out)
		}
	}
}
