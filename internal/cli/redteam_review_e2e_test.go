//go:build linux

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamConfigSSHCommandSpellings: the repository's core.sshCommand
// (a runner admin's, or a developer's deploy key set with git config)
// names the key as ssh reads it but not as -i FILE: joined to another
// flag (-qi FILE), through a configuration of its own (-F FILE and its
// IdentityFile line) and as a certificate (-o CertificateFile=). A
// command agent read all three keys: only -i, -iFILE and
// -o IdentityFile= were covered.
func TestRedTeamConfigSSHCommandSpellings(t *testing.T) {
	t.Parallel()
	root := outsideTemp(t, "redteam-sshspell-")
	secrets := map[string]string{"id_joined": "ssh-joined-key-61c0a2", "id_config": "ssh-config-key-0f93de", "id_cert": "ssh-cert-b72e15"}
	for name, v := range secrets {
		if err := os.WriteFile(filepath.Join(root, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "ssh_config"), []byte("Host *\n  IdentityFile "+filepath.Join(root, "id_config")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	command := "ssh -F " + filepath.Join(root, "ssh_config") + " -qi " + filepath.Join(root, "id_joined") + " -o CertificateFile=" + filepath.Join(root, "id_cert")
	r := runRedTeam(t, "config-named-files.sh", "on", func(cmd *exec.Cmd) {
		set := exec.Command("git", "config", "core.sshCommand", command)
		set.Dir = cmd.Dir
		if out, err := set.CombinedOutput(); err != nil {
			t.Fatalf("git config: %v: %s", err, out)
		}
		cmd.Env = append(cmd.Env, "RED_TEAM="+root)
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	r.loot(t, []string{"id_joined", "read"}, secrets, "the repository's core.sshCommand names")
}

// TestRedTeamConfigNamedProgramsAndSigningKey: the repository's git
// config (a runner admin's or a developer's) names files that hold a
// credential through keys planex did not read: a credential helper and
// an askpass program given by their path, each a script printing the
// token it holds (credential.helper, core.askPass), the TLS key
// presented to an HTTPS proxy (http.proxySSLKey) and the ssh key
// commits are signed with (user.signingKey, gpg.format=ssh). A command
// agent read all four; the config it is shown has no credential
// section, but the files stayed where the config said.
func TestRedTeamConfigNamedProgramsAndSigningKey(t *testing.T) {
	t.Parallel()
	root := outsideTemp(t, "redteam-cfgprog-")
	secrets := map[string]string{"cred.sh": "#!/bin/sh\necho password=helper-token-3e81c7", "askpass.sh": "#!/bin/sh\necho askpass-token-a40d19",
		"proxy.key": "proxy-tls-key-5b22f0", "signing_key": "signing-key-c9e604"}
	for name, v := range secrets {
		if err := os.WriteFile(filepath.Join(root, name), []byte(v+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := runRedTeam(t, "config-named-files.sh", "on", func(cmd *exec.Cmd) {
		for _, kv := range [][2]string{
			{"credential.helper", filepath.Join(root, "cred.sh")},
			{"core.askPass", filepath.Join(root, "askpass.sh")},
			{"http.proxySSLKey", filepath.Join(root, "proxy.key")},
			{"gpg.format", "ssh"},
			{"user.signingKey", filepath.Join(root, "signing_key")},
		} {
			set := exec.Command("git", "config", kv[0], kv[1])
			set.Dir = cmd.Dir
			if out, err := set.CombinedOutput(); err != nil {
				t.Fatalf("git config %s: %v: %s", kv[0], err, out)
			}
		}
		cmd.Env = append(cmd.Env, "RED_TEAM="+root)
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "signing_key") || !strings.Contains(loot, "read") {
		t.Fatalf("the agent did not find the files' names or did not read:\n%s", loot)
	}
	for name, v := range secrets {
		if _, after, _ := strings.Cut(v, "echo "); after != "" {
			v = after
		}
		if strings.Contains(loot, v) {
			t.Errorf("the agent read %s, which the repository's config names:\n%s", name, loot)
		}
	}
}
