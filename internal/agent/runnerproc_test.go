package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestRedTeamRunnerFoundAsAncestor: a self-hosted runner configured with
// its work folder on another disk (config.sh --work /mnt/work) keeps no
// installation above the job's workspace, where planex looked for its
// registration: its credentials (.runner, .credentials, its private
// key, _diag's logs), the runners installed beside it and the earlier
// jobs' folders it names stayed readable to a contained agent of the
// runner's uid, and so did an earlier job's folder reached through a
// link in the work folder (its checkout moved to another disk). planex
// now finds the runner as its ancestor (Runner.Worker started the job's
// steps) and hides them, and the folder a job's link leads to. The test
// runs itself under a copy of sh named Runner.Worker in such a layout.
func TestRedTeamRunnerFoundAsAncestor(t *testing.T) {
	_, dir := sandboxAndHostFolder(t, "planex-runnerproc-")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh to stand for the runner's worker: %v", err)
	}
	if sh, err = filepath.EvalSymlinks(sh); err != nil {
		t.Fatal(err)
	}
	plant(t, dir, runnerLayout(dir))
	worker := filepath.Join(dir, "actions-runner", "bin", "Runner.Worker")
	b, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(worker, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "data", "big"), filepath.Join(dir, "mnt", "work", "big")); err != nil {
		t.Fatal(err)
	}
	// The trailing ':' keeps the shell alive as the helper's parent.
	cmd := exec.Command(worker, "-c", `"$0" -test.run='^TestRunnerAncestorHelper$' -test.v; status=$?; :; exit $status`, os.Args[0])
	cmd.Env = append(os.Environ(), "PLANEX_RUNNER_PROBE="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRunnerAncestorHelper") {
		t.Errorf("the contained agent under the runner read what it must not (%v):\n%s", err, out)
	}
}

// runnerLayout is a self-hosted runner in dir/actions-runner with its
// work folder in dir/mnt/work, another runner beside it, and an earlier
// job's checkout in dir/data/big (the work folder links to it): the
// files each holds, "loot-" in those a contained agent must not read.
func runnerLayout(dir string) map[string]string {
	return map[string]string{
		"actions-runner/.runner":                 `{"agentName":"loot-r1","workFolder":"` + dir + `/mnt/work"}`,
		"actions-runner/.credentials":            `{"scheme":"OAuth","data":{"clientId":"loot-runner-client"}}`,
		"actions-runner/.credentials_rsaparams":  "loot-runner-private-key",
		"actions-runner/_diag/Runner_1.log":      "loot-runner-log",
		"actions-runner/bin/readme":              "runner-program-readable",
		"runner2/.runner":                        `{"agentName":"loot-r2"}`,
		"runner2/.credentials":                   "loot-second-runner-client",
		"runner2/_work/billing/billing/.env":     "loot-second-runner-job",
		"mnt/work/app/app/README":                "this-job-readable",
		"mnt/work/other/other/.env":              "loot-earlier-job",
		"mnt/work/_tool/go/VERSION":              "tool-cache-readable",
		"data/big/.env":                          "loot-linked-job",
		"mnt/work/_actions/actions/checkout/LIC": "actions-readable",
	}
}

// TestRunnerAncestorHelper is the planex of TestRedTeamRunnerFoundAsAncestor,
// started by the copy of sh named Runner.Worker: it runs a contained
// agent that reads every file of the layout by its path.
func TestRunnerAncestorHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_RUNNER_PROBE")
	if dir == "" {
		t.Skip("a program of TestRedTeamRunnerFoundAsAncestor")
	}
	box, _ := sandboxAndHostFolder(t, "planex-runnerproc-helper-")
	work := filepath.Join(dir, "mnt", "work")
	env := []string{"PATH=/usr/bin:/bin", "GITHUB_ACTIONS=true",
		"RUNNER_WORKSPACE=" + filepath.Join(work, "app"), "GITHUB_WORKSPACE=" + filepath.Join(work, "app", "app"),
		"RUNNER_TOOL_CACHE=" + filepath.Join(work, "_tool")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, runnerLayout(dir))
}

