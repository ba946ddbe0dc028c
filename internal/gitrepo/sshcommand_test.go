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
