package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRunnerOwnFiles: the runner's credentials are found above the
// workspace, or above a folder the step keeps where no variable names
// it, only where a .runner file marks its installation, a few levels up
// at most; a link named .runner or a relative workspace finds nothing,
// and the work folder's _temp is hidden whatever RUNNER_TEMP says. Other runners installed beside it (one user running several
// on a machine) have their credentials and their work folders (other
// jobs' checkouts and temporary folders) hidden too, and so is every
// folder of its own work folder holding an earlier job's workspace (an
// organisation's runner keeps each repository's checkout it ran). An
// Azure Pipelines agent, whose registration is .agent, is found the same
// way from its build folder.
func TestRunnerOwnFiles(t *testing.T) {
	t.Parallel()
	names := []string{".runner", ".runner_migrated", ".credentials", ".credentials_migrated", ".credentials_rsaparams", ".credential_store", ".certificates", ".env", "_diag", ".agent", ".proxycredentials"}
	secrets := func(dir string) []string {
		var out []string
		for _, name := range names {
			out = append(out, filepath.Join(dir, name))
		}
		return out
	}
	runners := t.TempDir()
	root := filepath.Join(runners, "runner-a")
	// Beside it: one with the default work folder, one configured with
	// another (its .runner written with a byte order mark, as the runner
	// may), one whose work folder holds this job's workspace (shared by
	// mistake: left visible), and a folder without .runner.
	for name, reg := range map[string]string{
		"runner-a": "{}", "runner-b": "{}", "runner-c": "\ufeff{\"workFolder\":\"/srv/work-c\"}",
		"runner-d": `{"workFolder":"../runner-a/_work"}`, "not-a-runner": "",
	} {
		dir := filepath.Join(runners, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if reg != "" {
			if err := os.WriteFile(filepath.Join(dir, ".runner"), []byte(reg), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// This runner's work folder: this job's workspace, an earlier job's
	// of another repository (hidden), the runner's own folders and a
	// folder holding a grant of the step's (visible).
	for _, d := range []string{"app/app", "other/other", "_actions", "_tool/go", "_temp", "_PipelineMapping", "granted/cache"} {
		if err := os.MkdirAll(filepath.Join(root, "_work", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "_work", "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// runner-b has run a job: its work folder exists (one without is
	// covered whole, TestRedTeamNeighbourWorkFolderCreatedDuringTheStep).
	if err := os.MkdirAll(filepath.Join(runners, "runner-b", "_work"), 0o755); err != nil {
		t.Fatal(err)
	}
	keep := []string{filepath.Join(root, "_work", "granted", "cache"), "relative"}
	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(root, ".runner"), filepath.Join(linked, ".runner")); err != nil {
		t.Fatal(err)
	}
	// An Azure Pipelines agent elsewhere: its registration is .agent, its
	// work folder holds a numbered folder per pipeline.
	azure := filepath.Join(t.TempDir(), "azagent")
	for _, d := range []string{"_work/1/s", "_work/2/s", "_work/_tasks", "_work/_tool", "_work/SourceRootMapping"} {
		if err := os.MkdirAll(filepath.Join(azure, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(azure, ".agent"), []byte(`{"agentName":"az","workFolder":"_work"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	want := secrets(root)
	want = append(append(want, secrets(filepath.Join(runners, "runner-b"))...), filepath.Join(runners, "runner-b", "_work"))
	want = append(append(want, secrets(filepath.Join(runners, "runner-c"))...), "/srv/work-c")
	want = append(want, secrets(filepath.Join(runners, "runner-d"))...)
	want = append(want, filepath.Join(root, "_work", "other"), filepath.Join(root, "_work", "_temp"))
	// A step keeping nothing in the runner's folder finds it only by the
	// workspace variable; one whose own folder lies there (planex run
	// through sudo, the variable dropped) finds it by that folder.
	outside := []string{"relative", t.TempDir()}
	own := append([]string{filepath.Join(root, "_work", "app", "app")}, keep...)
	for _, c := range []struct {
		name string
		env  []string
		keep []string
		want []string
	}{
		{"Azure Pipelines", []string{"BUILD_SOURCESDIRECTORY=" + filepath.Join(azure, "_work", "1", "s"), "AGENT_BUILDDIRECTORY=" + filepath.Join(azure, "_work", "1")},
			keep, append(secrets(azure), filepath.Join(azure, "_work", "2"))},
		{"RUNNER_WORKSPACE", []string{"RUNNER_WORKSPACE=" + filepath.Join(root, "_work", "app")}, keep, want},
		{"GITHUB_WORKSPACE", []string{"GITHUB_WORKSPACE=" + filepath.Join(root, "_work", "app", "app")}, keep, want},
		{"the step's folder", nil, own, want},
		{"too deep", []string{"GITHUB_WORKSPACE=" + filepath.Join(root, "_work", "a", "b", "c", "d")}, outside, nil},
		{"no runner here", []string{"GITHUB_WORKSPACE=" + filepath.Join(t.TempDir(), "_work", "app", "app")}, outside, nil},
		{"a link named .runner", []string{"GITHUB_WORKSPACE=" + filepath.Join(linked, "_work", "app", "app")}, outside, nil},
		{"relative", []string{"GITHUB_WORKSPACE=_work/app/app"}, outside, nil},
		{"none", nil, outside, nil},
	} {
		got, err := runnerOwnFiles(c.env, c.keep)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: runnerOwnFiles =\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}

// TestCITempDirs: each CI system's temporary folder is found from its
// own variables, only when that system's marker variable says the job
// runs there; relative paths and / are never hidden.
func TestCITempDirs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  []string
		want []string
	}{
		{"GitHub Actions", []string{"RUNNER_TEMP=/srv/runner/_work/_temp/"}, []string{"/srv/runner/_work/_temp"}},
		{"GitLab CI", []string{"GITLAB_CI=true", "CI_PROJECT_DIR=/builds/group/app"}, []string{"/builds/group/app.tmp"}},
		{"Jenkins", []string{"JENKINS_URL=https://ci.example/", "WORKSPACE=/var/lib/jenkins/workspace/app"}, []string{"/var/lib/jenkins/workspace/app@tmp"}},
		{"Azure Pipelines", []string{"TF_BUILD=True", "AGENT_TEMPDIRECTORY=/home/vsts/work/_temp"}, []string{"/home/vsts/work/_temp"}},
		{"an AGENT_TEMPDIRECTORY outside Azure", []string{"AGENT_TEMPDIRECTORY=/srv/x"}, nil},
		{"a WORKSPACE outside Jenkins", []string{"WORKSPACE=/home/me/ws"}, nil},
		{"a CI_PROJECT_DIR outside GitLab", []string{"CI_PROJECT_DIR=/home/me/app"}, nil},
		{"relative and root", []string{"RUNNER_TEMP=tmp", "GITLAB_CI=true", "CI_PROJECT_DIR=/"}, []string{"/.tmp"}},
		{"RUNNER_TEMP is /", []string{"RUNNER_TEMP=/"}, nil},
	} {
		if got := CITempDirs(c.env); !slices.Equal(got, c.want) {
			t.Errorf("%s: CITempDirs = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHiddenTempDirs: $TMPDIR is hidden beside the CI systems' folders
// wherever the sandbox does not cover it already, and never where
// covering it would hide / or the system's own folders.
func TestHiddenTempDirs(t *testing.T) {
	t.Parallel()
	own := os.TempDir() // this process's; added when hideable
	for _, c := range []struct {
		name string
		env  []string
		want []string
	}{
		{"outside /tmp", []string{"TMPDIR=/scratch/me/"}, []string{"/scratch/me"}},
		{"beside RUNNER_TEMP", []string{"RUNNER_TEMP=/srv/_temp", "TMPDIR=/srv/tmp"}, []string{"/srv/_temp", "/srv/tmp"}},
		{"the same as RUNNER_TEMP", []string{"RUNNER_TEMP=/srv/_temp", "TMPDIR=/srv/_temp/"}, []string{"/srv/_temp"}},
		{"below a system folder", []string{"TMPDIR=/var/lib/ci/tmp"}, []string{"/var/lib/ci/tmp"}},
		{"under /tmp", []string{"TMPDIR=/tmp/user/1000"}, nil},
		{"/var/tmp", []string{"TMPDIR=/var/tmp"}, nil},
		{"/dev/shm", []string{"TMPDIR=/dev/shm/x"}, nil},
		{"a system folder", []string{"TMPDIR=/usr"}, nil},
		{"above the system's folders", []string{"TMPDIR=/"}, nil},
		{"relative", []string{"TMPDIR=tmp"}, nil},
		{"none", nil, nil},
	} {
		want := c.want
		if hideableTemp(filepath.Clean(own)) && !slices.Contains(want, filepath.Clean(own)) {
			want = append(want, filepath.Clean(own))
		}
		if got := HiddenTempDirs(c.env); !slices.Equal(got, want) {
			t.Errorf("%s: HiddenTempDirs = %q, want %q", c.name, got, want)
		}
	}
}

// TestRedTeamAzureAgentFilesHidden: a self-hosted Azure Pipelines agent
// installed outside every home (/azagent), as an ordinary user whose
// uid its jobs, planex and the contained agent share. Its registration
// (.agent), OAuth client and private key (.credentials,
// .credentials_rsaparams: whoever holds them takes the pool's jobs and
// their secrets), its proxy's password and another pipeline's build
// folder were read by their paths above the build folder; planex looked
// for the Actions runner's .runner only.
func TestRedTeamAzureAgentFilesHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-azagent-")
	files := map[string]string{
		".agent":                 `{"agentName":"loot-az-agent-name","workFolder":"_work"}`,
		".credentials":           "loot-az-client-id",
		".credentials_rsaparams": "loot-az-private-key",
		".proxycredentials":      "loot-az-proxy-password",
		"_diag/Agent_1.log":      "loot-az-diag",
		"_work/2/s/.env":         "loot-az-other-pipeline",
		"_work/1/s/README.md":    "this-pipeline-readable",
		"_work/_tool/node/v":     "tool-cache-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "TF_BUILD=True",
		"AGENT_BUILDDIRECTORY=" + filepath.Join(dir, "_work", "1"),
		"BUILD_SOURCESDIRECTORY=" + filepath.Join(dir, "_work", "1", "s")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamJenkinsOtherJobsHidden: a Jenkins agent whose root lies
// outside every home (/opt/jenkins) keeps every job's workspace beside
// this one's, and with two executors another job runs beside it, its
// withCredentials secret files in its @tmp folder; all are the agent
// user's, whose uid the contained program has. They were read by their
// paths; only this job's own @tmp was hidden.
func TestRedTeamJenkinsOtherJobsHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-jenkins-")
	root := filepath.Join(dir, "workspace")
	files := map[string]string{
		"deploy/.env":                         "loot-jenkins-other-job",
		"deploy@tmp/secretFiles/1/kubeconfig": "loot-jenkins-running-secret",
		"app@tmp/secretFiles/2/key":           "loot-jenkins-own-secret",
		"app/README.md":                       "own-workspace-readable",
	}
	plant(t, root, files)
	env := []string{"PATH=/usr/bin:/bin", "JENKINS_URL=https://jenkins.example/", "WORKSPACE=" + filepath.Join(root, "app")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, root, files)
}

// TestJenkinsOtherJobs: only a Jenkins job (JENKINS_URL) whose workspace
// lies in a folder named workspace has its neighbours covered; this
// job's own folders, a folder holding a grant and links stay.
func TestJenkinsOtherJobs(t *testing.T) {
	t.Parallel()
	// Outside /tmp, which the sandbox covers anyway (nothing is listed
	// there).
	base, err := os.MkdirTemp("/srv", "planex-jenkins-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root := filepath.Join(base, "workspace")
	for _, d := range []string{"app", "app@tmp", "other", "cache/go"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/srv", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	ws := "WORKSPACE=" + filepath.Join(root, "app")
	keep := []string{filepath.Join(root, "cache", "go")}
	for _, c := range []struct {
		name string
		env  []string
		want []string
	}{
		{"Jenkins", []string{"JENKINS_URL=https://j/", ws}, []string{filepath.Join(root, "other")}},
		{"not Jenkins", []string{ws}, nil},
		{"a custom workspace", []string{"JENKINS_URL=https://j/", "WORKSPACE=" + filepath.Join(root, "app", "sub")}, nil},
		{"relative", []string{"JENKINS_URL=https://j/", "WORKSPACE=workspace/app"}, nil},
		{"under /tmp", []string{"JENKINS_URL=https://j/", "WORKSPACE=/tmp/workspace/app"}, nil},
	} {
		if got, err := jenkinsOtherJobs(c.env, keep); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: jenkinsOtherJobs = %q, %v, want %q", c.name, got, err, c.want)
		}
	}
}

// TestRedTeamGitLabOtherJobsHidden: a GitLab runner's shell executor
// with builds_dir outside every home (/builds) keeps every project's
// checkout beside this job's, and the File variables of a job running
// beside it in that project's .tmp folder; all are the runner user's,
// whose uid the contained program has. They were read by their paths;
// only this job's own .tmp was hidden. The way to this job's checkout
// stays, and so does the checkout. The same holds for a Buildkite
// agent's build path.
func TestRedTeamGitLabOtherJobsHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-gitlab-")
	files := map[string]string{
		"abc123/0/group/app/README.md":       "own-checkout-readable",
		"abc123/0/group/app.tmp/KUBECONFIG":  "loot-gitlab-own-file-variable",
		"abc123/0/group/billing/.env":        "loot-gitlab-other-project",
		"abc123/1/group/deploy.tmp/AWS_KEY":  "loot-gitlab-running-file-variable",
		"abc123/0/other-group/lib/README.md": "loot-gitlab-other-group",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "GITLAB_CI=true", "CI_BUILDS_DIR=" + dir,
		"CI_PROJECT_DIR=" + filepath.Join(dir, "abc123", "0", "group", "app")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
	// The same folders as a Buildkite agent's build path (no .tmp of
	// its own: this job's app.tmp is a neighbour there).
	env = []string{"PATH=/usr/bin:/bin", "BUILDKITE=true", "BUILDKITE_BUILD_PATH=" + dir,
		"BUILDKITE_BUILD_CHECKOUT_PATH=" + filepath.Join(dir, "abc123", "0", "group", "app")}
	checkPlantedReads(t, "Buildkite: ", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamCodespaceSecretsHidden: planex run in a GitHub Codespace's
// terminal on the repository at /workspaces/<repo>. Beside it the
// codespace keeps /workspaces/.codespaces/shared/.env-secrets, the
// codespace's GitHub token and the user's Codespaces secrets, readable
// by the codespace's user, whose uid the contained program has; the
// variables stay with planex, but the file was read by its path.
func TestRedTeamCodespaceSecretsHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-codespace-")
	workspaces := filepath.Join(dir, "workspaces")
	files := map[string]string{
		".codespaces/shared/.env-secrets": "GITHUB_TOKEN=loot-codespace-token",
		".codespaces/shared/.env":         "CODESPACE_NAME=loot-codespace-env",
		"app/README.md":                   "repository-readable",
	}
	plant(t, workspaces, files)
	env := []string{"PATH=/usr/bin:/bin", "CODESPACES=true", "CODESPACE_VSCODE_FOLDER=" + filepath.Join(workspaces, "app")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, workspaces, files)
}
