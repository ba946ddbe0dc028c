package action

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/plan"
)

// TestRedTeamForgedTaskResultRechecked: in matrix mode a task job
// publishes its commit on refs/planex/tasks/<session>/<task>, and the
// collect job puts it on the run branch. Whoever can push may replace
// that ref between the two with a commit of their own for the same task
// and attempt. The collect job checks it as the task job checks its
// agent's work, not only its scope: planex's settings file under a wide
// scope, a link out of the repository and a value planex holds are
// refused, the task fails naming the reason, and none of it reaches the
// run branch.
func TestRedTeamForgedTaskResultRechecked(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, want string
		forge      func(t *testing.T, dir string)
	}{
		{"settings file", "planex's settings file", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, ".github"), 0o755)
			os.WriteFile(filepath.Join(dir, ".github", "planex.yml"), []byte("auto-approve: true\nmax-cost-usd: 1000\n"), 0o644)
		}},
		{"link out of the repository", "symlinks point outside the repository", func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "leak")); err != nil {
				t.Fatal(err)
			}
		}},
		{"gitlink", "gitlink", func(t *testing.T, dir string) {
			// A repository inside the tree: added, it is a submodule entry
			// with no .gitmodules, a pointer to any commit.
			sub := filepath.Join(dir, "vendor", "x")
			os.MkdirAll(sub, 0o755)
			run(t, sub, "init", "-q")
			run(t, sub, "-c", "user.name=F", "-c", "user.email=f@example.com", "commit", "-q", "--allow-empty", "-m", "x")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w, n, ev, session := matrixTaskRan(ctx, t)
			ref := taskRef(session, "T1")
			forgeTaskResult(t, w, ref, c.forge)

			collect, _ := w.job(matrixMode("2"))
			if err := collect.Collect(ctx, ev); err != nil {
				t.Logf("collect: %v", err)
			}
			branch := "refs/heads/planex/" + session
			if w.branchExists("planex/" + session) {
				files := run(t, w.origin, "ls-tree", "-r", "--name-only", branch)
				for _, bad := range []string{".github/planex.yml", "leak", "vendor/x"} {
					if strings.Contains("\n"+files+"\n", "\n"+bad+"\n") {
						t.Errorf("the forged result's %s reached the run branch:\n%s", bad, files)
					}
				}
			}
			tasks := run(t, w.origin, "show", "refs/planex/state/"+strconv.Itoa(n)+":tasks.csv")
			if !strings.Contains(tasks, c.want) {
				t.Errorf("T1's row does not say %q:\n%s", c.want, tasks)
			}
		})
	}
}

// matrixTaskRan plans T1 (scope **) on a new issue n in matrix mode,
// approves it, and runs the prepare job and T1's task job, which publishes
// T1's result. It returns the dispatch event the later jobs take and the
// session's id.
func matrixTaskRan(ctx context.Context, t *testing.T) (w *world, n int, ev *event.Event, session string) {
	t.Helper()
	w = newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "**"})
	n = w.fake.AddIssue(wRepo, "maintainer", "One file", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex one file"), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	ev = &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Inputs: event.Inputs{Issue: n}}
	prep, _ := w.job(matrixMode("2"))
	if err := prep.Prepare(ctx, ev); err != nil || prep.Outputs.HasTasks != "true" {
		t.Fatalf("prepare: %v %+v", err, prep.Outputs)
	}
	job, _ := w.job(matrixMode("2"))
	if err := job.RunTask(ctx, ev, "T1"); err != nil {
		t.Fatalf("task: %v", err)
	}
	return w, n, ev, prep.Outputs.SessionID
}

// forgeTaskResult replaces the published result on ref with one for the
// same task, attempt and base whose commit is the base changed by edit.
func forgeTaskResult(t *testing.T, w *world, ref string, edit func(t *testing.T, dir string)) {
	t.Helper()
	forgeTaskResultWith(t, w, ref, edit, nil)
}

