package agent

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// TestRedTeamCredentialFilesNamedByEnv: planex runs where an image or an
// admin keeps credentials outside every home, and names them in the
// environment (GOOGLE_APPLICATION_CREDENTIALS=/srv/…/key.json, a
// KUBECONFIG list, a Kerberos cache, a Docker config folder, a .netrc).
// The variables never reach the agent, but the files did: a contained
// agent that guessed or found the paths printed every one. Now each
// file or folder a held credential variable names is covered; one the
// user passes with --allow-env stays visible, as granted.
func TestRedTeamCredentialFilesNamedByEnv(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-creds-")
	files := map[string]string{
		"gcp/key.json":       "loot-gcp-key",
		"kube/a.yaml":        "loot-kube-a",
		"kube/b.yaml":        "loot-kube-b",
		"krb5cc_1000":        "loot-kerberos",
		"docker/config.json": "loot-docker-auth",
		"netrc":              "loot-netrc",
		"azure/sp.pfx":       "loot-azure-certificate",
		"tf/kube-a":          "loot-terraform-kube-a",
		"tf/kube-b":          "loot-terraform-kube-b",
		"vault/client.key":   "loot-vault-key",
		"hf/token":           "loot-hf-token",
		// The XDG base folders moved out of the home (a CI image's
		// XDG_CONFIG_HOME=/config): gh's token, a keyring, a history.
		"xdg/config/gh/hosts.yml":    "loot-gh-hosts-token",
		"xdg/data/keyrings/login":    "loot-keyring",
		"xdg/state/bash/history":     "loot-shell-history",
		"xdg/cache/git/credential/x": "loot-cache",
		// A Rust image's CARGO_HOME (passed on) after a workflow's
		// cargo login: its registry token, beside the toolchain.
		"cargo/credentials.toml": "loot-crates-token",
		"cargo/credentials":      "loot-crates-token-legacy",
		"cargo/config.toml":      "cargo-config-readable",
		// git's ssh command with a deploy key, its own ssh
		// configuration and certificate, and an askpass script.
		"ssh/deploy_key":          "loot-deploy-key",
		"ssh/config":              "loot-ssh-config",
		"ssh/deploy_key-cert.pub": "loot-ssh-certificate",
		"askpass.sh":              "loot-askpass-token",
		// Tools' folders moved out of the home, and client keys and
		// configurations variables name.
		"gradle/gradle.properties":      "loot-gradle-password",
		"gradle/caches/modules-2/x.jar": "gradle-cache-readable",
		"composer/auth.json":            "loot-composer-token",
		"helm/registry/config.json":     "loot-helm-registry",
		"git/client.key":                "loot-git-client-key",
		"go/env":                        "loot-goproxy-token",
		"conda/condarc":                 "loot-conda-channel-token",
		"poetry/auth.toml":              "loot-poetry-password",
		"granted/aws.ini":               "granted-aws",
		"unrelated/notes.txt":           "plain-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin",
		"GOOGLE_APPLICATION_CREDENTIALS=" + dir + "/gcp/key.json",
		"KUBECONFIG=" + dir + "/kube/a.yaml:" + dir + "/kube/b.yaml",
		"KRB5CCNAME=FILE:" + dir + "/krb5cc_1000",
		"DOCKER_CONFIG=" + dir + "/docker",
		"NETRC=" + dir + "/netrc",
		"AWS_SHARED_CREDENTIALS_FILE=" + dir + "/granted/aws.ini",
		"ARM_CLIENT_CERTIFICATE_PATH=" + dir + "/azure/sp.pfx",
		"KUBE_CONFIG_PATHS=" + dir + "/tf/kube-a:" + dir + "/tf/kube-b",
		"VAULT_CLIENT_KEY=" + dir + "/vault/client.key",
		"HF_TOKEN_PATH=" + dir + "/hf/token",
		"XDG_CONFIG_HOME=" + dir + "/xdg/config", "XDG_DATA_HOME=" + dir + "/xdg/data",
		"XDG_STATE_HOME=" + dir + "/xdg/state", "XDG_CACHE_HOME=" + dir + "/xdg/cache",
		"CARGO_HOME=" + dir + "/cargo",
		"GIT_SSH_COMMAND=ssh -o StrictHostKeyChecking=no -i " + dir + "/ssh/deploy_key -F '" + dir + "/ssh/config' -oCertificateFile=" + dir + "/ssh/deploy_key-cert.pub",
		"GIT_ASKPASS=" + dir + "/askpass.sh",
		"GRADLE_USER_HOME=" + dir + "/gradle", "COMPOSER_HOME=" + dir + "/composer", "HELM_CONFIG_HOME=" + dir + "/helm",
		"GIT_SSL_KEY=" + dir + "/git/client.key", "GOENV=" + dir + "/go/env", "CONDARC=" + dir + "/conda/condarc",
		"POETRY_CONFIG_DIR=" + dir + "/poetry",
	}
	checkPlantedReads(t, "", Containment{Sandbox: box, AllowEnv: []string{"AWS_SHARED_CREDENTIALS_FILE"}}, env, dir, files)
}

