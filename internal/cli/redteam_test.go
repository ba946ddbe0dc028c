package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// Secrets planex runs with in the red-team tests. None of them may show up
// anywhere an agent could write or planex publishes.
var redTeamSecrets = map[string]string{
	"GITHUB_TOKEN":          "ghs-redteam-github-token",
	"INPUT_GITHUB_TOKEN":    "ghs-redteam-input-token",
	"ACTIONS_RUNTIME_TOKEN": "redteam-actions-runtime",
	"ANTHROPIC_API_KEY":     "sk-ant-redteam-key",
	"AWS_SECRET_ACCESS_KEY": "redteam-aws-secret",
	"LLM_GATEWAY":           "redteam-gateway-key", // named by --api-key-env
	// Named like nothing secret: the deny-list let them all through
	// (issue 29); the allow-list passes none of them.
	"DATABASE_URL":       "postgres://app:redteam-db-password@db.internal:5432/app",
	"DB_PASS":            "redteam-db-pass",
	"SMTP_PWD":           "redteam-smtp-pwd",
	"DOCKER_AUTH_CONFIG": `{"auths":{"registry.example":{"auth":"cmVkdGVhbS1kb2NrZXI="}}}`,
	"APIKEY":             "redteam-apikey",
	"PRIVATE_KEY_PEM":    "-----BEGIN PRIVATE KEY-----redteam-pem-body",
	"AWS_ACCESS_KEY_ID":  "AKIAREDTEAMEXAMPLE01",
	"SENTRY_DSN":         "https://redteam-sentry-key@o1.ingest.sentry.io/42",
	"NPM_AUTH":           "redteam-npm-auth",
	"SESSION_COOKIE":     "redteam-session-cookie",
	// OpenSSH's server accepts LC_* from every client, so people carry
	// their own variables through ssh under such names; every LC_ name
	// once passed.
	"LC_DEPLOY_TOKEN": "redteam-lc-deploy-token",
}

// redTeam is one malicious agent: T1's agent sources script (placeholders
// filled in) in its worktree; check says whether the attack had an effect.
type redTeam struct {
	name   string
	script string
	check  func(t *testing.T, r *redTeamRun)
}

// redTeamRun is what a red-team row can inspect after planex ran.
type redTeamRun struct {
	f              *fixture
	out            string
	code           int
	mark, realHome string
	runnerFiles    map[string]string // GITHUB_ENV etc. → path
	tag            string
	before         map[string]string // the user's checkout, hashed
}