// TestRunnerRootAbove: the runner is the first ancestor whose program is
// a runner's and whose folder holds a registration; a process that
// renamed itself, a worker without one, and a chain of parents are told
// apart. A /proc of files stands for the machine's.
func TestRunnerRootAbove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	proc := filepath.Join(dir, "proc")
	root := filepath.Join(dir, "runner")
	plant(t, dir, map[string]string{"runner/.runner": "{}", "unregistered/bin/x": "x"})
	// pid: its command name, its parent, its executable.
	tree := []struct {
		pid, ppid int
		comm, exe string
	}{
		{100, 90, "sh", "/bin/sh"},
		{90, 80, "Runner.Worker) S 1 (", "/usr/bin/bash"},
		{80, 70, "Runner.Worker", filepath.Join(dir, "unregistered", "bin", "Runner.Worker")},
		{70, 60, "Runner.Worker", filepath.Join(root, "bin.2.330.0", "Runner.Worker")},
		{60, 1, "Runner.Listener", filepath.Join(dir, "other", "bin", "Runner.Listener")},
		{200, 1, "sh", "/bin/sh"},
		{300, 300, "loop", "/bin/sh"},
	}
	for _, p := range tree {
		d := filepath.Join(proc, strconv.Itoa(p.pid))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := strconv.Itoa(p.pid) + " (" + p.comm + ") S " + strconv.Itoa(p.ppid) + " 1 1 0\n"
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p.exe, filepath.Join(d, "exe")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		pid  int
		want string
	}{{100, root}, {70, root}, {60, ""}, {200, ""}, {300, ""}, {12345, ""}} {
		if got := runnerRootAbove(proc, c.pid); got != c.want {
			t.Errorf("runnerRootAbove(%d) = %q, want %q", c.pid, got, c.want)
		}
	}
	if got := runnerRootAbove("/proc", os.Getpid()); got != "" && !slices.Contains([]string{"/"}, got) && os.Getenv("GITHUB_ACTIONS") != "true" {
		t.Errorf("outside a runner, planex's own ancestors gave the runner %q", got)
	}
}

// TestLinkedJobFolder: which targets of a link in a work folder are
// covered as a job's folder.
func TestLinkedJobFolder(t *testing.T) {
	t.Parallel()
	_, dir := sandboxAndHostFolder(t, "planex-linkedjob-")
	work := filepath.Join(dir, "work")
	ws := filepath.Join(work, "app")
	plant(t, dir, map[string]string{"data/big/x": "x", "data/granted/cache/x": "x", "work/app/app/src/x": "x", "work/other/x": "x", "file": "x"})
	keep := []string{filepath.Join(dir, "data", "granted", "cache")}
	for _, c := range []struct{ name, target, want string }{
		{"a checkout on another disk", filepath.Join(dir, "data", "big"), filepath.Join(dir, "data", "big")},
		{"into this job's workspace", filepath.Join(ws, "app", "src"), ""},
		{"to another entry of the work folder", filepath.Join(work, "other"), ""},
		{"to a folder holding a grant", filepath.Join(dir, "data", "granted"), ""},
		{"to a file", filepath.Join(dir, "file"), ""},
		{"among the system's programs", "/usr/share", ""},
		{"a system folder", "/var", ""},
		{"the root", "/", ""},
		{"the scratch folder", "/var/tmp", ""},
		{"dangling", filepath.Join(dir, "gone"), ""},
	} {
		link := filepath.Join(work, "link-"+strings.NewReplacer(" ", "-", "/", "-", "'", "").Replace(c.name))
		if err := os.Symlink(c.target, link); err != nil {
			t.Fatal(err)
		}
		if got := linkedJobFolder(link, work, ws, keep); got != c.want {
			t.Errorf("%s: linkedJobFolder = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRunnerJobsCreatedDuringTheStep: while a contained agent runs, the
// runner installed beside planex's starts a job in its work folder, and
// actions/checkout there writes the job's token file: the agent waits for
// it and reads it by its guessable path. That runner's work folder is
// covered whole, so what appears in it later stays covered. (This
// runner's own work folder gets no new job while its one job runs.)
func TestRunnerJobsCreatedDuringTheStep(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-latejob-")
	plant(t, dir, map[string]string{
		"runner-a/.runner":          `{}`,
		"runner-a/_work/app/app/R":  "this-job",
		"runner-b/.runner":          `{}`,
		"runner-b/_work/_temp/keep": "x",
	})
	checkLateRunnerJob(t, box, dir)
}

// TestRedTeamJenkinsAgentSecretHidden: a Jenkins agent started as its
// documentation says (java -jar agent.jar -secret @secret-file, in
// /opt/jenkins) keeps the secret it connects to the controller with in a
// file beside its work folder, outside every home and readable by the
// user its jobs run as: a contained agent read it, and with it could
// connect as that agent and be sent other jobs' builds. planex now finds
// the agent among its ancestors and covers the file. The test runs
// itself under a shell whose command line is an agent's.
func TestRedTeamJenkinsAgentSecretHidden(t *testing.T) {
	_, dir := sandboxAndHostFolder(t, "planex-jenkinsagent-")
	plant(t, dir, jenkinsLayout())
	cmd := exec.Command("sh", "-c", `"$3" -test.run='^TestJenkinsAgentHelper$' -test.v; status=$?; :; exit $status`,
		"agent.jar", "-secret", "@secret-file", os.Args[0])
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLANEX_JENKINS_PROBE="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestJenkinsAgentHelper") {
		t.Errorf("the contained agent under the Jenkins agent read what it must not (%v):\n%s", err, out)
	}
}

// jenkinsLayout is a Jenkins agent's folder: its secret file, and its
// work folder's files, which stay readable.
func jenkinsLayout() map[string]string {
	return map[string]string{"secret-file": "loot-jenkins-agent-secret", "remoting/notes": "work-folder-readable"}
}

// TestJenkinsAgentHelper is the planex of
// TestRedTeamJenkinsAgentSecretHidden: its parent's command line is a
// Jenkins agent's.
func TestJenkinsAgentHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_JENKINS_PROBE")
	if dir == "" {
		t.Skip("a program of TestRedTeamJenkinsAgentSecretHidden")
	}
	box, _ := sandboxAndHostFolder(t, "planex-jenkinsagent-helper-")
	checkPlantedReads(t, "", Containment{Sandbox: box}, []string{"PATH=/usr/bin:/bin"}, dir, jenkinsLayout())
}

// TestAgentSecretFiles: which command lines are a Jenkins agent's and
// which files they name.
func TestAgentSecretFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		cwd  string
		want []string
	}{
		{[]string{"java", "-jar", "/opt/jenkins/agent.jar", "-url", "https://ci/", "-secret", "@secret-file", "-name", "a"}, "/opt/jenkins", []string{"/opt/jenkins/secret-file"}},
		{[]string{"java", "-jar", "slave.jar", "-jnlpCredentials", "@/etc/jenkins/creds", "-secret", "0123abcd"}, "/", []string{"/etc/jenkins/creds"}},
		{[]string{"java", "-jar", "app.jar", "-secret", "@secret-file"}, "/opt/app", nil},
		{[]string{"java", "-jar", "agent.jar", "-secret"}, "/opt/jenkins", nil},
		{[]string{"java", "-jar", "agent.jar", "-secret", "@rel"}, "", nil},
	} {
		base := filepath.Join(dir, strconv.Itoa(len(c.args))+filepath.Base(c.cwd)+c.args[2])
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, "cmdline"), []byte(strings.Join(c.args, "\x00")+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.cwd != "" {
			if err := os.Symlink(c.cwd, filepath.Join(base, "cwd")); err != nil {
				t.Fatal(err)
			}
		}
		if got := agentSecretFiles(base); !slices.Equal(got, c.want) {
			t.Errorf("%q in %s: agentSecretFiles = %q, want %q", c.args, c.cwd, got, c.want)
		}
	}
}