// sandboxAndHostFolder is the machine's sandbox and a new folder under
// /srv named with prefix, readable by all and removed after the test: a
// place outside /tmp and the homes, which the sandbox covers anyway. The
// test skips, saying why, without a sandbox or without root.
func sandboxAndHostFolder(t *testing.T, prefix string) (*sandbox.Sandbox, string) {
	t.Helper()
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	dir, err := os.MkdirTemp("/srv", prefix)
	if err != nil {
		t.Skipf("needs a folder outside /tmp and the homes, which the sandbox covers anyway (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return box, dir
}

// plant writes files (a path under dir and its content) with their
// folders, readable by all.
func plant(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkPlantedReads has a program contained by c try to read every
// planted file by its path and fails the test (each message starting
// with label) for each file read though its content holds "loot-", or
// not read though it does not.
func checkPlantedReads(t *testing.T, label string, c Containment, env []string, dir string, files map[string]string) {
	t.Helper()
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	// A covered folder's file is missing: the script's status is its
	// last cat's, whichever file that is, so it ends with true.
	script.WriteString("true")
	out := runContained(t, c, env, "sh", "-c", script.String())
	for _, content := range files {
		want := !strings.Contains(content, "loot-")
		if got := strings.Contains(out, content); got != want {
			t.Errorf("%s%.40s: want readable=%v, the agent read:\n%s", label, content, want, out)
		}
	}
}

// runContained runs name with args in / under c with environment env and
// returns what it printed (standard output and error together). Preparing
// or running it failing fails the test.
func runContained(t *testing.T, c Containment, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cleanup, err := c.PrepareContext(context.Background(), cmd, env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Run()
	cleanup()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

// TestCredentialFiles: which paths a credential variable names, and
// which are left alone: passed variables, Kerberos caches that are no
// file, folders the system or the step needs.
func TestCredentialFiles(t *testing.T) {
	t.Parallel()
	base := []string{
		"KUBECONFIG=/srv/k1::/srv/k2",
		"KRB5CCNAME=KEYRING:persistent:1000",
		"KRB5_KTNAME=/etc/krb5.keytab",
		"GNUPGHOME=/etc",
		"DOCKER_CONFIG=/work/repo/.docker",
		"CLOUDSDK_CONFIG=/work",
		"GOOGLE_APPLICATION_CREDENTIALS=/srv/k1",
		"NETRC=/srv/netrc",
		"AWS_CONFIG_FILE=/srv/aws",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/srv/bus,guid=1;unix:abstract=/tmp/x;tcp:host=h",
		"DBUS_SYSTEM_BUS_ADDRESS=unix:path=/srv/system%20bus%2",
		"KRB5_CLIENT_KTNAME=DIR::/srv/krb5/tkt1",
		"ARM_OIDC_TOKEN_FILE_PATH=/srv/azure-token",
		"KAGGLE_CONFIG_DIR=/srv/kaggle",
		"XDG_CONFIG_HOME=/config", "XDG_CACHE_HOME=/",
		// No CARGO_HOME: Cargo's folder in the home, which a grant
		// (--sandbox-read ~/.cargo) may show.
		"HOME=/home/u",
	}
	passed := []string{"AWS_CONFIG_FILE=/srv/aws"}
	got := credentialFiles(append(base, "XDG_RUNTIME_DIR=/srv/run"), passed, []string{"/work/repo", "/srv/run/tmp", "/home/u/.cargo"})
	want := []string{"/srv/k1", "/srv/k2", "/work/repo/.docker", "/etc/krb5.keytab", "/srv/netrc", "/srv/bus",
		"/srv/system bus%2", "/srv/krb5/tkt1", "/srv/azure-token", "/srv/kaggle", "/config",
		"/home/u/.cargo/credentials.toml", "/home/u/.cargo/credentials"}
	if strings.Join(sortedStrings(got), " ") != strings.Join(sortedStrings(want), " ") {
		t.Errorf("credentialFiles = %q, want %q", got, want)
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

// TestRedTeamSessionSocketsNamedByEnv: a local run in a desktop session
// kept outside /run/user (WSLg's runtime folder, a bus address of an
// admin's choosing) with the network open: the session bus starts
// programs for whoever connects (systemd-run --user) and the runtime
// folder holds the session's other sockets (a keyring daemon,
// gpg-agent). The variables never reached the agent, but both sockets
// did; now what DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR name is
// covered.
func TestRedTeamSessionSocketsNamedByEnv(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-session-")
	runtime := filepath.Join(dir, "runtime")
	if err := os.MkdirAll(runtime, 0o755); err != nil {
		t.Fatal(err)
	}
	bus := filepath.Join(dir, "bus")
	keyring := filepath.Join(runtime, "keyring", "control")
	if err := os.MkdirAll(filepath.Dir(keyring), 0o755); err != nil {
		t.Fatal(err)
	}
	var ls []*sandboxtest.Listener
	for _, sock := range []string{bus, keyring} {
		ls = append(ls, sandboxtest.Listen(t, "unix", sock))
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	probe := netProbe.Path(t)
	env := []string{"PATH=/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS=unix:path=" + bus + ",guid=0123;unix:abstract=/tmp/dbus-x", "XDG_RUNTIME_DIR=" + runtime}
	c := Containment{Sandbox: box, Network: sandbox.NetworkOpen, Read: []string{filepath.Dir(probe)}}
	out := runContained(t, c, env, "sh", "-c", probe+" unix "+bus+" loot; "+probe+" unix "+keyring+" loot")
	for i, l := range ls {
		if got := l.Got(); len(got) > 0 {
			t.Errorf("the agent reached the session's socket %d: %q\n%s", i, got, out)
		}
	}
}

// TestLocalSessionVariablesStayOut: planex run locally in a developer's
// shell, which holds cloud keys, a GitHub token, the session's sockets
// and a proxy with a password: none of them reaches a step's
// environment, contained or not; the proxy passes only without its
// password, and only where the step keeps the host's network. This held
// before it was written (the allow-list).
func TestLocalSessionVariablesStayOut(t *testing.T) {
	t.Parallel()
	base := []string{"PATH=/usr/bin:/bin", "HOME=/home/dev", "LANG=C.UTF-8", "TERM=xterm-256color", "USER=dev",
		"AWS_ACCESS_KEY_ID=AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY=aws-secret-value", "AWS_SESSION_TOKEN=aws-session-value",
		"GH_TOKEN=ghp_example", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
		"KRB5CCNAME=FILE:/tmp/krb5cc_1000", "GOOGLE_APPLICATION_CREDENTIALS=/home/dev/key.json", "DOCKER_HOST=unix:///run/docker.sock",
		"XDG_RUNTIME_DIR=/run/user/1000", "https_proxy=http://dev:proxy-password@proxy:3128", "HTTP_PROXY=http://proxy:3128",
		"VAULT_TOKEN=hvs.example", "DATABASE_URL=postgres://dev:db-password@db/app"}
	cmd := exec.Command("/bin/true")
	cleanup, err := Containment{}.Prepare(cmd, base, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	want := []string{"HOME=/home/dev", "HTTP_PROXY=http://proxy:3128", "LANG=C.UTF-8", "PATH=/usr/bin:/bin", "TERM=xterm-256color", "USER=dev"}
	if got := sortedStrings(cmd.Env); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("an uncontained step's environment:\n got %q\nwant %q", got, want)
	}
}

// TestSSHCommandFiles: the files an ssh command line names.
func TestSSHCommandFiles(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string][]string{
		"ssh -i /k/a -F /k/cfg":                                  {"/k/a", "/k/cfg"},
		"ssh -i/k/b -o IdentityFile=/k/c":                        {"/k/b", "/k/c"},
		`ssh -o "identityfile=/k/d" -oCertificateFile=/k/e`:      {"/k/d", "/k/e"},
		"ssh -o StrictHostKeyChecking=no -i ~/.ssh/x":            nil,
		"ssh -p 22 -l git -i":                                    nil,
		"/usr/bin/ssh -v":                                        nil,
		`ssh -o "IdentityFile /k/f" -o 'CertificateFile = /k/g'`: {"/k/f", "/k/g"},
		"ssh -4vi /k/h -vF/k/cfg2 -p22 -i":                       {"/k/h", "/k/cfg2"},
		`ssh -i /k/with\ space -l git`:                           {"/k/with space"},
		"ssh -l -i /k/not-a-key":                                 nil,
	} {
		if got := sshCommandFiles(cmd); !slices.Equal(got, want) {
			t.Errorf("sshCommandFiles(%q) = %q, want %q", cmd, got, want)
		}
	}
}
