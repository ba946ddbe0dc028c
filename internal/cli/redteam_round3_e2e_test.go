//go:build linux

package cli

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamRunnerTempHidden: on a self-hosted runner the runner's
// temporary folder ($RUNNER_TEMP) often lies outside every home, and
// actions/checkout v6 keeps the job's token there
// (git-credentials-<uuid>.config, included by .git/config for the
// repository and all its worktrees), beside its ssh key. The contained
// agent reads every file there and asks git in its worktree for the
// header: it finds none of them, and its task still runs (the worktree,
// below $RUNNER_TEMP, stays the agent's).
func TestRedTeamRunnerTempHidden(t *testing.T) {
	t.Parallel()
	const token = "ghs-redteam-checkout-v6-token"
	const sshKey = "-----BEGIN OPENSSH PRIVATE KEY-----redteam-deploy-key"
	// Not under /tmp or a home, which the sandbox covers anyway.
	runnerTemp := outsideTemp(t, "redteam-runner-temp-")
	if err := os.Chmod(runnerTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(runnerTemp, "git-credentials-6f1c.config")
	write := func(p, content string) {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(creds, "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+token+"\n")
	write(filepath.Join(runnerTemp, "6f1c-ssh-key"), sshKey+"\n")
	r := runRedTeam(t, "runner-temp.sh", "on", func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "RUNNER_TEMP="+runnerTemp)
		gitDir := filepath.Join(cmd.Dir, ".git")
		for _, pattern := range []string{gitDir, gitDir + "/worktrees/*"} {
			if out, err := exec.Command("git", "-C", cmd.Dir, "config", "--local", "includeIf.gitdir:"+pattern+".path", creds).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "runner temp: "+runnerTemp) {
		t.Fatalf("the agent did not look in the runner's folder:\n%s", loot)
	}
	for _, secret := range []string{token, sshKey} {
		if strings.Contains(loot, secret) || strings.Contains(r.out, secret) {
			t.Errorf("the agent read %q from $RUNNER_TEMP:\n%s", secret, loot)
		}
	}
}

// TestRedTeamGitConfigCredentials: the repository's own .git/config,
// which a contained agent may read (it is the repository's git
// directory), is where CI systems and tools leave credentials: GitLab CI
// clones with https://gitlab-ci-token:TOKEN@…, Azure Pipelines and
// actions/checkout (up to v4) persist an http extraheader, a developer's
// remote may carry a token, sendemail keeps a password; a submodule's
// config (.git/modules/<name>/config) holds its own. The agent reads
// them and asks git in its worktree: it finds none of them, and its
// git still reads the repository (HEAD, the remotes without their
// credentials).
func TestRedTeamGitConfigCredentials(t *testing.T) {
	t.Parallel()
	creds := map[string]string{
		"remote.upstream.url":                                       "https://gitlab-ci-token:glcbt-redteam-job-token@gitlab.example/g/app.git",
		"http.https://gitlab.example/.extraheader":                  "AUTHORIZATION: basic cmVkdGVhbS1henVyZS1oZWFkZXI=",
		"url.https://x:ghp_redteam_insteadof@github.com/.insteadOf": "https://github.com/",
		"sendemail.smtpPass":                                        "redteam-smtp-password",
	}
	secrets := []string{"glcbt-redteam-job-token", "cmVkdGVhbS1henVyZS1oZWFkZXI", "ghp_redteam_insteadof", "redteam-smtp-password", "glcbt-redteam-submodule-token"}
	var base string
	r := runRedTeam(t, "git-config-creds.sh", "on", func(cmd *exec.Cmd) {
		for k, v := range creds {
			if out, err := exec.Command("git", "-C", cmd.Dir, "config", "--local", k, v).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		// A submodule's git directory, cloned with the job's token.
		mod := filepath.Join(cmd.Dir, ".git", "modules", "vendored")
		if err := os.MkdirAll(mod, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, "config"), []byte("[remote \"origin\"]\n\turl = https://gitlab-ci-token:glcbt-redteam-submodule-token@gitlab.example/g/lib.git\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "-C", cmd.Dir, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		base = strings.TrimSpace(string(out))
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "common: ") || !strings.Contains(loot, "head: "+base) ||
		!strings.Contains(loot, "https://gitlab.example/g/lib.git") ||
		!strings.Contains(loot, "upstream\thttps://gitlab.example/g/app.git (fetch)") {
		t.Errorf("the agent's git no longer reads the repository:\n%s", loot)
	}
	for _, s := range secrets {
		if strings.Contains(loot, s) {
			t.Errorf("the agent read %q from the repository's config:\n%s", s, loot)
		}
	}
	// planex's own view of the config is untouched.
	cfg, err := os.ReadFile(filepath.Join(r.f.repo, ".git", "config"))
	if err != nil || !strings.Contains(string(cfg), "glcbt-redteam-job-token") {
		t.Errorf("the repository's own config changed: %v\n%s", err, cfg)
	}
}

// TestRedTeamRunnerInstallHidden: a self-hosted runner installed outside
// every home (/opt/actions-runner, /actions-runner) keeps its
// registration, its OAuth client's private key and its diagnostic logs
// in the folder above its work folder; an agent running as the runner's
// own uid (planex as an ordinary user) could read them and act as the
// runner, taking other workflows' jobs and their secrets. The contained
// agent finds none of them; the files are readable to every uid here so
// that the attack would work as root too. Nor does it find what an
// earlier job of another repository left in its workspace, which the
// runner keeps in its work folder beside this job's.
func TestRedTeamRunnerInstallHidden(t *testing.T) {
	t.Parallel()
	const rsa = `{"d":"redteam-runner-private-exponent","modulus":"x"}`
	const diag = "redteam-runner-diag-job-message"
	// Installed beside another runner of the same user (a machine running
	// several), which is in the middle of another repository's job.
	runners := outsideTemp(t, "redteam-runners-")
	root := filepath.Join(runners, "runner-a")
	files := map[string]string{
		"../runner-b/.runner":                              `{"agentId":8,"agentName":"redteam-runner-b","workFolder":"_work"}`,
		"../runner-b/.credentials":                         `{"scheme":"OAuth","data":{"clientId":"redteam-runner-b-client"}}`,
		"../runner-b/_work/_temp/git-credentials-1.config": "[http]\n\textraheader = AUTHORIZATION: basic redteam-other-jobs-token\n",
		"../runner-b/_work/other/other/secret.go":          "package other // redteam-other-repository-code\n",
		".runner":                `{"agentId":7,"agentName":"redteam-runner-name","poolId":1}`,
		".credentials":           `{"scheme":"OAuth","data":{"clientId":"redteam-runner-client-id"}}`,
		".credentials_rsaparams": rsa,
		"_diag/Worker_1.log":     diag,
		// Read by the runner's start script into every job's
		// environment; admins keep a proxy's password there.
		".env":                  "https_proxy=http://runner:redteam-runner-proxy-password@proxy.corp:3128\n",
		".credentials_migrated": `{"scheme":"OAuth","data":{"clientId":"redteam-runner-migrated-client"}}`,
		".credential_store":     `{"redteam-runner-store":"redteam-runner-stored-secret"}`,
		"_work/app/app/.keep":   "",
		// An earlier job's workspace of another repository, which the
		// runner keeps: what that job's build left there.
		"_work/billing/billing/.env": "STRIPE_KEY=redteam-earlier-job-secret\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{root, filepath.Join(runners, "runner-b")} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := runRedTeam(t, "runner-install.sh", "on", func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "GITHUB_WORKSPACE="+filepath.Join(root, "_work", "app", "app"))
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "runner root: "+root) || !strings.Contains(loot, "_work") || !strings.Contains(loot, "other runner: "+filepath.Join(runners, "runner-b")) {
		t.Fatalf("the agent did not find the runner's folder:\n%s", loot)
	}
	for _, secret := range []string{"redteam-runner-private-exponent", diag, "redteam-runner-client-id", "redteam-runner-name",
		"redteam-runner-proxy-password", "redteam-runner-migrated-client", "redteam-runner-stored-secret",
		"redteam-runner-b-client", "redteam-other-jobs-token", "redteam-other-repository-code", "redteam-earlier-job-secret"} {
		if strings.Contains(loot, secret) {
			t.Errorf("the agent read %q from the runner's installation:\n%s", secret, loot)
		}
	}
}

// TestRedTeamActionCheckoutToken: the Action's workspace as
// actions/checkout leaves it: v6's credentials file in $RUNNER_TEMP,
// included by .git/config for the repository and all its worktrees, and
// v4's header in a submodule's config (submodules: true). planex removes
// the token from both before any agent runs (and says so), so the agent,
// which reads every config and asks git in its worktree, finds it
// nowhere, and nor does any later step of the job.
func TestRedTeamActionCheckoutToken(t *testing.T) {
	t.Parallel()
	const token = "ghs_redteamCheckoutToken"
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	body, err := os.ReadFile(filepath.Join("testdata", "redteam", "checkout-token.sh"))
	if err != nil {
		t.Fatal(err)
	}
	g.write(g.fake_dir(), "T1.sh", string(body))
	runnerTemp := g.envValue("RUNNER_TEMP") // newFixture's
	// run is g.run in a workspace checked out as actions/checkout does
	// with persist-credentials (the default).
	run := func(event string) (actionRun, []string) {
		t.Helper()
		ws := filepath.Join(t.TempDir(), "ws")
		g.git("clone", "-q", g.origin, ws)
		creds, err := os.CreateTemp(runnerTemp, "git-credentials-*.config")
		if err != nil {
			t.Fatal(err)
		}
		creds.Close()
		gitDir := filepath.Join(ws, ".git")
		module := filepath.Join(gitDir, "modules", "vendored")
		g.write(module, "HEAD", "ref: refs/heads/main\n")
		g.write(module, "config", "[core]\n\tbare = false\n")
		for _, c := range [][]string{
			{"--file", creds.Name(), "http.https://github.com/.extraheader", "AUTHORIZATION: basic " + basic},
			{"--file", filepath.Join(gitDir, "config"), "includeIf.gitdir:" + gitDir + ".path", creds.Name()},
			{"--file", filepath.Join(gitDir, "config"), "includeIf.gitdir:" + gitDir + "/worktrees/*.path", creds.Name()},
			{"--file", filepath.Join(module, "config"), "http.https://github.com/.extraheader", "AUTHORIZATION: basic " + basic},
		} {
			gitIn(t, ws, nil, append([]string{"config"}, c...)...)
		}
		out, err := os.CreateTemp(t.TempDir(), "output")
		if err != nil {
			t.Fatal(err)
		}
		out.Close()
		cmd := g.actionCmd(ws, "issue_comment", event)
		cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+out.Name(), "RUNNER_TEMP="+runnerTemp)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		r := actionRun{}
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			r.code = ee.ExitCode()
		}
		r.out, r.err, r.outputs = o.String(), e.String(), readOutputs(out.Name())
		return r, []string{creds.Name(), filepath.Join(module, "config"), filepath.Join(gitDir, "config")}
	}
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add a file", "")
	if r, _ := run(g.comment(n, false, "maintainer", "/planex add a file")); r.code != 0 {
		t.Fatalf("plan: %d\n%s\n%s", r.code, r.out, r.err)
	}
	r, files := run(g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)))
	if r.code != 0 {
		t.Fatalf("approve: %d\n%s\n%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.out, "removed the token actions/checkout left for later steps") {
		t.Errorf("planex did not say it removed the token:\n%s", r.out)
	}
	loot := g.originGit("show", "planex/"+r.outputs["session-id"]+":a/loot.txt")
	if !strings.Contains(loot, "common: ") {
		t.Fatalf("the attack left no loot:\n%s", loot)
	}
	for _, secret := range []string{token, basic} {
		if strings.Contains(loot, secret) {
			t.Errorf("the agent found the checkout's token:\n%s", loot)
		}
		for _, f := range files {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), secret) {
				t.Errorf("the token is still in %s after planex ran", f)
			}
		}
	}
}

// TestRedTeamCITempHidden: planex as a CLI in GitLab CI or Jenkins, whose
// temporary folders beside the job hold secret files (GitLab CI writes
// every CI/CD variable of type File to $CI_PROJECT_DIR.tmp/<NAME>, a
// kubeconfig say; Jenkins' withCredentials writes to $WORKSPACE@tmp).
// The contained agent reads them: it finds nothing.
func TestRedTeamCITempHidden(t *testing.T) {
	t.Parallel()
	root := outsideTemp(t, "redteam-ci-")
	secrets := map[string]string{
		filepath.Join(root, "builds", "app.tmp", "KUBECONFIG"):                       "redteam-gitlab-file-variable-kubeconfig",
		filepath.Join(root, "jenkins", "app@tmp", "secretFiles", "3f2a", "key.json"): "redteam-jenkins-secret-file",
	}
	var paths []string
	for p, content := range secrets {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, d := range []string{root, filepath.Join(root, "builds"), filepath.Join(root, "jenkins")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := runRedTeam(t, "ci-temp.sh", "on", func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "GITLAB_CI=true", "CI_PROJECT_DIR="+filepath.Join(root, "builds", "app"),
			"JENKINS_URL=https://ci.example/", "WORKSPACE="+filepath.Join(root, "jenkins", "app"),
			"RED_TEAM="+strings.Join(paths, " "))
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	r.loot(t, []string{"looked", "KUBECONFIG"}, secrets, "a CI system keeps beside the job")
}

// gitIn runs git in dir with env added to the environment and fails the
// test when it fails; it returns the output, trimmed.
func gitIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