func TestRedTeamAgents(t *testing.T) {
	t.Parallel()
	rows := []redTeam{
		{"steals secrets from environments, /proc and the home", "steal-secrets.sh", func(t *testing.T, r *redTeamRun) {
			r.mustHaveRun(t, "a/loot.txt")
			loot := r.show(t, "a/loot.txt")
			if !strings.Contains(loot, "PLANEX_PHASE=execute") {
				t.Errorf("the loot does not even hold the agent's own environment:\n%s", loot)
			}
		}},
		{"rewrites the approved plan also from a detached process", "rewrite-plan.sh", func(t *testing.T, r *redTeamRun) {
			r.mustHaveRun(t, "a/attempt.txt")
			tasks, _ := os.ReadFile(filepath.Join(r.f.sessionDir(), "tasks.csv"))
			if !strings.Contains(string(tasks), "b/**") || strings.Contains(string(tasks), "T9") {
				t.Errorf("tasks.csv changed:\n%s", tasks)
			}
			if got := strings.Join(r.f.branchLog(), " "); got != "T1:_base|T1 T2:_left|T2" {
				t.Errorf("branch = %q", got)
			}
		}},
		{"reads the session key and forges an approval in the session store", "forge-session.sh", func(t *testing.T, r *redTeamRun) {
			r.mustHaveRun(t, "a/attempt.txt")
			attempt := r.show(t, "a/attempt.txt")
			key, err := os.ReadFile(filepath.Join(r.f.repo, ".git", "planex", "key"))
			if err != nil || len(bytes.TrimSpace(key)) != 64 {
				t.Fatalf("the session key is gone or changed: %q %v", key, err)
			}
			if strings.Contains(attempt, strings.TrimSpace(string(key))) || strings.Contains(attempt, "\"seal\"") || !strings.Contains(attempt, "key: cat:") {
				t.Errorf("the agent read the session store:\n%s", attempt)
			}
			if _, err := os.Stat(filepath.Join(r.f.repo, ".git", "planex", "sessions", "forged")); err == nil {
				t.Error("the agent made a session in the store")
			}
			// The session it could not reach is still planex's own and sealed.
			if _, errOut, code := r.f.planex("status"); code != 0 {
				t.Errorf("status after the attack: exit %d: %s", code, errOut)
			}
		}},
		{"plants hooks and fsmonitor and filters and a git dir of its own", "plant-git-programs.sh", func(t *testing.T, r *redTeamRun) {
			r.mustHaveRun(t, "a/attempt.txt")
			common := filepath.Join(r.f.repo, ".git")
			for _, h := range []string{"post-checkout", "post-index-change", "reference-transaction", "pre-commit", "post-commit", "pre-push"} {
				if _, err := os.Stat(filepath.Join(common, "hooks", h)); err == nil {
					t.Errorf("hook %s planted in the repository", h)
				}
			}
			cfg, _ := os.ReadFile(filepath.Join(common, "config"))
			if bytes.Contains(cfg, []byte("fsmonitor")) || bytes.Contains(cfg, []byte("evil")) {
				t.Errorf(".git/config changed:\n%s", cfg)
			}
			if b, err := os.ReadFile(filepath.Join(r.realHome, ".gitconfig")); err == nil {
				t.Errorf("~/.gitconfig written:\n%s", b)
			}
		}},
		{"writes the runner's command files", "runner-files.sh", func(t *testing.T, r *redTeamRun) {
			attempt := r.show(t, "a/attempt.txt")
			if !strings.Contains(attempt, "seen: GITHUB_ENV= BASH_ENV=") {
				t.Errorf("the agent saw the runner's variables: %q", attempt)
			}
			for name, p := range r.runnerFiles {
				if b, _ := os.ReadFile(p); len(b) > 0 {
					t.Errorf("%s was written: %q", name, b)
				}
			}
		}},
		{"changes the user's checkout and index and hooks and config", "user-checkout.sh", func(t *testing.T, r *redTeamRun) {
			r.mustHaveRun(t, "a/attempt.txt")
			after := hashCheckout(t, r.f.repo)
			for p, h := range r.before {
				if after[p] != h {
					t.Errorf("%s changed", p)
				}
			}
			for p := range after {
				if _, ok := r.before[p]; !ok {
					t.Errorf("%s appeared in the user's checkout", p)
				}
			}
		}},
		{"leaves detached processes behind", "detach.sh", func(t *testing.T, r *redTeamRun) {
			r.mustHaveRun(t, "a/t1.txt")
			if left := sandboxtest.Processes(t, r.tag); len(left) > 0 {
				t.Errorf("processes outlived the step: %v", left)
			}
		}},
		{"kills every process it can see", "kill-planex.sh", func(t *testing.T, r *redTeamRun) {
			if r.code < 0 || r.code > 1 {
				t.Errorf("planex itself was killed (exit %d):\n%s", r.code, r.out)
			}
			if !strings.Contains(r.out, "T1: failed") {
				t.Errorf("the killed agent's task is not reported failed:\n%s", r.out)
			}
		}},
	}
	atOnce(t, len(rows), func(i int) string { return rows[i].name }, func(t *testing.T, i int) {
		row := rows[i]
		r := runRedTeam(t, row.script, "on")
		r.noSecretAnywhere(t)
		if entries, _ := os.ReadDir(r.mark); len(entries) > 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("planted programs ran: %v", names)
		}
		row.check(t, r)
	})
}