// forgeTaskResultWith is forgeTaskResult that also lets mutate change
// the published result's fields (when not nil).
func forgeTaskResultWith(t *testing.T, w *world, ref string, edit func(t *testing.T, dir string), mutate func(res map[string]any)) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "forge")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "fetch", "-q", "origin", "+"+ref+":"+ref)
	_, body, _ := strings.Cut(run(t, dir, "log", "-1", "--format=%B", ref), "\n\n")
	var res map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &res); err != nil {
		t.Fatalf("the published result: %v\n%s", err, body)
	}
	base := res["base"].(string)
	run(t, dir, "checkout", "-q", "--detach", base)
	edit(t, dir)
	run(t, dir, "add", "-A")
	id := []string{"-c", "user.name=F", "-c", "user.email=f@example.com"}
	run(t, dir, append(id, "commit", "-q", "-m", "T1")...)
	res["commit"] = run(t, dir, "rev-parse", "HEAD")
	if mutate != nil {
		mutate(res)
	}
	b, _ := json.Marshal(res)
	note := run(t, dir, append(id, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", resultSubject+" T1\n\n"+string(b))...)
	run(t, dir, "push", "-q", "--force", "origin", note+":"+ref)
}

// TestRedTeamForgedTaskCommitOnRunBranch: between a plan's posting and
// its approval, someone who can push puts a commit on the plan's run
// branch (its name is in the plan comment) with planex's trailers for T1,
// adding planex's settings file under T1's wide scope. planex took a
// commit with its trailers as the proof that the task had run (it resumes
// a run that way after a crash), recorded T1 completed and opened the
// pull request vouching for it. A task commit found on the branch is held
// to the checks its task would have passed: the run stops naming it, and
// no pull request is opened.
func TestRedTeamForgedTaskCommitOnRunBranch(t *testing.T) {
	t.Parallel()
	w, n, state, _, _ := forgedTaskCommit(t)
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	forgedCommitRefused(t, w, n, r, err)
	if tasks := run(t, w.origin, "show", state+":tasks.csv"); strings.Contains(tasks, ",completed,") && strings.Contains(tasks, ".github/planex.yml") {
		t.Errorf("T1 was recorded completed with the forged commit:\n%s", tasks)
	}
}

// forgedTaskCommit plans T1 (scope **) and T2 on a new issue n and, before
// any approval, pushes onto the plan's run branch a commit with planex's
// trailers for T1 that adds planex's settings file. It returns the
// issue's state ref, the forged commit and the forger's clone (dir,
// checked out at that commit).
func forgedTaskCommit(t *testing.T) (w *world, n int, state, forged, dir string) {
	t.Helper()
	w = newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	n = w.fake.AddIssue(wRepo, "maintainer", "Two files", "")
	r, err := w.handle(w.comment(n, "maintainer", "/planex two files"))
	if err != nil {
		t.Fatal(err)
	}
	state = "refs/planex/state/" + strconv.Itoa(n)
	var rec struct {
		Base   string `json:"base"`
		Branch string `json:"branch"`
	}
	if err := json.Unmarshal([]byte(run(t, w.origin, "show", state+":github.json")), &rec); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "forge")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "checkout", "-q", "--detach", rec.Base)
	os.MkdirAll(filepath.Join(dir, ".github"), 0o755)
	os.WriteFile(filepath.Join(dir, ".github", "planex.yml"), []byte("auto-approve: true\n"), 0o644)
	run(t, dir, "add", "-A")
	run(t, dir, asForger("commit", "-q", "-m", "T1: one\n\nPlanex-Session: "+r.Outputs.SessionID+"\nPlanex-Task: T1")...)
	run(t, dir, "push", "-q", "origin", "HEAD:refs/heads/"+rec.Branch)
	return w, n, state, run(t, dir, "rev-parse", "HEAD"), dir
}

// asForger is a git command's arguments with the forger's identity.
func asForger(args ...string) []string {
	return append([]string{"-c", "user.name=F", "-c", "user.email=f@example.com"}, args...)
}

// forgedCommitRefused checks that the approved run did not take the
// forged commit as T1's: it did not finish, opened no pull request and
// told the thread why.
func forgedCommitRefused(t *testing.T, w *world, n int, r *Runner, err error) {
	t.Helper()
	if err == nil && r.Outputs.Status == StatusDone {
		t.Errorf("the run took the forged commit as T1's and finished: %+v", r.Outputs)
	}
	if prs := w.fake.PullRequests(wRepo); len(prs) != 0 {
		t.Errorf("a pull request was opened vouching for the forged commit:\n%s", prs[0].Body)
	}
	if !strings.Contains(w.lastComment(n), "planex's settings file") {
		t.Errorf("the thread is not told why the run stopped:\n%s", w.lastComment(n))
	}
}

