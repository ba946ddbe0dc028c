//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMountedSecretsHidden: a Kubernetes runner pod (Actions Runner
// Controller) holds its service account's token at
// /run/secrets/kubernetes.io/serviceaccount/token, readable by every
// uid, and Docker puts a service's secrets under /run/secrets. A
// contained program that reads them (to commit the token, say) finds
// nothing there, whatever its network.
func TestMountedSecretsHidden(t *testing.T) {
	needRoot(t) // only root may make a folder under /run
	s := newSandbox(t)
	const token = "eyJhbGciOiJSUzI1NiJ9.redteam-service-account-token"
	dir := "/run/secrets"
	if _, err := os.Lstat(dir); err == nil {
		d, err := os.MkdirTemp(dir, "planex-redteam-")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
	} else if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make %s on this machine: %v", dir, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sa := filepath.Join(dir, "kubernetes.io", "serviceaccount")
	if err := os.MkdirAll(sa, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sa, "token"), token, 0o644)
	// Readable to any uid outside the sandbox: the attack is real.
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, err := run(t, s, Policy{Network: network}, "/", nil,
			"cat "+filepath.Join(sa, "token")+" /var/run/secrets/kubernetes.io/serviceaccount/token; echo \"listed: $(ls -A /run/secrets | tr '\\n' ' ')end\"")
		if err != nil && !strings.Contains(out, "listed: ") {
			t.Fatalf("%s: %v\n%s", network, err, out)
		}
		if strings.Contains(out, token) || !strings.Contains(out, "listed: end") {
			t.Errorf("%s network: the program read the mounted secrets:\n%s", network, out)
		}
	}
}

