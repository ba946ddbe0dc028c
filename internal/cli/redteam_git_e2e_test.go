package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The red-team rows for planex's own git: a hostile command agent
// (testdata/redteam-git-agent.sh) runs without any sandbox and plants
// programs wherever git could be told to run one. planex's git must run
// none of them, and a task that is otherwise valid must still be
// committed correctly.

// gitRedTeam is a fixture whose agent attacks, with HOME in a temp dir.
type gitRedTeam struct {
	*fixture
	home string
}

func newGitRedTeam(t *testing.T, attacks ...string) *gitRedTeam {
	t.Helper()
	f := newFixture(t)
	rt := &gitRedTeam{fixture: f, home: t.TempDir()}
	f.env = append(f.env, "HOME="+rt.home, "XDG_CONFIG_HOME="+filepath.Join(rt.home, ".config"))
	agent, err := filepath.Abs("testdata/redteam-git-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	f.agent = agent
	if len(attacks) > 0 {
		f.write(f.fake, "attack", strings.Join(attacks, "\n")+"\n")
	}
	return rt
}

// run runs planex without the agent sandbox: these rows test that
// planex's own git holds by itself, so the attacks must land.
func (rt *gitRedTeam) run(args ...string) (stdout, stderr string, code int) {
	rt.t.Helper()
	return rt.planex(append([]string{"--sandbox", "off"}, args...)...)
}

// assertPlanted fails the test when the agent did not carry out its
// attacks, so that no row passes by attacking nothing.
func (rt *gitRedTeam) assertPlanted(attacks ...string) {
	rt.t.Helper()
	b, _ := os.ReadFile(filepath.Join(rt.fake, "planted"))
	if got, want := strings.Fields(string(b)), attacks; strings.Join(got, " ") != strings.Join(want, " ") {
		rt.t.Fatalf("the agent carried out %v, want %v", got, want)
	}
}

// assertNothingRan fails for every program planex's git ran, showing the
// environment it saw.
func (rt *gitRedTeam) assertNothingRan() {
	rt.t.Helper()
	ents, _ := os.ReadDir(filepath.Join(rt.fake, "markers"))
	for _, e := range ents {
		env, _ := os.ReadFile(filepath.Join(rt.fake, "markers", e.Name()))
		rt.t.Errorf("planex's git ran the agent's %s; it saw:\n%s", e.Name(), env)
	}
}

// safeGit is the test's own git, immune to what the agent planted.
func (rt *gitRedTeam) safeGit(args ...string) string {
	rt.t.Helper()
	off := []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
		"-c", "filter.evil.clean=", "-c", "filter.evil.smudge=", "-c", "filter.evil.required=false",
		"-c", "filter.proc.process=", "-c", "diff.evil.textconv=", "-c", "log.showSignature=false"}
	cmd := exec.Command("git", append(off, args...)...)
	cmd.Dir = rt.repo
	cmd.Env = append(append(os.Environ(), rt.env...), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		rt.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// commitFiles lists "path=content" for what each task commit changed, in
// branch order, as "T1: a/t1.txt=T1 was here".
func (rt *gitRedTeam) commitFiles(branch string) []string {
	rt.t.Helper()
	var out []string
	for _, sha := range strings.Fields(rt.safeGit("rev-list", "--reverse", rt.base+".."+branch)) {
		subject := strings.TrimSpace(rt.safeGit("log", "-1", "--format=%s", sha))
		id, _, _ := strings.Cut(subject, ":")
		var files []string
		for _, p := range strings.Fields(rt.safeGit("diff-tree", "--no-commit-id", "--name-only", "-r", sha)) {
			content := strings.TrimSpace(rt.safeGit("cat-file", "-p", sha+":"+p))
			files = append(files, p+"="+content)
		}
		out = append(out, id+": "+strings.Join(files, ", "))
	}
	return out
}

// TestRedTeamGitPlantedPrograms: each row plants programs one way in the
// execute step of T1; T2 (after T1) and the review then give planex's git
// every chance to run them: worktree checkout, snapshots, commits,
// branch updates, diffs.
func TestRedTeamGitPlantedPrograms(t *testing.T) {
	t.Parallel()
	honest := []string{"T1: a/t1.txt=T1 was here", "T2: b/t2.txt=T2 was here"}
	cases := []struct {
		name    string
		attacks []string
		want    []string // each task commit's files; honest when nil
	}{
		{"hooks in the common git dir", []string{"hooks"}, nil},
		{"fsmonitor, hooksPath, filters and drivers in .git/config", []string{"repo-config", "attributes"},
			[]string{"T1: a/.gitattributes=* filter=evil diff=evil merge=evil, a/t1.txt=T1 was here", "T2: b/t2.txt=T2 was here"}},
		{"the same in ~/.gitconfig and XDG config", []string{"global-config"}, nil},
		{"worktree .git file pointing at the agent's own git dir", []string{"gitfile"}, nil},
		{"everything at once", []string{"hooks", "repo-config", "attributes", "global-config", "gitfile"},
			[]string{"T1: a/.gitattributes=* filter=evil diff=evil merge=evil, a/t1.txt=T1 was here", "T2: b/t2.txt=T2 was here"}},
		{"crafted worktree index", []string{"index"}, nil},
	}
	atOnce(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, i int) {
		c := cases[i]
		rt := newGitRedTeam(t, c.attacks...)
		rt.setPlan(task{ID: "T1", Title: "first", Scope: "a/**"}, task{ID: "T2", Title: "second", Scope: "b/**", Deps: []string{"T1"}})
		out, errOut, code := rt.run("-y", "two files")
		rt.assertPlanted(c.attacks...)
		rt.assertNothingRan()
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		if !strings.Contains(out, "review T1: pass") {
			t.Errorf("the review did not run:\n%s", out)
		}
		want := c.want
		if want == nil {
			want = honest
		}
		branch := "planex/" + filepath.Base(rt.sessionDir())
		if got := rt.commitFiles(branch); strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("commits = %q\nwant      %q", got, want)
		}
	})
}

