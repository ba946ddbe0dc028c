package action

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/render/md/mdtest"
)

// TestRedTeamForgedStateLinksOutside: someone who can push to the
// repository, but whom planex's approval checks are there to hold,
// rewrites a planned thread's state ref so that the session folder's
// discovery board is a link to a file elsewhere on the runner (here a
// file shaped like a board, holding a value the run must not publish),
// then a maintainer approves the plan. Restoring the folder would have
// planex read the file through the link into its report, the pull
// request's body and the job summary, and append the run's discoveries
// to it. The state is refused instead: nothing runs, the file is
// unchanged, and its value is nowhere planex writes.
func TestRedTeamForgedStateLinksOutside(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	const secret = "RUNNER-ONLY-7f3a9c"
	outside := filepath.Join(t.TempDir(), "board.ndjson")
	board := `{"ts":"2025-01-01T00:00:00Z","worker":"E1","type":"convention","data":{"note":"` + secret + `"}}` + "\n"
	if err := os.WriteFile(outside, []byte(board), 0o600); err != nil {
		t.Fatal(err)
	}

	forgeState(t, w, n, func(dir string) error { return os.Symlink(outside, filepath.Join(dir, "discoveries.ndjson")) })

	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err == nil || r.Outputs.Status == StatusDone {
		t.Errorf("a state holding a link was restored and run: %v, status %q", err, r.Outputs.Status)
	}
	if err != nil && !strings.Contains(err.Error(), "discoveries.ndjson") {
		t.Errorf("the refusal does not name the link: %v", err)
	}
	if w.branchExists("planex/" + r.Outputs.SessionID) {
		t.Error("the forged state's plan ran: its branch was pushed")
	}
	if b, _ := os.ReadFile(outside); string(b) != board {
		t.Errorf("the file the link led to was written:\n%s", b)
	}
	var written []string
	written = append(written, r.Outputs.Summary)
	for _, c := range w.fake.Comments(wRepo, n) {
		written = append(written, c.Body)
	}
	for _, pr := range w.fake.PullRequests(wRepo) {
		written = append(written, pr.Body)
	}
	for _, text := range written {
		if strings.Contains(text, secret) {
			t.Fatalf("the file outside the session folder was published:\n%s", text)
		}
	}
}

// forgeState rewrites thread n's state ref on origin as someone who can
// push would: the state as planex pushed it, changed by edit in a clone.
func forgeState(t *testing.T, w *world, n int, edit func(dir string) error) {
	t.Helper()
	state := "refs/planex/state/" + strconv.Itoa(n)
	forge := filepath.Join(t.TempDir(), "forge")
	run(t, t.TempDir(), "clone", "-q", w.origin, forge)
	run(t, forge, "fetch", "-q", "origin", state+":"+state)
	run(t, forge, "checkout", "-q", "--detach", state)
	if err := edit(forge); err != nil {
		t.Fatal(err)
	}
	run(t, forge, "add", "-A")
	run(t, forge, "-c", "user.name=F", "-c", "user.email=f@example.com", "commit", "-q", "-m", "planex: state")
	run(t, forge, "push", "-q", "--force", "origin", "HEAD:"+state)
}

// TestRedTeamForgedStateOversizedRecord: a forged state ref whose
// github.json is larger than any planex writes (a few GiB would exhaust
// the runner's memory when read whole; 2 MiB here, past the 1 MiB cap)
// is refused before it is read, and nothing runs.
func TestRedTeamForgedStateOversizedRecord(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	forgeState(t, w, n, func(dir string) error {
		p := filepath.Join(dir, recordFile)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// Still a valid record, with the same plan and approval fields.
		pad := `"note": "` + strings.Repeat("x", 2<<20) + `",`
		return os.WriteFile(p, []byte(strings.Replace(string(b), "{", "{\n  "+pad, 1)), 0o644)
	})
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err == nil || !strings.Contains(err.Error(), "more than") || r.Outputs.Status == StatusDone {
		t.Errorf("an oversized record was read: %v, status %q", err, r.Outputs.Status)
	}
	if w.branchExists("planex/" + r.Outputs.SessionID) {
		t.Error("the forged state's plan ran: its branch was pushed")
	}
}

