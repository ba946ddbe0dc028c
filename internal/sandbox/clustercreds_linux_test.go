package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamClusterCredentialsHidden: a machine that runs a Kubernetes
// node keeps the cluster's admin credentials under /etc and /var/snap,
// outside every home: k3s's kubeconfig (/etc/rancher/k3s/k3s.yaml, made
// readable by every uid with --write-kubeconfig-mode 644, as k3s's
// documentation shows for kubectl without sudo) and its config.yaml
// (the cluster's join token) and registries.yaml (registry passwords),
// RKE2's, kubeadm's admin.conf, MicroK8s's credentials (its group's, a
// desktop's first user's). A contained program read a cluster-admin
// credential there; now those folders are covered whatever the network.
func TestRedTeamClusterCredentialsHidden(t *testing.T) {
	needRoot(t) // only root writes /etc and /var
	s := newSandbox(t)
	files := []string{
		"/etc/rancher/k3s/k3s.yaml", "/etc/rancher/k3s/config.yaml", "/etc/rancher/k3s/registries.yaml",
		"/etc/rancher/rke2/rke2.yaml", "/etc/kubernetes/admin.conf", "/etc/kubernetes/super-admin.conf",
		"/var/snap/microk8s/current/credentials/client.config",
	}
	for _, top := range []string{"/etc/rancher", "/etc/kubernetes", "/var/snap/microk8s"} {
		if _, err := os.Lstat(top); err == nil {
			t.Skipf("%s exists on this machine: the test would change it", top)
		}
		top := top
		t.Cleanup(func() { os.RemoveAll(top) })
	}
	// MicroK8s's current is a link to the snap's revision.
	if err := os.MkdirAll("/var/snap/microk8s/7394/credentials", 0o755); err != nil {
		t.Skipf("cannot make /var/snap/microk8s on this machine: %v", err)
	}
	if err := os.Symlink("7394", "/var/snap/microk8s/current"); err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, "client-key-data: redteam-cluster-"+filepath.Base(p)+"\n", 0o644)
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, err := run(t, s, Policy{Network: network}, "/", nil, "cat "+strings.Join(files, " ")+" 2>/dev/null; echo end")
		if !strings.Contains(out, "end") {
			t.Fatalf("%s: %v\n%s", network, err, out)
		}
		if strings.Contains(out, "redteam-cluster") {
			t.Errorf("%s network: the program read a cluster's credentials:\n%s", network, out)
		}
	}
}
