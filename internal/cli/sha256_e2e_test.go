package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSHA256RepositoryRunKillContinue runs planex in a repository made
// with `git init --object-format=sha256`: the run starts, is SIGKILLed
// while a wave is in flight, and --continue finds the committed tasks by
// their 64-digit ids and finishes the branch with no task done twice.
func TestSHA256RepositoryRunKillContinue(t *testing.T) {
	t.Parallel()
	f := &fixture{t: t, repo: t.TempDir(), fake: t.TempDir()}
	f.env = []string{"RUNNER_TEMP=" + t.TempDir()}
	abs, err := filepath.Abs("testdata/scripted-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	f.agent = abs
	f.git("init", "-q", "-b", "main", "--object-format=sha256")
	f.git("config", "user.name", "Maintainer")
	f.git("config", "user.email", "m@example.com")
	f.write(f.repo, "README.md", "# demo\n")
	for _, d := range []string{"a", "b", "c", "d"} {
		f.write(f.repo, d+"/keep.txt", d+"\n")
	}
	f.git("add", ".")
	f.git("commit", "-qm", "initial")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	if len(f.base) != 64 {
		t.Fatalf("the fixture is not a SHA-256 repository: HEAD is %q", f.base)
	}
	f.setPlan(diamond()...)
	killAfterT2(t, f)

	o2, e2, code := f.planex("--continue")
	if code != 0 {
		t.Fatalf("continue: %d\n%s\n%s", code, o2, e2)
	}
	// Had the history read missed T1's and T2's commits, reconcile would
	// have sent them to run again.
	if strings.Contains(o2, "will run again") {
		t.Errorf("--continue did not find T1's and T2's commits on the branch:\n%s", o2)
	}
	if got := strings.Join(f.branchLog(), " "); got != "T1:_base|T1 T2:_left|T2 T3:_right|T3 T4:_join|T4" {
		t.Errorf("resumed branch %q", got)
	}
	branch := "planex/" + filepath.Base(f.sessionDir())
	files := f.git("ls-tree", "-r", "--name-only", branch)
	for _, want := range []string{"a/t1.txt", "b/t2.txt", "c/t3.txt", "d/t4.txt"} {
		if !strings.Contains(files, want+"\n") {
			t.Errorf("%s missing from the branch's tree:\n%s", want, files)
		}
	}
	for _, id := range strings.Fields(f.git("rev-list", f.base+".."+branch)) {
		if len(id) != 64 {
			t.Errorf("commit id %q on the run branch is not a SHA-256 id", id)
		}
	}
	if wts := f.git("worktree", "list"); strings.Count(wts, "\n") != 1 {
		t.Errorf("worktrees left behind:\n%s", wts)
	}
}