// TestRedTeamForgedStateMovesBase: a forged state ref keeps the approved
// plan (its id, hash, tasks and approval all check out on GitHub) but
// moves its base to a commit of the forger's that the plan comment never
// showed (it names the base the plan was made on): in github.json, in
// session.json (which the engine starts the branch from), or in both.
// The approved tasks ran on that commit, and the pull request carried it.
// The base is part of what was approved: the run is refused, and nothing
// is pushed.
func TestRedTeamForgedStateMovesBase(t *testing.T) {
	t.Parallel()
	for name, files := range map[string][]string{
		"github.json":  {recordFile},
		"session.json": {"session.json"},
		"both":         {recordFile, "session.json"},
	} {
		t.Run(name, func(t *testing.T) { movedBase(t, files) })
	}
}

func movedBase(t *testing.T, files []string) {
	w, n, session, base, evil := plannedWithForgerCommit(t)
	forgeState(t, w, n, rewriteStateFiles(files, func(s string) string { return strings.ReplaceAll(s, base, evil) }))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	refusedOnMovedBase(t, w, session, r, err)
	if !strings.Contains(w.lastComment(n), "will not run") {
		t.Errorf("the thread is not told why:\n%s", w.lastComment(n))
	}
}

// plannedWithForgerCommit plans one task on a new issue n (session) and
// pushes a forger's commit evil, on a branch of its own, on top of the
// plan's base.
func plannedWithForgerCommit(t *testing.T) (w *world, n int, session, base, evil string) {
	t.Helper()
	w = newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n = w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	r, err := w.handle(w.comment(n, "maintainer", "/planex add a file"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "evil")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	os.WriteFile(filepath.Join(dir, "evil.txt"), []byte("unreviewed\n"), 0o644)
	run(t, dir, "add", "evil.txt")
	run(t, dir, "-c", "user.name=F", "-c", "user.email=f@example.com", "commit", "-q", "-m", "not in the plan")
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/evil")
	return w, n, r.Outputs.SessionID, run(t, dir, "rev-parse", "HEAD^"), run(t, dir, "rev-parse", "HEAD")
}

// rewriteStateFiles is a forgeState edit that rewrites each of files
// (relative to the state's folder) with fn.
func rewriteStateFiles(files []string, fn func(string) string) func(state string) error {
	return func(state string) error {
		for _, f := range files {
			p := filepath.Join(state, f)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(fn(string(b))), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

// refusedOnMovedBase checks that an approval on a moved base ran nothing:
// no run branch for session, no finished status, no pull request.
func refusedOnMovedBase(t *testing.T, w *world, session string, r *Runner, err error) {
	t.Helper()
	if w.branchExists("planex/" + session) {
		files := run(t, w.origin, "ls-tree", "-r", "--name-only", "refs/heads/planex/"+session)
		t.Errorf("the approved plan ran on a moved base: %v, status %q\n%s", err, r.Outputs.Status, files)
	}
	if r.Outputs.Status == StatusDone || len(w.fake.PullRequests(wRepo)) != 0 {
		t.Errorf("the run with a moved base finished: %v, status %q", err, r.Outputs.Status)
	}
}

// TestRedTeamForgedStateFollowUpOnAnotherBranch: a follow-up plan on one
// of planex's pull requests runs on that pull request's branch. A forged
// state ref keeps the approved follow-up but names another planex pull
// request's branch, in github.json and session.json alike: the approved
// tasks were committed and pushed there, onto a pull request nobody asked
// to change. The run branch of a follow-up must be its pull request's
// head: the run is refused, and the other branch is untouched.
func TestRedTeamForgedStateFollowUpOnAnotherBranch(t *testing.T) {
	w := newParallelWorld(t)
	prOf := func(issue string) ghfake.PullRequest {
		n := w.fake.AddIssue(wRepo, "maintainer", issue, "")
		w.agent.setPlan(wTask{ID: "T1", Title: issue, Scope: "a/**"})
		if r, err := w.handle(w.comment(n, "maintainer", "/planex -y "+issue)); err != nil || r.Outputs.Status != StatusDone {
			t.Fatalf("planning %s: %v %+v", issue, err, r.Outputs)
		}
		prs := w.fake.PullRequests(wRepo)
		pr := prs[len(prs)-1]
		pr.HeadSHA = run(t, w.origin, "rev-parse", pr.Head)
		w.fake.SetPullRequestHead(wRepo, pr.Number, pr.HeadSHA)
		return pr
	}
	asked, other := prOf("first"), prOf("second")
	otherTip := run(t, w.origin, "rev-parse", "refs/heads/"+other.Head)

	w.agent.setPlan(wTask{ID: "T1", Title: "more", Scope: "b/**"})
	if r, err := w.handle(w.comment(asked.Number, "maintainer", "/planex add more")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("follow-up: %v %+v", err, r.Outputs)
	}
	forgeState(t, w, asked.Number, func(state string) error {
		for _, f := range []string{recordFile, "session.json"} {
			p := filepath.Join(state, f)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), `"`+asked.Head+`"`, `"`+other.Head+`"`)), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	r, err := w.handle(w.comment(asked.Number, "maintainer", "/planex approve "+w.planID(asked.Number)))
	if tip := run(t, w.origin, "rev-parse", "refs/heads/"+other.Head); tip != otherTip {
		t.Errorf("the follow-up was pushed onto another pull request's branch %s: %v, status %q", other.Head, err, r.Outputs.Status)
	}
	if r.Outputs.Status == StatusDone {
		t.Errorf("the forged follow-up finished: %v %+v", err, r.Outputs)
	}
}

// TestRedTeamForgedStateMovesBaseBranch: a forged state ref keeps the
// approved plan, its base commit and run branch, but names another
// branch of the repository as the base branch in github.json: the pull
// request was opened against that branch (a release branch, say), where
// merging it brings in every commit of the plan's base that the branch
// lacks. A plan on an issue runs only against the base branch planex
// plans from: the run is refused and no pull request is opened.
func TestRedTeamForgedStateMovesBaseBranch(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "release")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/release")
	forgeState(t, w, n, func(state string) error {
		p := filepath.Join(state, recordFile)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		forged := strings.Replace(string(b), `"base_branch": "main"`, `"base_branch": "release"`, 1)
		if forged == string(b) {
			return fmt.Errorf("no base_branch main in %s", b)
		}
		return os.WriteFile(p, []byte(forged), 0o644)
	})
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	for _, pr := range w.fake.PullRequests(wRepo) {
		t.Errorf("a pull request was opened against %q on the forged record: %v, status %q", pr.Base, err, r.Outputs.Status)
	}
	if !strings.Contains(w.lastComment(n), "will not run") {
		t.Errorf("the thread is not told why:\n%s", w.lastComment(n))
	}
}

// TestRedTeamForgedStateMovesBaseOfLegacyPlan: a plan comment posted by a
// planex that did not yet show the base in its marker (nor kept the
// comment's hash in the record) is still approved by its id, hash and
// session. A forger who moves the base in the state ref of such a plan
// had the approval hold, since a marker without a base was not compared:
// an approval now holds only for a plan comment that shows its base.
func TestRedTeamForgedStateMovesBaseOfLegacyPlan(t *testing.T) {
	w, n, session, base, evil := plannedWithForgerCommit(t)
	// The plan comment as an older planex posted it: no base in its
	// marker (rewritten in place, as posted, not edited later).
	for _, c := range w.fake.Comments(wRepo, n) {
		if m, ok := render.ParsePlanMarker(c.Body); ok && m.Base != "" {
			legacy := strings.Replace(c.Body, `,"base":"`+base+`"`, "", 1)
			if legacy == c.Body {
				t.Fatalf("no base in the marker of:\n%s", c.Body)
			}
			w.fake.EditComment(wRepo, c.ID, legacy)
		}
	}
	noHash := regexp.MustCompile(`\s*"plan_body_sha256": "[0-9a-f]+",?`)
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile, "session.json"}, func(s string) string {
		return strings.ReplaceAll(noHash.ReplaceAllString(s, ""), base, evil)
	}))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	refusedOnMovedBase(t, w, session, r, err)
}

