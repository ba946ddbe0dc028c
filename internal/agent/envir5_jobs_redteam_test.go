//go:build linux

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

	"golang.org/x/sys/unix"
)

// TestRedTeamJobStartedDuringTheStep: a Jenkins agent with two
// executors, or a GitLab runner running jobs at once, starts another
// job while planex's step runs: its folder (its checkout, its @tmp with
// the secret files withCredentials writes, a GitLab slot's project with
// its File variables) appears beside this job's after planex listed
// that folder's entries to cover each. A contained agent read the new
// job's secrets. The folder holding the jobs' folders is hidden whole
// now, this job's own shown again, so what appears there later is
// hidden too.
func TestRedTeamJobStartedDuringTheStep(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-latejob-")
	jenkins := filepath.Join(dir, "jenkins", "workspace")
	builds := filepath.Join(dir, "builds")
	project := filepath.Join(builds, "r1", "0", "acme", "app")
	plant(t, dir, map[string]string{
		"jenkins/workspace/app/README.md": "own-jenkins-readable",
		"jenkins/workspace/old/.env":      "loot-jenkins-old",
		"builds/r1/0/acme/app/README.md":  "own-gitlab-readable",
		"builds/r1/0/acme/other/.env":     "loot-gitlab-old",
	})
	for _, c := range []struct {
		name, ws, grant string
		env             []string
		late            map[string]string
	}{
		{"jenkins", filepath.Join(jenkins, "app"), "", []string{"JENKINS_URL=https://jenkins.example/", "WORKSPACE=" + filepath.Join(jenkins, "app")},
			map[string]string{"jenkins/workspace/late@tmp/secretFiles/key": "loot-jenkins-late-tmp", "jenkins/workspace/late/.env": "loot-jenkins-late"}},
		{"jenkins in its user's home", filepath.Join(jenkins, "app"), "", []string{"HOME=" + filepath.Join(dir, "jenkins"), "JENKINS_URL=https://jenkins.example/", "WORKSPACE=" + filepath.Join(jenkins, "app")},
			map[string]string{"jenkins/workspace/late2/.env": "loot-jenkins-home-late"}},
		{"jenkins below a folder granted", filepath.Join(jenkins, "app"), dir, []string{"JENKINS_URL=https://jenkins.example/", "WORKSPACE=" + filepath.Join(jenkins, "app")},
			map[string]string{"jenkins/workspace/late3/.env": "loot-jenkins-grant-late"}},
		{"gitlab", project, "", []string{"GITLAB_CI=true", "CI_BUILDS_DIR=" + builds, "CI_PROJECT_DIR=" + project},
			map[string]string{"builds/r1/1/acme/late/.env": "loot-gitlab-late-slot", "builds/r1/0/acme/late/.env": "loot-gitlab-late"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append([]string{"PATH=/usr/bin:/bin"}, c.env...)
			var script strings.Builder
			for name := range c.late {
				script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
			}
			script.WriteString("cat " + filepath.Join(c.ws, "README.md") + "; true")
			cmd := exec.Command("sh", "-c", script.String())
			cmd.Dir = "/"
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cleanup, err := Containment{Sandbox: box, RepoDirs: []string{c.ws}}.PrepareContext(context.Background(), cmd, env, nil, slices.DeleteFunc([]string{c.ws, c.grant}, func(s string) bool { return s == "" }))
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			// The other job starts once planex has prepared the step.
			plant(t, dir, c.late)
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if strings.Contains(out.String(), "loot-") {
				t.Errorf("the agent read a job started during the step:\n%s", out.String())
			}
			if !strings.Contains(out.String(), "own-") {
				t.Errorf("the agent lost its own workspace:\n%s", out.String())
			}
		})
	}
}

// TestJobsShown: a folder of jobs' folders is hidden whole, its own job's
// folder and the step's paths in it shown again, unless the step keeps
// the folder itself.
func TestJobsShown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		keep []string
		show []string
		ok   bool
	}{
		{"own only", []string{"/w/app", "/w/app/sub", "/tmp", ""}, []string{"/w/app"}, true},
		{"grants holding the folder", []string{"/", "/srv"}, []string{"/w/app"}, true},
		{"a cache beside the jobs", []string{"/w/app", "/w/cache"}, []string{"/w/app", "/w/cache"}, true},
		{"the folder itself", []string{"/w"}, nil, false},
		{"a name sharing the prefix", []string{"/w/app2"}, []string{"/w/app", "/w/app2"}, true},
	} {
		show, ok := jobsShown("/w", "/w/app", c.keep, func(string) bool { return true })
		if ok != c.ok || !slices.Equal(show, c.show) {
			t.Errorf("%s: jobsShown = %q, %v; want %q, %v", c.name, show, ok, c.show, c.ok)
		}
	}
}

