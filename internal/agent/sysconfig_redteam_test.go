package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestRedTeamMachineProxyAndRepoPasswords: the places an admin of a
// self-hosted runner (or a corporate image) keeps the proxy's password
// and the package repositories' credentials, outside every home and
// readable by every uid: apt's configuration, its sources and its
// netrc-style auth files, the Docker daemon's proxy drop-in (the way
// Docker's documentation gives) and daemon.json, systemd's units (their
// Environment= lines, their command lines, the EnvironmentFile= they
// name elsewhere) and manager-wide DefaultEnvironment=, yum's and dnf's
// repositories and proxy, wget's machine-wide wgetrc. A contained agent
// read every one. Now each is shown without its credentials, or covered,
// and what holds none stays readable.
func TestRedTeamMachineProxyAndRepoPasswords(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-sysconf-")
	etc := filepath.Join(dir, "etc")
	envFile := filepath.Join(dir, "opt", "ci-agent", "agent.env")
	files := map[string]string{
		"etc/apt/apt.conf.d/95proxy":                          `Acquire::http::Proxy "http://ci:loot-apt-proxy@proxy.corp:3128/";`,
		"etc/apt/apt.conf":                                    "Acquire {\n  https::Proxy \"http://ci:loot-apt-block@proxy.corp:3128/\";\n};",
		"etc/apt/auth.conf.d/corp.conf":                       "machine apt.corp login ci password loot-apt-auth",
		"etc/apt/auth.conf":                                   "machine apt2.corp login ci password loot-apt-auth-main",
		"etc/apt/sources.list.d/corp.list":                    "deb https://ci:loot-apt-source@apt.corp/debian stable main",
		"etc/apt/sources.list":                                "deb http://deb.debian.org/debian bookworm main",
		"etc/apt/sources.list.d/cloudsmith.list":              "deb https://dl.cloudsmith.io/loot-cloudsmith-token/acme/tools/deb/debian bookworm main",
		"etc/profile.d/conda.sh":                              "export CONDA_CHANNEL=https://conda.anaconda.org/t/loot-anaconda-token/acme",
		"etc/systemd/system/docker.service.d/http-proxy.conf": "[Service]\nEnvironment=\"HTTPS_PROXY=http://ci:loot-docker-dropin@proxy.corp:3128\"",
		"etc/systemd/system/ci-agent.service":                 "[Service]\nExecStart=/opt/ci-agent/run --token loot-unit-cmdline\nEnvironmentFile=-" + envFile,
		"etc/systemd/system/runner.service":                   "[Service]\nEnvironmentFile=" + etc + "/default/ci-runner",
		"etc/default/ci-runner":                               "RUNNER_TOKEN=loot-default-envfile\nhttp_proxy=http://ci:loot-default-envfile-proxy@proxy.corp:3128\nTZ=UTC",
		"etc/systemd/system.conf.d/proxy.conf":                "[Manager]\nDefaultEnvironment=\"http_proxy=http://ci:loot-default-env@proxy.corp:3128\" DEPLOY_TOKEN=loot-default-token \\\n  LANG=C.UTF-8 TZ=UTC",
		"etc/systemd/system.conf":                             "[Manager]\n#DefaultEnvironment=",
		"etc/docker/daemon.json":                              `{"proxies": {"http-proxy": "http://ci:loot-daemon-json@proxy.corp:3128"}, "data-root": "/var/lib/docker"}`,
		"etc/yum.repos.d/corp.repo":                           "[corp]\nbaseurl=https://ci:loot-yum-url@rpm.corp/el9/\nusername=ci\npassword=loot-yum-password\nsslclientkey=" + filepath.Join(dir, "keys", "yum.key"),
		"etc/dnf/dnf.conf":                                    "[main]\nproxy=http://proxy.corp:3128\nproxy_username=ci\nproxy_password=loot-dnf-proxy",
		"etc/yum.conf":                                        "[main]\nproxy_password = loot-yum-proxy",
		"etc/wgetrc":                                          "use_proxy = on\nhttp_proxy = http://ci:loot-wget-url@proxy.corp:3128/\nhttp_password = loot-wget-password\nproxy-passwd = loot-wget-proxy",
		"etc/profile.d/proxy.sh":                              `export https_proxy="http://ci:loot-profile-proxy@proxy.corp:3128"`,
		"etc/bash.bashrc":                                     `PS1='${debian_chroot:+($debian_chroot)}\u@\h:\w\$ '`,
		"etc/sysconfig/proxy":                                 `HTTP_PROXY="http://ci:loot-sysconfig@proxy.corp:3128"`,
		"etc/default/docker":                                  `export http_proxy="http://ci:loot-default-docker@proxy.corp:3128/"`,
		"etc/gemrc":                                           ":sources:\n- https://ci:loot-gem@gems.corp/",
		"opt/ci-agent/agent.env":                              "RUNNER_TOKEN=loot-envfile-token\nTZ=UTC",
		"keys/yum.key":                                        "loot-yum-client-key",
	}
	plant(t, dir, files)
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("true")
	c := Containment{Sandbox: box, etcDir: etc}
	out := runContained(t, c, []string{"PATH=/usr/bin:/bin"}, "sh", "-c", script.String())
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "loot-") {
			t.Errorf("the agent read %q", l)
		}
	}
	for _, kept := range []string{
		`Acquire::http::Proxy "http://proxy.corp:3128/";`, `https::Proxy "http://proxy.corp:3128/";`,
		"deb https://apt.corp/debian stable main", "deb http://deb.debian.org/debian bookworm main",
		"deb https://dl.cloudsmith.io/acme/tools/deb/debian bookworm main", "export CONDA_CHANNEL=https://conda.anaconda.org/acme",
		"LANG=C.UTF-8 TZ=UTC", "#DefaultEnvironment=",
		`"http-proxy": "http://proxy.corp:3128"`, `"data-root": "/var/lib/docker"`,
		"baseurl=https://rpm.corp/el9/", "username=ci", "proxy=http://proxy.corp:3128",
		"use_proxy = on", "http_proxy = http://proxy.corp:3128/", "TZ=UTC",
		`export https_proxy="http://proxy.corp:3128"`, `PS1='${debian_chroot:+($debian_chroot)}\u@\h:\w\$ '`,
		`HTTP_PROXY="http://proxy.corp:3128"`, `export http_proxy="http://proxy.corp:3128/"`, "- https://gems.corp/",
	} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamMachineServicePasswords: more places a machine's services
