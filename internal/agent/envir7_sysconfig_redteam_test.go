package agent

import (
	"strings"
	"testing"
)

// TestRedTeamMySQLOptionFileForms: MySQL's and MariaDB's clients read
// the files a machine-wide option file includes (!include FILE,
// !includedir DIR: its *.cnf files) wherever they lie, and MariaDB takes
// a long option by any prefix no other option shares (pass=, passw=,
// also after loose-); a client's TLS key is named by ssl-key=. A
// contained agent read each password and the key: the files outside
// /etc were shown whole, and the prefixes were no password key.
func TestRedTeamMySQLOptionFileForms(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-mysqlforms-")
	files := map[string]string{
		"etc/mysql/my.cnf": "[client]\nuser=ci\n!includedir " + dir + "/db/conf.d/\n!include " + dir + "/db/client.cnf\n",
		"etc/mysql/mariadb.conf.d/50-client.cnf": "[client]\nhost=db.corp\npass=loot-mariadb-pass\npassw = loot-mariadb-passw\n" +
			"passwo=loot-mariadb-passwo\nloose-passw=loot-mariadb-loose\npas=loot-mariadb-pas",
		"db/client.cnf":       "[client]\nport=3306\npassword=loot-included-file",
		"db/conf.d/extra.cnf": "[client]\nsocket=/run/mysqld.sock\npassword=loot-included-dir\n!include " + dir + "/db/nested.cnf",
		"db/nested.cnf":       "[client]\npassword=loot-nested\nssl-key=" + dir + "/db/client-key.pem",
		"db/client-key.pem":   "loot-client-key",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"user=ci", "host=db.corp", "port=3306", "socket=/run/mysqld.sock"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the option files lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamMountPasswordAfterUserName: mount.cifs takes the password
// in the user name option too, after a %: user=ci%secret,
// username=CORP/ci%secret. A contained agent read the password in the
// machine's fstab and an autofs map; the user name stays.
func TestRedTeamMountPasswordAfterUserName(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-cifsuser-")
	files := map[string]string{
		"etc/fstab":      "//nas/a /mnt/a cifs user=ci%loot-cifs-user,uid=1000 0 0",
		"etc/auto.corp":  "share -fstype=cifs,username=CORP/ci%loot-autofs-user,rw ://nas/share",
		"etc/auto.other": "plain -fstype=nfs,rw nas:/plain",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"cifs user=ci,uid=1000", "-fstype=cifs,username=CORP/ci,rw", "nas:/plain"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the mount tables lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamCondaConfigYAMLSpellings: conda reads its configuration as
// YAML, where a double-quoted string may spell a character as an escape
// (\x40 for the @ before a host, \x2f for a slash) and continue over
// lines (a \ at a line's end joins them): a channel's /t/<token> or a
// proxy's password so spelt passed the line filter, and so did a client
// key named with escapes. A contained agent read them; each is left out
// now, the channels and the proxy's host kept.
func TestRedTeamCondaConfigYAMLSpellings(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-condayaml-")
	plant(t, dir, map[string]string{
		"root/.condarc": "channels:\n  - \"https://conda.anaconda.org\\x2ft\\x2floot-conda-escaped/private-org\"\n" +
			"  - \"https://conda.anaconda.org/t/\\\n    loot-conda-continued/other-org\"\n  - conda-forge\n" +
			"proxy_servers:\n  https: \"http://ci:loot-conda-proxy\\x40proxy.corp:3128\"\n" +
			"client_ssl_cert_key: \"" + strings.ReplaceAll(dir, "/", "\\x2f") + "/keys/conda.key\"\n",
		"keys/conda.key": "loot-conda-client-key",
	})
	env := []string{"PATH=/usr/bin:/bin", "CONDA_ROOT=" + dir + "/root"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+dir+"/root/.condarc "+dir+"/keys/conda.key 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read conda's credentials:\n%s", out)
	}
	for _, kept := range []string{"private-org", "other-org", "conda-forge", "proxy.corp:3128"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamMachineClientKeysCovered: an admin gives the machine's
// container engines a private registry's client key
// (/etc/docker/certs.d/<registry>/client.key, the same under
// /etc/containers/certs.d for Podman) and OpenVPN its client's key and
// password file (/etc/openvpn/client/), often readable by every uid as
// copied: a contained agent read them. The keys and the OpenVPN folder
// are covered now; the registries' CA certificates stay.
func TestRedTeamMachineClientKeysCovered(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-etckeys-")
	files := map[string]string{
		"etc/docker/certs.d/registry.corp:5000/client.key":  "loot-docker-client-key",
		"etc/docker/certs.d/registry.corp:5000/client.cert": "docker-client-cert-readable",
		"etc/docker/certs.d/registry.corp:5000/ca.crt":      "docker-ca-readable",
		"etc/containers/certs.d/registry.corp/client.key":   "loot-podman-client-key",
		"etc/openvpn/client/corp.conf":                      "auth-user-pass /etc/openvpn/client/pass\n<key>\nloot-openvpn-inline-key\n</key>",
		"etc/openvpn/client/pass":                           "ci\nloot-openvpn-password",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"docker-ca-readable", "docker-client-cert-readable"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamRSiteEnvironment: R reads the site's environment file
// (/etc/R/Renviron.site) into every session, where an admin gives
// packages a GITHUB_PAT for installing from GitHub and a proxy with its
// password: a contained agent read both. It is shown without them now,
// as the shells' machine-wide files are; R's own settings stay.
func TestRedTeamRSiteEnvironment(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-renviron-")
	files := map[string]string{
		"etc/R/Renviron.site": "R_LIBS_SITE=/usr/local/lib/R/site-library\nGITHUB_PAT=loot-r-github-pat-0123456789abcdef\n" +
			"https_proxy=http://ci:loot-r-proxy@proxy.corp:3128",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"R_LIBS_SITE=/usr/local/lib/R/site-library", "proxy.corp:3128"} {
		if !strings.Contains(out, kept) {
			t.Errorf("R's site environment lost %q:\n%s", kept, out)
		}
	}
}
