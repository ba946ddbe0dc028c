package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReferencedFilesSSHSpellings: core.sshCommand, in the repository's
// config or a file it includes, names ssh's key as ssh itself reads its
// words: joined to other flags (-qi FILE), through a configuration of
// its own (-F FILE, whose IdentityFile lines name the key), as a
// certificate or an agent's socket (-o CertificateFile=, IdentityAgent).
// Only -i, -iFILE and -o IdentityFile= were listed, so a contained agent
// read the rest (TestRedTeamConfigSSHCommandSpellings, ./internal/cli).
func TestReferencedFilesSSHSpellings(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sshConfig := write("ssh_config", "Host git.example\n  IdentityFile "+dir+"/id_config\n  CertificateFile = \""+dir+"/id_config-cert.pub\"\n  IdentityFile ~/.ssh/id_home\n")
	included := write("included.gitconfig", "[core]\n\tsshCommand = ssh -o IdentityAgent="+dir+"/agent.sock\n")
	cfg := write("config", strings.Join([]string{
		"[core]", `	sshCommand = ssh -F ` + sshConfig + ` -qi \"` + dir + `/id joined\" -o CertificateFile=` + dir + `/id_cert.pub`,
		"[include]", "\tpath = " + included, ""}, "\n"))
	got, err := ReferencedFiles(context.Background(), r, cfg, "/home/ci")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{sshConfig, dir + "/id_config", dir + "/id_config-cert.pub", dir + "/id joined", dir + "/id_cert.pub", included, dir + "/agent.sock"} {
		if !slices.Contains(got, want) {
			t.Errorf("ReferencedFiles = %q, missing %s", got, want)
		}
	}
}

// TestSSHCommandFilesHome: a path in the home is given as it is written
// (~/…), for the caller to expand; a relative one is no file to cover.
func TestSSHCommandFilesHome(t *testing.T) {
	t.Parallel()
	got := SSHCommandFiles("ssh -i ~/.ssh/deploy -F rel/config -i rel/key -o IdentityAgent=none")
	if want := []string{"~/.ssh/deploy"}; !slices.Equal(got, want) {
		t.Errorf("SSHCommandFiles = %q, want %q", got, want)
	}
}

// TestReferencedFilesProgramsAndSigningKey: a config names credentials
// through more keys than its includes, helpers' stores and TLS client
// keys: a credential helper or askpass script given by its path (a
// runner admin's /opt/ci/git-cred.sh printing the token it holds), the
// TLS client key and certificate presented to an HTTPS proxy
// (http.proxySSLKey, http.proxySSLCert) and the ssh key commits are
// signed with (user.signingKey with gpg.format=ssh). A contained agent
// read each (TestRedTeamConfigNamedProgramsAndSigningKey, ./internal/cli).
// A compiled helper (gh's) stays visible; a helper found by name names
// no file.
func TestReferencedFilesProgramsAndSigningKey(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	dir := t.TempDir()
	for name, text := range map[string]string{"cred.sh": "#!/bin/sh\necho password=x\n", "bang.sh": "#!/bin/sh\n", "askpass.sh": "#!/bin/sh\necho x\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	compiled, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	if err := os.WriteFile(cfg, []byte(strings.Join([]string{
		"[credential]", "\thelper = " + dir + "/cred.sh", "\thelper = \"!" + dir + "/bang.sh --verbose\"", "\thelper = " + compiled + " auth git-credential", "\thelper = manager",
		"[core]", "\taskPass = " + dir + "/askpass.sh",
		"[http]", "\tproxySSLKey = /srv/proxy/client.key", "\tproxySSLCert = /srv/proxy/client.pem",
		`[http "https://git.example/"]`, "\tproxySslKey = /srv/proxy/example.key",
		"[user]", "\tname = CI", "\tsigningKey = /srv/sign/id_ed25519",
		"[gpg]", "\tformat = ssh", ""}, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReferencedFiles(context.Background(), r, cfg, "/home/ci")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{dir + "/askpass.sh", dir + "/bang.sh", dir + "/cred.sh", "/srv/proxy/client.key", "/srv/proxy/client.pem", "/srv/proxy/example.key", "/srv/sign/id_ed25519"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ReferencedFiles =\n%q\nwant\n%q", got, want)
	}
	for _, key := range []string{"key::ssh-ed25519 AAAAC3Nz", "0xDEADBEEF"} {
		if got := entryPaths("user.signingkey", key, dir); got != nil {
			t.Errorf("user.signingKey %q names %q, want no file", key, got)
		}
	}
}

// TestSSHConfigKeysIncludes: Include lines are followed (absolute
// patterns; a relative one outside /etc/ssh is the home's), each file
// read once, a loop of includes ending.
func TestSSHConfigKeysIncludes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.conf", "Include "+dir+"/inc/*.conf relative.conf\nIdentityFile /k/main\n")
	write("inc/a.conf", "IdentityFile=/k/a\nInclude "+dir+"/main.conf\n")
	write("inc/b.conf", "Host x\n  IdentityAgent /k/agent.sock\n")
	write("relative.conf", "IdentityFile /k/relative\n")
	got := SSHConfigKeys(filepath.Join(dir, "main.conf"))
	slices.Sort(got)
	if want := []string{"/k/a", "/k/agent.sock", "/k/main"}; !slices.Equal(got, want) {
		t.Errorf("SSHConfigKeys = %q, want %q", got, want)
	}
}
