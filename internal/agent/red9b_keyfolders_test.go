package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamKeysAroundTheFolderBounds: the files of a folder a held
// variable names are judged within bounds (its first 4 KiB unless a
// PEM block starts there, 512 entries, links to folders not followed),
// and an attacker who knows them reads what lies just past them: a
// kubeconfig whose clusters' certificate data (base64, no PEM line)
// fills the first 4 KiB before its user's client-key-data, a key in a
// folder a link inside the named one leads to, read through the link
// or where it lies, and a key in a folder read after a crowded
// certificate folder spent the entries' budget.
func TestRedTeamKeysAroundTheFolderBounds(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-keybounds-")
	ca := strings.Repeat("TUlJRmF6Q0NBMU9nQXdJQkFnSVJBSUlRejdEU1FPTlpSR1BndTJPQ2l3QXdEUVlKS29aSWh2Y05BUUVMQlFB", 60)
	files := map[string]string{
		"kube/config": "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: " + ca +
			"\n    server: https://k8s.corp\n  name: corp\nusers:\n- name: ci\n  user:\n    client-key-data: loot-kube-client-key",
		"kube/readme":             "kube-readme-readable",
		"shared/deploy.pem":       "-----BEGIN PRIVATE KEY-----\nloot-linked-folder-key",
		"crowded/z/private/a.key": "-----BEGIN EC PRIVATE KEY-----\nloot-crowded-key",
	}
	for i := range 600 {
		files[fmt.Sprintf("crowded/certs/c%03d.pem", i)] = fmt.Sprintf("-----BEGIN CERTIFICATE-----\ncert-%03d-readable", i)
	}
	plant(t, dir, files)
	if err := os.MkdirAll(dir+"/tls", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir+"/shared", dir+"/tls/current"); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "KUBE_DIR=" + dir + "/kube", "TLS_DIR=" + dir + "/tls", "CERTS_HOME=" + dir + "/crowded"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+filepath.Join(dir, "tls/current/deploy.pem")+" 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read a key through the folder's link: %s", out)
	}
}

// TestRedTeamKeysPastTheSniffDeeper: the bounds of a held variable's
// file and folder one step further: a kubeconfig of many clusters,
// named by a variable whose name says nothing of a secret, whose
// clusters' certificate data fill the first 64 KiB before its users'
// client-key-data, and a key four folders below the one a variable
// names (prod/eu/db/replica/tls.key).
func TestRedTeamKeysPastTheSniffDeeper(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-keydeeper-")
	ca := strings.Repeat("TUlJRmF6Q0NBMU9nQXdJQkFnSVJBSUlRejdEU1FPTlpSR1BndTJPQ2l3QXdEUVlKS29aSWh2Y05BUUVMQlFB", 40)
	var kube strings.Builder
	kube.WriteString("apiVersion: v1\nclusters:\n")
	for i := range 30 {
		fmt.Fprintf(&kube, "- cluster:\n    certificate-authority-data: %s\n    server: https://k8s-%d.corp\n  name: c%d\n", ca, i, i)
	}
	kube.WriteString("users:\n- name: ci\n  user:\n    client-key-data: loot-kube-past-64k")
	files := map[string]string{
		"platform/kubeconfig":                  kube.String(),
		"appdata/prod/eu/db/replica/tls.key":   "-----BEGIN EC PRIVATE KEY-----\nloot-four-down",
		"appdata/prod/eu/db/replica/tls.crt":   "-----BEGIN CERTIFICATE-----\ndeep-cert-readable",
		"appdata/prod/eu/db/replica/README.md": "deep-readme-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "PLATFORM_CLUSTERS=" + dir + "/platform/kubeconfig", "APP_DATA_ROOT=" + dir + "/appdata"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