// keep a password in a file every uid reads: a CIFS share's password
// in /etc/fstab's mount options (or an autofs map's), the LDAP bind
// password of nss_ldap's and pam_ldap's configurations (bindpw, often
// 644 on older systems), ssmtp's and msmtp's mail relay passwords. A
// contained agent read each; now the password is left out and the rest
// of each file stays.
func TestRedTeamMachineServicePasswords(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-syspass-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/fstab":            "UUID=1234 / ext4 defaults 0 1\n//nas/builds /mnt/builds cifs username=ci,password=loot-fstab-cifs,uid=1000 0 0\n//nas/b /mnt/b cifs user=ci,pass=loot-fstab-pass,credentials=" + filepath.Join(dir, "cifs.cred") + " 0 0",
		"etc/auto.nas":         "builds -fstype=cifs,username=ci,password=loot-autofs ://nas/builds",
		"etc/libnss-ldap.conf": "uri ldap://ldap.corp\nbinddn cn=proxy,dc=corp\nbindpw loot-nss-ldap",
		"etc/pam_ldap.conf":    "rootbindpw loot-pam-ldap-root\nbindpw\tloot-pam-ldap",
		"etc/nslcd.conf":       "bindpw loot-nslcd",
		"etc/ssmtp/ssmtp.conf": "mailhub=smtp.corp:587\nAuthUser=ci\nAuthPass=loot-ssmtp",
		"etc/msmtprc":          "account default\nhost smtp.corp\nuser ci\npassword loot-msmtp",
		"cifs.cred":            "username=ci\npassword=loot-cifs-credentials",
	}
	out := catPlanted(t, box, dir, etc, files)
	for _, kept := range []string{
		"UUID=1234 / ext4 defaults 0 1", "//nas/builds /mnt/builds cifs username=ci,uid=1000 0 0",
		"-fstype=cifs,username=ci ://nas/builds", "uri ldap://ldap.corp", "binddn cn=proxy,dc=corp",
		"mailhub=smtp.corp:587", "AuthUser=ci", "host smtp.corp", "user ci",
	} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's configuration lost %q:\n%s", kept, out)
		}
	}
}

// catPlanted plants files under dir, has a contained program (its
// machine-wide configuration read from etc) print each, fails the test
// for every line it read holding "loot-", and returns what it printed.
func catPlanted(t *testing.T, box *sandbox.Sandbox, dir, etc string, files map[string]string) string {
	t.Helper()
	plant(t, dir, files)
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("true")
	out := runContained(t, Containment{Sandbox: box, etcDir: etc}, []string{"PATH=/usr/bin:/bin"}, "sh", "-c", script.String())
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "loot-") {
			t.Errorf("the agent read %q", l)
		}
	}
	return out
}