// TestRedTeamForgedStateBranchNamePings: as above, but the forged base
// branch is named so as to end a code span (branch names may hold
// backticks and parentheses): the refusal put the name, escaped as text,
// between backticks of its own, so the name's backticks closed the span
// and the reply pinged a team under planex's account.
func TestRedTeamForgedStateBranchNamePings(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	branch := "x`(@org/team)`y"
	dir := filepath.Join(t.TempDir(), "clone")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/"+branch)
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return strings.Replace(s, `"base_branch": "main"`, `"base_branch": "`+branch+`"`, 1)
	}))
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n))); err != nil {
		t.Logf("approve: %v", err)
	}
	c := w.lastComment(n)
	if !strings.Contains(c, "will not run") {
		t.Fatalf("the thread is not told why:\n%s", c)
	}
	d, err := mdtest.Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	own := regexp.MustCompile(`<!-- planex:req [0-9a-f]+ -->`).FindString(c)
	for _, p := range d.Problems(mdtest.Rules{Trigger: "/planex", OwnHTML: []string{own}}) {
		t.Errorf("the refusal: %s\n%s", p, c)
	}
}

// TestRedTeamForgedStateSessionIDInjectsOutputs: whoever can push gives a
// planned thread's record a session id holding line breaks and the
// delimiter the Actions toolkit writes step outputs with. The session id
// is the step's session-id output: written to $GITHUB_OUTPUT, its lines
// set outputs of the forger's (a matrix for the task jobs, a status, a
// shell command for a later step that interpolates an output). A record
// whose session id is not of the form planex makes is refused.
func TestRedTeamForgedStateSessionIDInjectsOutputs(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	inject := `\n_GitHubActionsFileCommandDelimeter_\nmatrix<<_GitHubActionsFileCommandDelimeter_\n{\"include\":[{\"task\":\"T9\"}]}`
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		re := regexp.MustCompile(`"session_id": "([^"]*)"`)
		return re.ReplaceAllString(s, `"session_id": "${1}`+inject+`"`)
	}))
	r, err := w.handle(w.comment(n, "maintainer", "/planex cancel"))
	if strings.ContainsAny(r.Outputs.SessionID, "\r\n") {
		t.Errorf("the session-id output holds lines of the forger's: %q (err %v)", r.Outputs.SessionID, err)
	}
	if err == nil && !strings.Contains(w.lastComment(n), "not one planex makes") {
		t.Errorf("the forged record was taken: outputs %+v\n%s", r.Outputs, w.lastComment(n))
	}
}

