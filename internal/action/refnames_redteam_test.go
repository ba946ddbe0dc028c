package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/render"
)

// TestRedTeamDecoyBranchIsNotTheBase: someone who can push branches, but
// not to the protected main, pushes a/refs/heads/main with a commit of
// theirs before a plan is asked for. git ls-remote matches the name's
// tail and lists the decoy first, so planex planned, and its pull request
// built, on the decoy's commit as main's (which the pull request then
// carried as its base, named nowhere as someone else's). The plan is made
// on main's commit.
func TestRedTeamDecoyBranchIsNotTheBase(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	main := run(t, w.origin, "rev-parse", "refs/heads/main")
	dir := filepath.Join(t.TempDir(), "decoy")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	os.WriteFile(filepath.Join(dir, "evil.txt"), []byte("unreviewed\n"), 0o644)
	run(t, dir, "add", "evil.txt")
	run(t, dir, "-c", "user.name=F", "-c", "user.email=f@example.com", "commit", "-q", "-m", "not on main")
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/a/refs/heads/main")

	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	var bases []string
	for _, c := range w.fake.Comments(wRepo, n) {
		if m, ok := render.ParsePlanMarker(c.Body); ok {
			bases = append(bases, m.Base)
		}
	}
	if len(bases) != 1 || bases[0] != main {
		t.Errorf("the plan's base is %v, want main's %s (the decoy's is %s)", bases, main, run(t, dir, "rev-parse", "HEAD"))
	}
}

// TestRedTeamForgedStateBaseIsAnOption: whoever can push rewrites a
// planned thread's state ref so that github.json names as the plan's base
// "--output=<a file of the runner>", then a maintainer approves. planex
// compared that base with main's tip by git diff-tree, which took it as
// its option and wrote (truncating first) the named file. A record whose
// base is no object id is refused; the file is untouched and nothing runs.
func TestRedTeamForgedStateBaseIsAnOption(t *testing.T) {
	w, n, session, base, _ := plannedWithForgerCommit(t)
	victim := filepath.Join(t.TempDir(), "victim")
	const keep = "the runner's own file\n"
	if err := os.WriteFile(victim, []byte(keep), 0o600); err != nil {
		t.Fatal(err)
	}
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return strings.ReplaceAll(s, `"`+base+`"`, `"--output=`+victim+`"`)
	}))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if b, _ := os.ReadFile(victim); string(b) != keep {
		t.Errorf("git wrote the file the forged base named: %q", b)
	}
	refusedOnMovedBase(t, w, session, r, err)
	if err == nil || !strings.Contains(err.Error(), "base") {
		t.Errorf("the forged record is not refused naming its base: %v", err)
	}
}