// TestRedTeamTeamCityOtherCheckouts: a TeamCity agent keeps the checkout
// of every build configuration it ran in its work folder
// (<agent>/work/<hash>), outside every home, with what those builds
// left (a project's .env, its output); the build names that folder and
// its own checkout in its properties file (agent.work.dir,
// teamcity.build.checkoutDir). A contained agent read the other
// checkouts; they are hidden now, the build's own shown.
func TestRedTeamTeamCityOtherCheckouts(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-tcwork-")
	work, own := filepath.Join(dir, "agent", "work"), filepath.Join(dir, "agent", "work", "a1b2c3")
	props := filepath.Join(dir, "agent", "temp", "buildTmp", "teamcity.build1.properties")
	plant(t, dir, map[string]string{
		"agent/temp/buildTmp/teamcity.build1.properties": "agent.work.dir=" + strings.ReplaceAll(work, "/", "\\/") + "\nteamcity.build.checkoutDir=" + own,
		"agent/work/a1b2c3/README.md":                    "own-checkout-readable",
		"agent/work/d4e5f6/.env":                         "STRIPE_KEY=loot-teamcity-other-checkout",
	})
	env := []string{"PATH=/usr/bin:/bin", "TEAMCITY_VERSION=2024.12", "TEAMCITY_BUILD_PROPERTIES_FILE=" + props}
	cmd := exec.Command("sh", "-c", "cat "+filepath.Join(work, "d4e5f6", ".env")+" "+filepath.Join(work, "late", ".env")+" "+filepath.Join(own, "README.md")+" 2>/dev/null; true")
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cleanup, err := Containment{Sandbox: box, RepoDirs: []string{own}}.PrepareContext(context.Background(), cmd, env, nil, []string{own})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	plant(t, dir, map[string]string{"agent/work/late/.env": "loot-teamcity-late-checkout"})
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "loot-") || !strings.Contains(out.String(), "own-checkout-readable") {
		t.Errorf("the agent read another build's checkout, or not its own:\n%s", out.String())
	}
}

// TestRedTeamCredentialFileThroughABindMount: the folder holding a
// credential file a variable names is also mounted at a second place
// (a data disk's /data/ci bound to /opt/ci, where KUBECONFIG points):
// the sandbox covered the file by the variable's path and the agent read
// it by the other name. Both names are covered now. (The test binds a
// folder of its own, as root, and unmounts it after.)
func TestRedTeamCredentialFileThroughABindMount(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-credbind-")
	files := map[string]string{"data/ci/kubeconfig": "loot-bound-kubeconfig", "data/ci/notes": "plain-readable"}
	plant(t, dir, files)
	bound := filepath.Join(dir, "opt", "ci")
	if err := os.MkdirAll(bound, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(filepath.Join(dir, "data", "ci"), bound, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind a folder here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(bound, unix.MNT_DETACH) })
	env := []string{"PATH=/usr/bin:/bin", "KUBECONFIG=" + filepath.Join(bound, "kubeconfig")}
	checkPlantedReads(t, "the data disk's name: ", Containment{Sandbox: box}, env, dir, files)
	checkPlantedReads(t, "the variable's name: ", Containment{Sandbox: box}, env, dir, map[string]string{"opt/ci/kubeconfig": "loot-bound-kubeconfig"})
}

// TestRedTeamRunnerFilesThroughABindMount: the runner's file commands'
// folder is a bind mount of a folder on a data disk, and that folder is
// given to --sandbox-write (as a cache): the check compared the grant
// with $GITHUB_ENV's path, links resolved, and let it through, and the
// agent appended BASH_ENV= to the file by the disk's name. The grant is
// refused now, the file's names in the mount table judged too.
func TestRedTeamRunnerFilesThroughABindMount(t *testing.T) {
	box, base := sandboxAndHostFolder(t, "planex-runnerbind-")
	data, commands := filepath.Join(base, "data"), filepath.Join(base, "runner", "_temp", "_runner_file_commands")
	for _, d := range []string{data, commands} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "set_env_1"), []byte("FROM_RUNNER=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(data, commands, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind a folder here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(commands, unix.MNT_DETACH) })
	env := []string{"PATH=/usr/bin:/bin", "RUNNER_TEMP=" + filepath.Join(base, "runner", "_temp"), "GITHUB_ENV=" + filepath.Join(commands, "set_env_1")}
	attackFileCommands(t, box, "the data disk's folder granted", data, true, env, []string{filepath.Join(data, "set_env_1")})
}

// TestRedTeamFilteredConfigThroughABindMount: a configuration planex
// shows filtered (CARGO_HOME's config.toml, its registry's token
// emptied) lies in a folder bind-mounted from a data disk: the sandbox
// showed the filtered view by the variable's path and the agent read
// the token by the disk's name. Each of its names shows the view now.
func TestRedTeamFilteredConfigThroughABindMount(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-viewbind-")
	plant(t, dir, map[string]string{"data/cargo/config.toml": "[registries.corp]\nindex = \"https://cargo.corp/index\"\ntoken = \"loot-cargo-bound\""})
	cargo := filepath.Join(dir, "cargo")
	if err := os.MkdirAll(cargo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(filepath.Join(dir, "data", "cargo"), cargo, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind a folder here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(cargo, unix.MNT_DETACH) })
	env := []string{"PATH=/usr/bin:/bin", "CARGO_HOME=" + cargo}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+filepath.Join(cargo, "config.toml")+" "+filepath.Join(dir, "data", "cargo", "config.toml"))
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read the token:\n%s", out)
	}
	if strings.Count(out, `index = "https://cargo.corp/index"`) != 2 {
		t.Errorf("the configuration is not shown by both names:\n%s", out)
	}
}