// TestRedTeamGitSymlinkEscape: a task that links out of the repository
// or into .git fails naming each link, and nothing of it is committed.
func TestRedTeamGitSymlinkEscape(t *testing.T) {
	t.Parallel()
	rt := newGitRedTeam(t, "symlinks")
	rt.setPlan(task{ID: "T1", Title: "links", Scope: "a/**"}, task{ID: "T2", Title: "other", Scope: "b/**"})
	out, errOut, code := rt.run("-y", "links")
	rt.assertPlanted("symlinks")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"T1: failed: symlinks point outside the repository: ", "a/abs-link -> /etc/passwd", "a/git-link -> ../.git/config", "a/rel-link -> ../../outside"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	tasks, _ := os.ReadFile(filepath.Join(rt.sessionDir(), "tasks.csv"))
	if !strings.Contains(string(tasks), "a/abs-link -> /etc/passwd") {
		t.Errorf("tasks.csv does not record the refusal:\n%s", tasks)
	}
	branch := "planex/" + filepath.Base(rt.sessionDir())
	if got := rt.commitFiles(branch); strings.Join(got, " | ") != "T2: b/t2.txt=T2 was here" {
		t.Errorf("commits = %q, want only T2's", got)
	}
}

// TestRedTeamGitScopeValidation: scopes reaching into .git or out of the
// repository are refused at validation, naming the file, line, task and
// field, before any agent starts — from a plan file or from the agent.
func TestRedTeamGitScopeValidation(t *testing.T) {
	t.Parallel()
	header := "id,title,description,test,acceptance_criteria,scope,hints,execution_directives,deps,context_from,wave,status,findings,files_modified,tests_passed,acceptance_met,error\n"
	for _, c := range []struct{ name, scope, want string }{
		{"into .git", ".git/hooks/**", `scope glob ".git/hooks/**" reaches into .git`},
		{"into .git, other case", "src/**;.GIT/config", `scope glob ".GIT/config" reaches into .git`},
		{"into a nested .git", "vendor/x/.git/**", `scope glob "vendor/x/.git/**" reaches into .git`},
		{"up and out", "../**", `scope glob "../**" leaves the repository`},
		{"out through a segment", "a/../../b/**", `scope glob "a/../../b/**" leaves the repository`},
		{"absolute", "/etc/**", `scope glob "/etc/**" is an absolute path`},
		{"home", "~/.ssh/*", `scope glob "~/.ssh/*" starts with ~`},
	} {
		t.Run("tasks.csv "+c.name, func(t *testing.T) {
			t.Parallel()
			rt := newGitRedTeam(t)
			p := filepath.Join(t.TempDir(), "tasks.csv")
			os.WriteFile(p, []byte(header+"T1,fine,d,,,a/**,,,,,,,,,,,\nT2,bad,d,,,"+c.scope+",,,,,,,,,,,\n"), 0o644)
			_, errOut, code := rt.run("-y", p)
			want := p + ` line 3 (T2), field "scope": ` + c.want
			if code == 0 || !strings.Contains(errOut, want) {
				t.Fatalf("exit %d, stderr %q\nwant it to contain %q", code, errOut, want)
			}
			if steps, err := os.ReadFile(filepath.Join(rt.fake, "steps")); err == nil {
				t.Errorf("agent steps ran before the plan was refused:\n%s", steps)
			}
		})
	}
	t.Run("from the agent's plan", func(t *testing.T) {
		t.Parallel()
		rt := newGitRedTeam(t)
		rt.setPlan(task{ID: "T1", Title: "fine", Scope: "a/**"}, task{ID: "T2", Title: "hooks", Scope: ".git/hooks/**"})
		_, errOut, code := rt.run("-y", "plant hooks")
		if code == 0 || !strings.Contains(errOut, `(T2), field "scope": scope glob ".git/hooks/**" reaches into .git`) {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		steps, _ := os.ReadFile(filepath.Join(rt.fake, "steps"))
		if strings.Contains(string(steps), "execute") {
			t.Errorf("an execute step started:\n%s", steps)
		}
	})
}

// TestRedTeamGitUserCheckoutUntouched: in local mode the user's HEAD,
// index, working tree, .git/hooks and .git/config are byte-identical after
// a run, even with staged, unstaged, untracked and stat-stale files that
// tempt git into refreshing the index.
func TestRedTeamGitUserCheckoutUntouched(t *testing.T) {
	t.Parallel()
	rt := newGitRedTeam(t)
	rt.setPlan(diamond()...)
	// The user's own hooks (which planex's git must not run either).
	for _, h := range []string{"pre-commit", "post-checkout", "post-index-change", "reference-transaction"} {
		rt.write(filepath.Join(rt.repo, ".git", "hooks"), h, "#!/bin/sh\ntouch '"+filepath.Join(rt.fake, "markers", "user-"+h)+"'\n")
		os.Chmod(filepath.Join(rt.repo, ".git", "hooks", h), 0o755)
	}
	os.MkdirAll(filepath.Join(rt.fake, "markers"), 0o755)
	rt.write(rt.repo, "a/keep.txt", "a, edited and staged\n")
	rt.safeGit("add", "a/keep.txt")
	rt.write(rt.repo, "b/keep.txt", "b, edited, not staged\n")
	rt.write(rt.repo, "notes/untracked.txt", "the user's notes\n")
	// Same content, new mtime: git would like to rewrite the index entry.
	hourAgo := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(rt.repo, "c/keep.txt"), hourAgo, hourAgo)

	before := checkoutDigest(t, rt.repo)
	out, errOut, code := rt.run("-y", "add four files")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if n := len(rt.commitFiles("planex/" + filepath.Base(rt.sessionDir()))); n != 4 {
		t.Fatalf("the run made %d commits, want 4", n)
	}
	after := checkoutDigest(t, rt.repo)
	for _, k := range sortedKeys(before, after) {
		if before[k] != after[k] {
			t.Errorf("%s changed: %.12s → %.12s", k, before[k], after[k])
		}
	}
	rt.assertNothingRan()
}

