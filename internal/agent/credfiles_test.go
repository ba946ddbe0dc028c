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
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	dir, err := os.MkdirTemp("/srv", "planex-creds-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp and the homes, which the sandbox covers anyway (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	files := map[string]string{
		"gcp/key.json":        "loot-gcp-key",
		"kube/a.yaml":         "loot-kube-a",
		"kube/b.yaml":         "loot-kube-b",
		"krb5cc_1000":         "loot-kerberos",
		"docker/config.json":  "loot-docker-auth",
		"netrc":               "loot-netrc",
		"granted/aws.ini":     "granted-aws",
		"unrelated/notes.txt": "plain-readable",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin",
		"GOOGLE_APPLICATION_CREDENTIALS=" + dir + "/gcp/key.json",
		"KUBECONFIG=" + dir + "/kube/a.yaml:" + dir + "/kube/b.yaml",
		"KRB5CCNAME=FILE:" + dir + "/krb5cc_1000",
		"DOCKER_CONFIG=" + dir + "/docker",
		"NETRC=" + dir + "/netrc",
		"AWS_SHARED_CREDENTIALS_FILE=" + dir + "/granted/aws.ini",
	}
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	cmd := exec.Command("sh", "-c", script.String())
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	c := Containment{Sandbox: box, AllowEnv: []string{"AWS_SHARED_CREDENTIALS_FILE"}}
	cleanup, err := c.PrepareContext(context.Background(), cmd, env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Run()
	cleanup()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, content := range files {
		want := !strings.HasPrefix(content, "loot-")
		if got := strings.Contains(out.String(), content); got != want {
			t.Errorf("%s: want readable=%v, the agent read:\n%s", content, want, out.String())
		}
	}
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
	}
	passed := []string{"AWS_CONFIG_FILE=/srv/aws"}
	got := credentialFiles(base, passed, []string{"/work/repo"})
	want := []string{"/srv/k1", "/srv/k2", "/work/repo/.docker", "/etc/krb5.keytab", "/srv/netrc"}
	if strings.Join(sortedStrings(got), " ") != strings.Join(sortedStrings(want), " ") {
		t.Errorf("credentialFiles = %q, want %q", got, want)
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