// TestCrashDumpsHidden: apport keeps the crash reports of a user's
// processes in /var/crash (their memory, base64, readable by that user)
// and systemd-coredump their core files in /var/lib/systemd/coredump
// (with an ACL that lets the user read them): the memory of a crashed
// process that held a token. A contained program finds neither folder's
// files, whatever its network. The test plants a report readable by every
// uid in each (a folder it made, or one of its own inside the real one).
func TestCrashDumpsHidden(t *testing.T) {
	needRoot(t) // only root may write under /var
	s := newSandbox(t)
	const secret = "ghs_redteamCrashDumpTokenInMemory"
	var files []string
	for _, dir := range []string{"/var/crash", "/var/lib/systemd/coredump"} {
		place := dir
		if _, err := os.Lstat(dir); err == nil {
			d, err := os.MkdirTemp(dir, "planex-redteam-")
			if err != nil {
				t.Fatal(err)
			}
			place = d
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Skipf("cannot make %s on this machine: %v", dir, err)
		}
		t.Cleanup(func() { os.RemoveAll(place) })
		if err := os.Chmod(place, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(place, "_usr_bin_gh.1000.crash")
		writeFile(t, f, "CoreDump: base64\n "+secret+"\n", 0o644)
		files = append(files, f)
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, _ := run(t, s, Policy{Network: network}, "/", nil, "cat "+strings.Join(files, " ")+" 2>/dev/null; echo \"listed: $(ls -A /var/crash /var/lib/systemd/coredump | grep -v ':$' | tr -d '\\n')end\"")
		if strings.Contains(out, secret) || !strings.Contains(out, "listed: end") {
			t.Errorf("%s network: the program read the crash dumps:\n%s", network, out)
		}
	}
}

// TestSystemLogsHidden: the system's logs and journal are readable by
// the adm and systemd-journal groups, which the runner user of GitHub's
// hosted runners is in and a non-root planex's program keeps; sudo logs
// there the command line of everything an earlier step ran with it,
// passwords and tokens among the arguments. A user's mail spool holds
// what cron mailed them (their jobs' output). A contained program finds
// no file in /var/log, /run/log or the mail spools, whatever its network. The test
// plants a log readable by every uid (the attack is real without the
// groups) in a folder of its own inside each.
func TestSystemLogsHidden(t *testing.T) {
	t.Parallel()
	needRoot(t) // only root may write under /var/log
	s := newSandbox(t)
	const secret = "ghs_redteamTokenInSudoLog"
	var files []string
	for _, dir := range []string{"/var/log", "/run/log/journal", "/var/mail"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Skipf("cannot make %s on this machine: %v", dir, err)
		}
		place, err := os.MkdirTemp(dir, "planex-redteam-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(place) })
		if err := os.Chmod(place, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(place, "auth.log")
		writeFile(t, f, "sudo: runner : COMMAND=/usr/bin/docker login -p "+secret+"\n", 0o644)
		files = append(files, f)
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, _ := run(t, s, Policy{Network: network}, "/", nil, "cat "+strings.Join(files, " ")+" 2>/dev/null; echo \"listed: $(ls -A /var/log /run/log /var/mail /var/spool/mail | grep -v ':$' | tr -d '\\n')end\"")
		if strings.Contains(out, secret) || !strings.Contains(out, "listed: end") {
			t.Errorf("%s network: the program read the system's logs:\n%s", network, out)
		}
	}
}

// TestOtherCIRunnerConfigsHidden: on a CircleCI machine runner, a
// Buildkite agent or a GitLab runner, the runner's configuration holds
// the token it authenticates with, outside every home and readable by
// the user its jobs (and so planex's agents) run as: with it a program
// could register as the runner and take the organisation's jobs. A
// contained program reads none of them, whatever its network. The test
// plants each (in a folder of its own inside a real one, and leaves an
// existing file alone).
func TestOtherCIRunnerConfigsHidden(t *testing.T) {
	needRoot(t) // only root writes /etc and /opt
	s := newSandbox(t)
	var paths []string
	for _, c := range []struct{ dir, file string }{
		{"/etc/circleci-runner", "circleci-runner-config.yaml"},
		{"/opt/circleci", "launch-agent-config.yaml"},
		{"/etc/buildkite-agent", "buildkite-agent.cfg"},
		{"/etc/gitlab-runner", "config.toml"},
	} {
		p := filepath.Join(c.dir, c.file)
		switch _, err := os.Lstat(c.dir); {
		case err != nil:
			if err := os.MkdirAll(c.dir, 0o755); err != nil {
				t.Skipf("cannot make %s on this machine: %v", c.dir, err)
			}
			dir := c.dir
			t.Cleanup(func() { os.RemoveAll(dir) })
		case c.file == "launch-agent-config.yaml" || c.file == "buildkite-agent.cfg":
			if _, err := os.Lstat(p); err == nil {
				t.Logf("%s exists on this machine: left alone", p)
				continue
			}
			t.Cleanup(func() { os.Remove(p) })
		default:
			d, err := os.MkdirTemp(c.dir, "planex-redteam-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(d) })
			p = filepath.Join(d, c.file)
		}
		writeFile(t, p, "token: redteam-runner-token-"+c.file+"\n", 0o644)
		paths = append(paths, p)
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, err := run(t, s, Policy{Network: network}, "/", nil, "cat "+strings.Join(paths, " ")+" 2>/dev/null; echo end")
		if !strings.Contains(out, "end") {
			t.Fatalf("%s: %v\n%s", network, err, out)
		}
		if strings.Contains(out, "redteam-runner-token") {
			t.Errorf("%s network: the program read a CI runner's configuration:\n%s", network, out)
		}
	}
}

// TestSystemdRuntimeUnitsHidden: with the network open /run is the
// host's, and systemd keeps there, readable by every uid, the units it
// made at run time: a transient unit started with `systemd-run
// --setenv=DEPLOY_TOKEN=…` (/run/systemd/transient), a runtime unit or
// drop-in (`systemctl set-property --runtime`, /run/systemd/system), and
// the mount units its fstab generator wrote from /etc/fstab, a CIFS
// share's password= among their Options= (/run/systemd/generator), which
// the filtered /etc/fstab of section 2 no longer shows; and
// /run/credentials, where a service's LoadCredential= files are given to
// the service's user. A contained program reads none of them, whatever
// its network. The test plants a file readable by every uid in each (a
// folder it made, or one of its own inside the real one).
func TestSystemdRuntimeUnitsHidden(t *testing.T) {
	needRoot(t) // only root may write under /run
	s := newSandbox(t)
	const secret = "ghs_redteamTokenInRuntimeUnit"
	dirs := []string{"/run/systemd/transient", "/run/systemd/system", "/run/systemd/generator",
		"/run/systemd/generator.early", "/run/systemd/generator.late", "/run/credentials"}
	var files []string
	for _, dir := range dirs {
		place := dir
		if _, err := os.Lstat(dir); err == nil {
			d, err := os.MkdirTemp(dir, "planex-redteam-")
			if err != nil {
				t.Fatal(err)
			}
			place = d
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Skipf("cannot make %s on this machine: %v", dir, err)
		}
		t.Cleanup(func() { os.RemoveAll(place) })
		if err := os.Chmod(place, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(place, "run-u1.service")
		writeFile(t, f, "[Service]\nEnvironment=\"DEPLOY_TOKEN="+secret+"\"\nOptions=username=ci,password="+secret+"\n", 0o644)
		files = append(files, f)
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, _ := run(t, s, Policy{Network: network}, "/", nil, "cat "+strings.Join(files, " ")+" 2>/dev/null; echo \"listed: $(ls -A "+strings.Join(dirs, " ")+" 2>/dev/null | grep -v ':$' | tr -d '\\n')end\"")
		if strings.Contains(out, secret) || !strings.Contains(out, "listed: end") {
			t.Errorf("%s network: the program read systemd's runtime units:\n%s", network, out)
		}
	}
}

// TestContainerRuntimeStateHidden: with the network open a program sees
// the host's /run, where containerd keeps each running container's
// bundle (its config.json: the container's environment, a token passed
// with -e among it) and Docker its runtime state; only containerd's
// socket was covered, and the program read another container's
// environment there.
func TestContainerRuntimeStateHidden(t *testing.T) {
	needRoot(t) // only root may write under /run
	s := newSandbox(t)
	const secret = "ghs_redteamTokenInContainerBundle"
	dirs := []string{"/run/containerd", "/run/docker"}
	var files []string
	for _, dir := range dirs {
		place := dir
		if _, err := os.Lstat(dir); err == nil {
			d, err := os.MkdirTemp(dir, "planex-redteam-")
			if err != nil {
				t.Fatal(err)
			}
			place = d
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Skipf("cannot make %s on this machine: %v", dir, err)
		}
		t.Cleanup(func() { os.RemoveAll(place) })
		if err := os.Chmod(place, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(place, "io.containerd.runtime.v2.task", "moby", "c0ffee", "config.json")
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, f, `{"process":{"env":["DEPLOY_TOKEN=`+secret+`"]}}`, 0o644)
		files = append(files, f)
	}
	out, _ := run(t, s, Policy{Network: NetworkOpen}, "/", nil, "cat "+strings.Join(files, " ")+" 2>/dev/null; echo \"listed: $(ls -A "+strings.Join(dirs, " ")+" 2>/dev/null | grep -v ':$' | tr -d '\\n')end\"")
	if strings.Contains(out, secret) || !strings.Contains(out, "listed: end") {
		t.Errorf("the program read the container runtime's state:\n%s", out)
	}
}

// TestCloudProvisioningDataHidden: a self-hosted runner's VM made by
// cloud-init (or Azure's agent) keeps the script it was started with:
// cloud-init's /var/lib/cloud (the instance's user-data.txt and the
// scripts it ran, root's own, and a NoCloud seed's user-data an image's
// build wrote, often readable by all), the data it gathered under
// /run/cloud-init, and the Azure agent's /var/lib/waagent (ovf-env.xml
// and its custom data). Runner images register themselves there with a
// registration token or a personal access token. A contained program
// reads none of them where their mode would let it, whatever its
// network. The test plants a file readable by every uid in each (a
// folder it made, or one of its own inside the real one).
func TestCloudProvisioningDataHidden(t *testing.T) {
	needRoot(t) // only root may write under /var/lib and /run
	s := newSandbox(t)
	const secret = "ghp_redteamTokenInUserData"
	dirs := []string{"/var/lib/cloud", "/run/cloud-init", "/var/lib/waagent"}
	var files []string
	for _, dir := range dirs {
		place := dir
		if _, err := os.Lstat(dir); err == nil {
			d, err := os.MkdirTemp(dir, "planex-redteam-")
			if err != nil {
				t.Fatal(err)
			}
			place = d
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Skipf("cannot make %s on this machine: %v", dir, err)
		}
		t.Cleanup(func() { os.RemoveAll(place) })
		if err := os.Chmod(place, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(place, "user-data.txt")
		writeFile(t, f, "#!/bin/bash\n./config.sh --url https://github.com/org --token "+secret+"\n", 0o644)
		files = append(files, f)
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		out, _ := run(t, s, Policy{Network: network}, "/", nil, "cat "+strings.Join(files, " ")+" 2>/dev/null; echo end")
		if strings.Contains(out, secret) || !strings.Contains(out, "end") {
			t.Errorf("%s network: the program read a VM's provisioning data:\n%s", network, out)
		}
	}
}