// TestRedTeamForgedStateApproverPings: whoever can push names as a done
// plan's approver `x (@org/team)`; a second `/planex approve` got the
// reply "already approved by @x (@org/team)", pinging the team under
// planex's account. A record's approver must be a login.
func TestRedTeamForgedStateApproverPings(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	id := w.planID(n)
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id)); err != nil {
		t.Fatal(err)
	}
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return strings.Replace(s, `"approved_by": "maintainer"`, `"approved_by": "x (@org/team)"`, 1)
	}))
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id)); err != nil {
		t.Logf("approve again: %v", err)
	}
	c := w.lastComment(n)
	d, err := mdtest.Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	own := regexp.MustCompile(`<!-- planex:req [0-9a-f]+ -->`).FindString(c)
	for _, p := range d.Problems(mdtest.Rules{Trigger: "/planex", OwnHTML: []string{own}, Pings: []string{"@x"}}) {
		t.Errorf("the reply: %s\n%s", p, c)
	}
}

// TestRedTeamForgedStateNamesAnotherRunBranch: whoever can push rewrites a
// planned thread's record so its run branch is another branch of the
// repository (one of theirs, or one a maintainer works on). The approval
// check refused to run it, but only after the job had fetched that branch
// into its checkout under the same name and started from it. A plan on an
// issue runs on planex/<session> and nothing else: the record is refused
// when it is read.
func TestRedTeamForgedStateNamesAnotherRunBranch(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "clone")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/feature-x")
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		re := regexp.MustCompile(`"branch": "planex/[^"]*"`)
		return re.ReplaceAllString(s, `"branch": "feature-x"`)
	}))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err == nil || !strings.Contains(err.Error(), `run branch "feature-x"`) {
		t.Errorf("approve: err %v, want the record refused naming the branch", err)
	}
	cmd := exec.Command("git", "-C", r.Repo.Root, "rev-parse", "--verify", "--quiet", "refs/heads/feature-x")
	if cmd.Run() == nil {
		t.Errorf("the job fetched the branch the forged record names into its checkout")
	}
}