// runRedTeam runs planex -y on a two-task plan (T2 depends on T1) whose
// T1 agent runs the named attack script, contained by the sandbox.
func runRedTeam(t *testing.T, script string, sandbox string, adjust ...func(*exec.Cmd)) *redTeamRun {
	t.Helper()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"}, task{ID: "T2", Title: "left", Scope: "b/**", Deps: []string{"T1"}, Directives: "test -f b/t2.txt"})
	// The tag marks the attack's processes: this process's and this test's
	// own (rows run side by side), of one width so that no tag is part of
	// another.
	name := sha256.Sum256([]byte(t.Name()))
	r := &redTeamRun{f: f, mark: t.TempDir(), realHome: t.TempDir(), runnerFiles: map[string]string{},
		tag: fmt.Sprintf("%d.%06d", 700000+os.Getpid()%100000, (int(name[0])<<16|int(name[1])<<8|int(name[2]))%1000000)}
	f.write(r.realHome, ".git-credentials", "https://x:"+redTeamSecrets["GITHUB_TOKEN"]+"@github.com\n")
	// Every secret in a file of the user's home too: an uncontained
	// agent reads it there (planex's own environment it reads only as
	// root, planex being non-dumpable then), a contained one nowhere.
	var dump strings.Builder
	for k, v := range redTeamSecrets {
		dump.WriteString(k + "=" + v + "\n")
	}
	f.write(filepath.Join(r.realHome, ".config", "gh"), "hosts.yml", dump.String())
	runner := t.TempDir()
	for _, name := range []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"} {
		r.runnerFiles[name] = filepath.Join(runner, strings.ToLower(name))
		f.write(runner, strings.ToLower(name), "")
	}
	body, err := os.ReadFile(filepath.Join("testdata", "redteam", script))
	if err != nil {
		t.Fatal(err)
	}
	repl := []string{"@MARK@", r.mark, "@REALHOME@", r.realHome, "@TAG@", r.tag}
	for name, p := range r.runnerFiles {
		repl = append(repl, "@"+name+"@", p)
	}
	f.write(f.fake, "T1.sh", strings.NewReplacer(repl...).Replace(string(body)))
	r.before = hashCheckout(t, f.repo)

	cmd := f.command("-y", "--sandbox", sandbox, "--review", "skip", "--api-key-env", "LLM_GATEWAY", "add two files")
	// The agent may read the fixture's scripts but write nothing of the test's.
	cmd.Env = append(cmd.Env, "PLANEX_SANDBOX_WRITE=", "PLANEX_SANDBOX_READ="+f.fake+string(os.PathListSeparator)+testdataDir(t), "HOME="+r.realHome)
	for k, v := range redTeamSecrets {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for name, p := range r.runnerFiles {
		cmd.Env = append(cmd.Env, name+"="+p)
	}
	for _, a := range adjust {
		a(cmd)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	r.out = out.String()
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// mustHaveRun fails the row when the attack left no trace on the run
// branch: a red-team row that never attacked proves nothing.
func (r *redTeamRun) mustHaveRun(t *testing.T, path string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("planex exited %d:\n%s", r.code, r.out)
	}
	r.show(t, path)
}

// loot returns the agent's a/loot.txt from the run branch: it must hold
// every sign in looked (the agent looked where the attack says), and no
// value of secrets (name: value), each found one an error naming it and
// where the test put it.
func (r *redTeamRun) loot(t *testing.T, looked []string, secrets map[string]string, where string) string {
	t.Helper()
	loot := r.show(t, "a/loot.txt")
	for _, s := range looked {
		if !strings.Contains(loot, s) {
			t.Fatalf("the agent did not look (no %q in its loot):\n%s", s, loot)
		}
	}
	for name, v := range secrets {
		if strings.Contains(loot, v) {
			t.Errorf("the agent read %s, which %s:\n%s", name, where, loot)
		}
	}
	return loot
}

// show returns a file of the run branch's tip.
func (r *redTeamRun) show(t *testing.T, path string) string {
	t.Helper()
	branch := "planex/" + filepath.Base(r.f.sessionDir())
	cmd := exec.Command("git", "show", branch+":"+path)
	cmd.Dir = r.f.repo
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("the run branch lacks %s (planex said:\n%s)", path, r.out)
	}
	return string(b)
}

// noSecretAnywhere looks for every secret value in planex's output, every
// commit of every ref, the session folder and the fixture's files.
func (r *redTeamRun) noSecretAnywhere(t *testing.T) {
	t.Helper()
	var places []string
	places = append(places, "output:"+r.out)
	cmd := exec.Command("git", "log", "-p", "--all", "--format=%H %B")
	cmd.Dir = r.f.repo
	if b, err := cmd.Output(); err == nil {
		places = append(places, "history:"+string(b))
	}
	for _, dir := range []string{filepath.Join(r.f.repo, ".git", "planex"), r.f.fake} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if b, err := os.ReadFile(p); err == nil {
					places = append(places, p+":"+string(b))
				}
			}
			return nil
		})
	}
	for name, secret := range redTeamSecrets {
		for _, p := range places {
			if strings.Contains(p, secret) {
				where, _, _ := strings.Cut(p, ":")
				t.Errorf("%s leaked into %s", name, where)
			}
		}
	}
}

// hashCheckout hashes what a run must leave alone in the user's checkout:
// HEAD, index, config, hooks and every file of the working tree (the
// session folder, planex's own, aside).
func hashCheckout(t *testing.T, repo string) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(rel string) {
		b, err := os.ReadFile(filepath.Join(repo, rel))
		if err == nil {
			out[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
	}
	for _, rel := range []string{".git/HEAD", ".git/index", ".git/config", ".git/refs/heads/main"} {
		add(rel)
	}
	hooks, _ := os.ReadDir(filepath.Join(repo, ".git", "hooks"))
	for _, h := range hooks {
		add(filepath.Join(".git", "hooks", h.Name()))
	}
	filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(repo, p)
		if d != nil && d.IsDir() && (rel == ".git" || rel == ".workflow") {
			return filepath.SkipDir
		}
		if err == nil && d.Type().IsRegular() {
			add(rel)
		}
		return nil
	})
	return out
}

// TestRedTeamSecretsWithoutSandbox: with the sandbox off the agent can
// read the user's files (and, as root, planex's environment: planex is
// non-dumpable then, which holds against an ordinary user's agent only),
// but planex still refuses to commit a change that holds a secret's
// value, and redacts what the agent reports.
func TestRedTeamSecretsWithoutSandbox(t *testing.T) {
	t.Parallel()
	r := runRedTeam(t, "steal-secrets.sh", "off")
	r.noSecretAnywhere(t)
	// Every variable planex holds and does not pass on, whatever its name,
	// is found: in a file's name, in the loot and in its base64 form.
	const refused = "T1: failed: the changes contain secret values, so nothing was committed: the name of a/[redacted SESSION_COOKIE].txt (SESSION_COOKIE), a/loot.b64 ("
	if r.code != 1 || !strings.Contains(r.out, refused) {
		t.Fatalf("exit %d; want T1 refused for its loot:\n%s", r.code, r.out)
	}
	loot, _, _ := strings.Cut(r.out[strings.Index(r.out, refused)+len(refused):], ")")
	for name := range redTeamSecrets {
		if !strings.Contains(loot, name) {
			t.Errorf("the refusal does not name %s in a/loot.b64: %s", name, loot)
		}
	}
	if log := r.f.branchLog(); len(log) != 0 {
		t.Errorf("commits on the run branch: %v", log)
	}
}

// TestRedTeamActionSecretsStayOut: in the Action, with the token in
// GITHUB_TOKEN and INPUT_GITHUB_TOKEN, T1's agent collects every
// environment and credential it can reach and commits the loot. Nothing
// of it may reach origin, a comment, the pull request or the job's files.
func TestRedTeamActionSecretsStayOut(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"}, task{ID: "T2", Title: "left", Scope: "b/**", Deps: []string{"T1"}})
	realHome := t.TempDir()
	g.write(realHome, ".git-credentials", "https://x:"+redTeamSecrets["GITHUB_TOKEN"]+"@github.com\n")
	body, err := os.ReadFile(filepath.Join("testdata", "redteam", "steal-secrets.sh"))
	if err != nil {
		t.Fatal(err)
	}
	g.write(g.fake_dir(), "T1.sh", strings.ReplaceAll(string(body), "@REALHOME@", realHome))
	env := []string{"HOME=" + realHome, "INPUT_API_KEY_ENV=LLM_GATEWAY"}
	secrets := map[string]string{"INPUT_GITHUB_TOKEN": "ghs_test"}
	for k, v := range redTeamSecrets {
		env = append(env, k+"="+v)
		secrets[k] = v
	}
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add two files", "")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add two files"), env...); r.code != 0 {
		t.Fatalf("plan: %d\n%s", r.code, r.err)
	}
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)), env...)
	if r.code != 0 {
		t.Fatalf("approve: %d\n%s\n%s", r.code, r.out, r.err)
	}
	branch := "planex/" + r.outputs["session-id"]
	loot := g.originGit("show", branch+":a/loot.txt")
	if !strings.Contains(loot, "PLANEX_PHASE=execute") {
		t.Fatalf("the attack left no loot on %s:\n%s", branch, loot)
	}
	places := map[string]string{
		"origin": g.originGit("log", "-p", "--all"),
		// ::add-mask:: lines hand a secret to the runner to hide: expected.
		"output": dropMaskLines(r.out + r.err + r.summary),
	}
	for _, c := range g.fake.Comments(ghRepo, n) {
		places["comment"] += c.Body
	}
	for _, pr := range g.fake.PullRequests(ghRepo) {
		places["pull request"] += pr.Title + pr.Body
	}
	for k, v := range r.outputs {
		places["outputs"] += k + "=" + v + "\n"
	}
	for name, secret := range secrets {
		for where, text := range places {
			if strings.Contains(text, secret) {
				t.Errorf("%s leaked into the %s", name, where)
			}
		}
	}
}

func dropMaskLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "::add-mask::") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestActionWithoutSandboxRunsNoAgent: on a runner that cannot make a
// sandbox (here: no `true` to probe with on PATH), commands that need no
// agent still answer, and a plan request fails the job with a reply that
// names the opt-out; no agent runs uncontained.
func TestActionWithoutSandboxRunsNoAgent(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	bin := t.TempDir()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(gitPath, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + bin
	n := g.fake.AddIssue(ghRepo, "maintainer", "One file", "")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex status"), path); r.code != 0 {
		t.Fatalf("status without a sandbox: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add a file"), path)
	if r.code == 0 || !strings.Contains(g.lastComment(n), "sandbox: off") {
		t.Fatalf("plan without a sandbox: exit %d, reply %q\n%s", r.code, g.lastComment(n), r.err)
	}
	if calls := g.agentCalls(); calls != "" {
		t.Errorf("an agent ran without a sandbox: %q", calls)
	}
}