// checkLateRunnerJob runs a contained program that waits until a job of
// the runner installed beside planex's (runner-b under dir) writes its
// token file and a job's .env during the step, then tries to read both;
// it fails the test if the program read either. The runners' files
// before the step are the caller's.
func checkLateRunnerJob(t *testing.T, box *sandbox.Sandbox, dir string) {
	t.Helper()
	sync := filepath.Join(dir, "sync")
	if err := os.MkdirAll(sync, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sync, 0o777); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "runner-b", "_work", "_temp", "git-credentials-late.config")
	script := `touch ` + sync + `/ready
while [ ! -e ` + sync + `/go ]; do sleep 0.05; done
cat ` + late + ` 2>/dev/null; cat ` + dir + `/runner-b/_work/billing/billing/.env 2>/dev/null; echo done`
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = "/"
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	ws := filepath.Join(dir, "runner-a", "_work", "app")
	env := []string{"PATH=/usr/bin:/bin", "GITHUB_ACTIONS=true", "RUNNER_WORKSPACE=" + ws, "GITHUB_WORKSPACE=" + filepath.Join(ws, "app")}
	cleanup, err := Containment{Sandbox: box}.Prepare(cmd, env, []string{sync}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(sync, "ready")); err == nil {
			break
		}
		if i > 600 {
			t.Fatal("the contained program never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	plant(t, dir, map[string]string{
		"runner-b/_work/_temp/git-credentials-late.config": "loot-late-checkout-token",
		"runner-b/_work/billing/billing/.env":              "loot-late-job",
	})
	if err := os.WriteFile(filepath.Join(sync, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "done") || strings.Contains(out.String(), "loot-") {
		t.Errorf("the agent read what another runner's job wrote during its step:\n%s", out.String())
	}
}
