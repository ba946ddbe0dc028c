//go:build linux

package agent

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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

// TestJobsHiddenWhole: a folder of jobs' folders is hidden whole unless
// the step keeps a path in it outside its own job's folder.
func TestJobsHiddenWhole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		keep []string
		want bool
	}{
		{"own only", []string{"/w/app", "/w/app/sub", "/tmp", ""}, true},
		{"grants holding the folder", []string{"/", "/srv"}, true},
		{"a cache beside the jobs", []string{"/w/app", "/w/cache"}, false},
		{"the folder itself", []string{"/w"}, false},
		{"a name sharing the prefix", []string{"/w/app2"}, false},
	} {
		if got := jobsHiddenWhole("/w", "/w/app", c.keep); got != c.want {
			t.Errorf("%s: jobsHiddenWhole = %v, want %v", c.name, got, c.want)
		}
	}
}