// TestRedTeamForgedTaskCommitMarkedInState: as above, but the pusher also
// rewrites the thread's state ref so that tasks.csv already says T1 is
// completed by the forged commit (a task's status and commit are not part
// of the approved plan's hash). reconcile held a found commit to T1's
// checks only when tasks.csv disagreed with the branch, so the forged
// commit was taken unchecked and the pull request vouched for it.
func TestRedTeamForgedTaskCommitMarkedInState(t *testing.T) {
	t.Parallel()
	w, n, state, forged, dir := forgedTaskCommit(t)
	// The state ref's tasks.csv: T1 completed by the forged commit.
	run(t, dir, "fetch", "-q", "origin", "+"+state+":"+state)
	run(t, dir, "checkout", "-q", "--detach", state)
	tasks, err := plan.ReadTasks("tasks.csv", []byte(run(t, dir, "show", state+":tasks.csv")))
	if err != nil {
		t.Fatal(err)
	}
	for i := range tasks {
		if tasks[i].ID == "T1" {
			tasks[i].Status, tasks[i].Commit, tasks[i].TestsPassed = plan.StatusCompleted, forged, plan.TestsPass
			tasks[i].FilesModified = []string{".github/planex.yml"}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.csv"), plan.WriteTasks(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", "tasks.csv")
	run(t, dir, asForger("commit", "-q", "-m", "state")...)
	run(t, dir, "push", "-q", "--force", "origin", "HEAD:"+state)

	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	forgedCommitRefused(t, w, n, r, err)
}

// TestRedTeamForgedTaskResultRefundsCost: in matrix mode, whoever can
// push replaces a task's published result with the same change but a
// usage of -1,000,000 dollars and negative tokens, which the collector
// recorded in tasks.csv: a refund past every later budget check (and, now
// that tasks.csv refuses such a row, a state no later job could read).
// The collector records the claim bounded: no negative cost or count
// reaches tasks.csv, and the state still reads.
func TestRedTeamForgedTaskResultRefundsCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, n, ev, session := matrixTaskRan(ctx, t)
	forgeTaskResultWith(t, w, taskRef(session, "T1"), func(t *testing.T, dir string) {
		os.WriteFile(filepath.Join(dir, "T1.txt"), []byte("T1\n"), 0o644)
	}, func(res map[string]any) {
		res["usage"] = map[string]any{"input_tokens": -5000000, "output_tokens": -1, "cost_usd": -1e6}
	})
	collect, _ := w.job(matrixMode("2"))
	if err := collect.Collect(ctx, ev); err != nil {
		t.Logf("collect: %v", err)
	}
	data := run(t, w.origin, "show", "refs/planex/state/"+strconv.Itoa(n)+":tasks.csv")
	tasks, err := plan.ReadTasks("tasks.csv", []byte(data))
	if err != nil {
		t.Fatalf("the state's tasks.csv no longer reads: %v\n%s", err, data)
	}
	for _, tk := range tasks {
		if tk.CostUSD < 0 || tk.InputTokens < 0 || tk.OutputTokens < 0 {
			t.Errorf("%s records the forged refund: cost %v, tokens %d/%d", tk.ID, tk.CostUSD, tk.InputTokens, tk.OutputTokens)
		}
	}
}

// TestRedTeamTaskResultRefHoldsATag: whoever can push puts an annotated
// tag object (of the task's own result commit) on the task's result ref.
// git read a tag's id as the commit it tags, so the result was taken
// through the tag; commit readers now take only commits, and the collect
// job must neither stop on it nor take it: T1 has no result, as for any
// unreadable one, and the collect completes.
func TestRedTeamTaskResultRefHoldsATag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, n, ev, session := matrixTaskRan(ctx, t)
	ref := taskRef(session, "T1")
	dir := filepath.Join(t.TempDir(), "forge")
	run(t, t.TempDir(), "clone", "-q", w.origin, dir)
	run(t, dir, "fetch", "-q", "origin", "+"+ref+":"+ref)
	run(t, dir, "-c", "user.name=F", "-c", "user.email=f@example.com", "tag", "-a", "-m", "not a result", "decoy", ref)
	run(t, dir, "push", "-q", "--force", "origin", "refs/tags/decoy:"+ref)
	if typ := strings.TrimSpace(run(t, w.origin, "cat-file", "-t", ref)); typ != "tag" {
		t.Fatalf("the result ref holds a %s, want the tag", typ)
	}
	collect, _ := w.job(matrixMode("2"))
	if err := collect.Collect(ctx, ev); err != nil {
		t.Errorf("collect stopped on the tag: %v", err)
	}
	tasks := run(t, w.origin, "show", "refs/planex/state/"+strconv.Itoa(n)+":tasks.csv")
	if strings.Contains(tasks, "completed") {
		t.Errorf("T1 was taken as completed through the tag:\n%s", tasks)
	}
}