// checkoutDigest hashes what the user owns: HEAD and the branch it names,
// the index, every file of the working tree (planex's session folder
// aside), .git/hooks and .git/config.
func checkoutDigest(t *testing.T, repo string) map[string]string {
	t.Helper()
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	d := map[string]string{}
	read := func(key, p string) {
		b, err := os.ReadFile(p)
		if err != nil {
			d[key] = "missing: " + err.Error()
			return
		}
		d[key] = sum(b)
	}
	gitDir := filepath.Join(repo, ".git")
	read("HEAD", filepath.Join(gitDir, "HEAD"))
	read("refs/heads/main", filepath.Join(gitDir, "refs", "heads", "main"))
	read("index", filepath.Join(gitDir, "index"))
	read("config", filepath.Join(gitDir, "config"))
	for _, tree := range []struct{ prefix, root string }{{"hooks/", filepath.Join(gitDir, "hooks")}, {"worktree/", repo}} {
		err := filepath.WalkDir(tree.root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(tree.root, p)
			if tree.prefix == "worktree/" && (rel == ".git" || rel == ".workflow") {
				return fs.SkipDir
			}
			if e.IsDir() {
				return nil
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			read(tree.prefix+rel, p)
			d[tree.prefix+rel] += " " + fi.Mode().String() + " " + fi.ModTime().String()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func sortedKeys(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}
