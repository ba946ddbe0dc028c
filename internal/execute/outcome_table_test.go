package execute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/sandbox"
)

// step is what a scripted agent does: files to write (a value starting
// with "->" makes a symlink to the rest), and the result it reports.
type step struct {
	files  map[string]string
	result map[string]any // nil: a completed task with passing tests
	res    agent.Result   // Raw is filled from result
	err    error
}

func (s step) agent() agent.Agent {
	return agent.Func(func(_ context.Context, st agent.Step) (agent.Result, error) {
		for name, text := range s.files {
			p := filepath.Join(st.Dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return agent.Result{}, err
			}
			var err error
			if target, ok := strings.CutPrefix(text, "->"); ok {
				err = os.Symlink(target, p)
			} else {
				err = os.WriteFile(p, []byte(text), 0o644)
			}
			if err != nil {
				return agent.Result{}, err
			}
		}
		result := s.result
		if result == nil {
			result = map[string]any{"id": st.ID, "status": "completed", "findings": "done", "tests_passed": true}
		}
		res := s.res
		res.Raw, _ = json.Marshal(result)
		return res, s.err
	})
}

func completed(tests bool) map[string]any {
	return map[string]any{"id": "T1", "status": "completed", "findings": "done", "tests_passed": tests}
}

// TestRunOutcomes: what an agent reports is a claim; the outcome follows
// from the worktree and planex's own checks, and a failure says why in
// one bounded line.
func TestRunOutcomes(t *testing.T) {
	t.Parallel()
	src := map[string]string{"src/a.go": "package src\n"}
	longOut := strings.Repeat("x", 3000) + "END"
	tests := []struct {
		name       string
		step       step
		scope      string // "**" when empty
		directives string
		timeout    time.Duration // directive timeout
		status     plan.Status
		tests      plan.TestResult
		err        string // the outcome's error holds this ("" for none)
		notErr     string // and not this
		findings   string
	}{
		// Without directives planex checks nothing: the agent's "passed" stays a claim.
		{name: "completed", step: step{files: src}, status: plan.StatusCompleted, tests: plan.TestsClaimed, findings: "done"},
		{name: "agent error with its problems", step: step{files: src, err: errors.New("step timed out"), res: agent.Result{Problems: []string{"Bash denied", "Write refused"}}},
			status: plan.StatusFailed, err: "step timed out (the agent reported: Bash denied; Write refused)"},
		{name: "result off the schema", step: step{files: src, result: map[string]any{"id": "T1", "status": "done"}},
			status: plan.StatusFailed, err: "status"},
		{name: "agent reports failure", step: step{files: src, result: map[string]any{"id": "T1", "status": "failed", "findings": "", "tests_passed": false, "error": " cannot find module x "}},
			status: plan.StatusFailed, tests: plan.TestsFail, err: "cannot find module x"},
		{name: "agent reports failure without a reason", step: step{files: src, result: map[string]any{"id": "T1", "status": "failed", "findings": "", "tests_passed": true}},
			status: plan.StatusFailed, tests: plan.TestsClaimed, err: "the agent reported the task as failed"},
		{name: "success with no change", step: step{}, status: plan.StatusFailed, err: "no changes: the agent reported success but changed no file"},
		{name: "agent's tests failed", step: step{files: src, result: completed(false)}, status: plan.StatusFailed, tests: plan.TestsFail,
			err: "tests did not pass (reported by the agent)"},
		{name: "outside its scope", step: step{files: map[string]string{"src/a.go": "x", "go.mod": "module evil\n"}}, scope: "src/**",
			status: plan.StatusFailed, err: `wrote outside its scope "src/**": go.mod`},
		{name: "symlink out of the repository", step: step{files: map[string]string{"src/passwd": "->/etc/passwd"}},
			status: plan.StatusFailed, err: "symlinks point outside the repository: src/passwd -> /etc/passwd"},
		{name: "symlink climbing out", step: step{files: map[string]string{"src/up": "->../../outside"}},
			status: plan.StatusFailed, err: "symlinks point outside the repository: src/up"},
		{name: "directives decide over the agent's claim", step: step{files: src, result: completed(false)}, directives: "test -f src/a.go\ngrep -q package src/a.go",
			status: plan.StatusCompleted, tests: plan.TestsPass},
		{name: "directives fail with their output", step: step{files: src}, directives: "echo building\necho 'FAIL: TestA' >&2\nexit 3\necho never",
			status: plan.StatusFailed, tests: plan.TestsFail, err: "execution directives failed: exit status 3: building", notErr: "never"},
		{name: "directives stop at the first failure", step: step{files: src}, directives: "false\necho reached\n",
			status: plan.StatusFailed, tests: plan.TestsFail, err: "execution directives failed: exit status 1", notErr: "reached"},
		{name: "directives time out", step: step{files: src}, directives: "sleep 30", timeout: 200 * time.Millisecond,
			status: plan.StatusFailed, tests: plan.TestsFail, err: "execution directives failed: timed out after 200ms"},
		{name: "directives' long output keeps its end", step: step{files: src}, directives: "printf '%s' '" + longOut + "'; exit 1",
			status: plan.StatusFailed, tests: plan.TestsFail, err: "exit status 1: …xxx", notErr: strings.Repeat("x", 801)},
		{name: "MCP calls and a cut output go with the findings",
			step:   step{files: src, res: agent.Result{MCPCalls: []string{"mcp__gh__issue_read", "mcp__db__query (3)"}, OutputDropped: 42}},
			status: plan.StatusCompleted, tests: plan.TestsClaimed,
			findings: "done MCP tools called: mcp__gh__issue_read, mcp__db__query (3). The agent's output was cut: planex kept only its end (42 bytes were dropped)."},
		{name: "MCP calls of a failed step", step: step{err: errors.New("boom"), res: agent.Result{MCPCalls: []string{"mcp__x__y"}}},
			status: plan.StatusFailed, err: "boom", findings: "MCP tools called: mcp__x__y."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo, tip := testRepo(t)
			r := &Runner{Repo: repo, Agent: tc.step.agent(), DirectiveTimeout: tc.timeout}
			defer r.Close(ctx)
			scope := tc.scope
			if scope == "" {
				scope = "**"
			}
			start := time.Now()
			o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: scope}, Base: tip, Session: "s", Directives: tc.directives})
			if o.Status != tc.status || o.TestsPassed != tc.tests {
				t.Fatalf("outcome %s, tests %q (%q); want %s, tests %q", o.Status, o.TestsPassed, o.Error, tc.status, tc.tests)
			}
			if (tc.err == "") != (o.Error == "") || !strings.Contains(o.Error, tc.err) || tc.notErr != "" && strings.Contains(o.Error, tc.notErr) {
				t.Errorf("error = %q; want it to hold %q and not %q", o.Error, tc.err, tc.notErr)
			}
			if len(o.Error) > 1000 {
				t.Errorf("error is %d bytes, over the bound", len(o.Error))
			}
			if o.Status == plan.StatusFailed && o.Changes != nil {
				t.Errorf("a failed task keeps changes %v to commit", o.Files())
			}
			if o.Status == plan.StatusCompleted && len(o.Changes) == 0 {
				t.Error("a completed task has no changes")
			}
			if tc.findings != "" && o.Findings != tc.findings {
				t.Errorf("findings = %q, want %q", o.Findings, tc.findings)
			}
			if d := time.Since(start); tc.timeout > 0 && d > 10*time.Second {
				t.Errorf("a directive past its timeout kept the task %v", d)
			}
		})
	}
}

// failing wraps a real repository and makes one of its methods fail.
type failing struct {
	*gitrepo.Repo
	method string
}

var errInjected = errors.New("injected failure")

func (f failing) AddWorktree(ctx context.Context, dir, commit string) error {
	if f.method == "AddWorktree" {
		return errInjected
	}
	return f.Repo.AddWorktree(ctx, dir, commit)
}

func (f failing) Snapshot(ctx context.Context, dir, base string) (string, []gitrepo.Change, error) {
	if f.method == "Snapshot" {
		return "", nil, errInjected
	}
	return f.Repo.Snapshot(ctx, dir, base)
}

func (f failing) SymlinkEscapes(ctx context.Context, tree string, changes []gitrepo.Change) ([]string, error) {
	if f.method == "SymlinkEscapes" {
		return nil, errInjected
	}
	return f.Repo.SymlinkEscapes(ctx, tree, changes)
}

func (f failing) StreamBlobs(ctx context.Context, shas []string, fn func(string, io.Reader) error) error {
	if f.method == "StreamBlobs" {
		return errInjected
	}
	return f.Repo.StreamBlobs(ctx, shas, fn)
}

func (f failing) CommitChanges(ctx context.Context, parent string, changes []gitrepo.Change, message string) (string, error) {
	if f.method == "CommitChanges" {
		return "", errInjected
	}
	return f.Repo.CommitChanges(ctx, parent, changes, message)
}

func (f failing) CommitTree(ctx context.Context, parent, tree, message string) (string, error) {
	if f.method == "CommitTree" {
		return "", errInjected
	}
	return f.Repo.CommitTree(ctx, parent, tree, message)
}

func (f failing) RemoveWorktree(ctx context.Context, dir string) error {
	if f.method == "RemoveWorktree" {
		return errInjected
	}
	return f.Repo.RemoveWorktree(ctx, dir)
}

// TestRunRepoFailures: when git fails at any step of a task, the task
// fails saying at which step; nothing is committed.
func TestRunRepoFailures(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"AddWorktree":    "preparing worktree: injected failure",
		"Snapshot":       "reading the task's changes: injected failure",
		"SymlinkEscapes": "checking the task's symlinks: injected failure",
		// StreamBlobs runs only when planex holds a secret: see
		// TestRedTeamDirectivesRedactHeldValues.
	}
	for method, want := range tests {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo, tip := testRepo(t)
			r := &Runner{Repo: failing{repo, method}, Agent: step{files: map[string]string{"a.txt": "a"}}.agent()}
			defer r.Close(ctx)
			o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "**"}, Base: tip, Session: "s"})
			if o.Status != plan.StatusFailed || o.Error != want || o.Changes != nil {
				t.Errorf("%s %q, want failed %q", o.Status, o.Error, want)
			}
		})
	}
}

// publisher makes the remote's commit: here a commit of the same tree
// with another message, as GitHub's API would (a signed copy).
type publisher struct {
	repo  *gitrepo.Repo
	err   error
	calls []string
}

func (p *publisher) Publish(ctx context.Context, branch, parent, commit string) (string, error) {
	p.calls = append(p.calls, branch+" "+parent+" "+commit)
	if p.err != nil {
		return "", p.err
	}
	out, err := p.repo.Git(ctx, "", "commit-tree", commit+"^{tree}", "-p", parent, "-m", "signed copy")
	return strings.TrimSpace(out), err
}

// TestCommitOutcomes: a completed task becomes one commit on the branch,
// moved by compare-and-swap; through a publisher the branch takes the
// remote's commit; each failure says which task and leaves the branch
// where it was. On the tip it ran on, a task commits its snapshot's tree
// (CommitTree); on a newer tip (a task beside it committed first), its
// changes are applied on that tip's tree (CommitChanges).
func TestCommitOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		method   string // repository method that fails
		pubErr   error
		publish  bool
		moved    bool // the branch moved before the commit
		onto     bool // another task committed b.txt first: the commit goes on its tip
		want     string
		wantIs   error
		wantSign bool // the branch holds the publisher's commit
	}{
		{name: "plain"},
		{name: "through the API", publish: true, wantSign: true},
		{name: "API refuses", publish: true, pubErr: errors.New("422 Unprocessable"), want: "committing T1 through GitHub's API: 422 Unprocessable"},
		{name: "commit fails", method: "CommitTree", want: "committing T1: injected failure", wantIs: errInjected},
		{name: "on a newer tip", onto: true},
		{name: "on a newer tip, commit fails", onto: true, method: "CommitChanges", want: "committing T1: injected failure", wantIs: errInjected},
		{name: "branch moved underneath", moved: true, want: "committing T1: ", wantIs: gitrepo.ErrRefMoved},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo, tip := testRepo(t)
			if err := repo.UpdateBranch(ctx, "run", tip, "", "start"); err != nil {
				t.Fatal(err)
			}
			r := &Runner{Repo: failing{repo, tc.method}, Agent: step{files: map[string]string{"a.txt": "a"}}.agent()}
			defer r.Close(ctx)
			pub := &publisher{repo: repo, err: tc.pubErr}
			if tc.publish {
				r.Publisher = pub
			}
			task := plan.Task{ID: "T1", Title: "add a"}
			o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "add a", Scope: "**"}, Base: tip, Session: "s"})
			if o.Status != plan.StatusCompleted {
				t.Fatalf("run: %s %q", o.Status, o.Error)
			}
			parent := tip // the tip the commit goes on
			if tc.onto {
				r0 := &Runner{Repo: repo, Agent: step{files: map[string]string{"b.txt": "b"}}.agent()}
				defer r0.Close(ctx)
				t0 := plan.Task{ID: "T2", Title: "add b", Scope: "**"}
				o0 := r0.Run(ctx, Job{Task: t0, Base: tip, Session: "s"})
				if o0.Status != plan.StatusCompleted {
					t.Fatalf("run T2: %s %q", o0.Status, o0.Error)
				}
				var err error
				if parent, err = r0.Commit(ctx, "run", tip, "s", t0, o0); err != nil {
					t.Fatal(err)
				}
			}
			before := parent // where the branch is
			if tc.moved {
				out, err := repo.Git(ctx, "", "commit-tree", tip+"^{tree}", "-p", tip, "-m", "someone else")
				if err != nil {
					t.Fatal(err)
				}
				before = strings.TrimSpace(out)
				if err := repo.UpdateBranch(ctx, "run", before, tip, "elsewhere"); err != nil {
					t.Fatal(err)
				}
			}
			sha, err := r.Commit(ctx, "run", parent, "s", task, o)
			now, rerr := repo.ResolveBranch(ctx, "run")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tc.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.want) || sha != "" {
					t.Fatalf("Commit = %q, %v; want an error starting %q", sha, err, tc.want)
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("Commit's error %v is not %v", err, tc.wantIs)
				}
				if now != before {
					t.Errorf("a failed commit moved the branch to %s", now)
				}
				return
			}
			if err != nil || now != sha {
				t.Fatalf("Commit = %q, %v; branch at %s", sha, err, now)
			}
			files, _ := repo.Git(ctx, "", "diff-tree", "-r", "--name-only", "--no-commit-id", parent, sha)
			msg, _ := repo.Git(ctx, "", "log", "-1", "--format=%s", sha)
			if strings.TrimSpace(files) != "a.txt" {
				t.Errorf("the commit changed %q, want a.txt", files)
			}
			if got := strings.TrimSpace(msg); tc.wantSign != (got == "signed copy") {
				t.Errorf("the branch's commit says %q (published: %v)", got, tc.wantSign)
			}
			if _, err := repo.Git(ctx, "", "cat-file", "-e", sha+":b.txt"); tc.onto && err != nil {
				t.Errorf("the commit on the newer tip lost its b.txt: %v", err)
			}
			if tc.publish && (len(pub.calls) != 1 || !strings.HasPrefix(pub.calls[0], "run "+tip+" ")) {
				t.Errorf("publisher calls = %v, want one for the branch on its tip", pub.calls)
			}
		})
	}
}

// TestRemoveStaleAndClose: a new run removes the worktrees a killed run
// of the session left (found by task name), and says when one cannot be
// removed; so does Close for the worktrees it kept.
func TestRemoveStaleAndClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, tip := testRepo(t)
	// A killed run's two tasks side by side: two worktrees, never closed.
	var dirs []string
	for _, id := range []string{"T1", "T2"} {
		dir := repo.WorktreeDir("s", id)
		if err := repo.AddWorktree(ctx, dir, tip); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	broken := &Runner{Repo: failing{repo, "RemoveWorktree"}, Log: log}
	broken.RemoveStale(ctx, "s", []string{"T1"})
	if !strings.Contains(logs.String(), "removing a worktree left behind") || !strings.Contains(logs.String(), dirs[0]) {
		t.Errorf("a worktree that could not be removed was not logged:\n%s", logs.String())
	}
	fresh := &Runner{Repo: repo, Log: log}
	fresh.RemoveStale(ctx, "s", []string{"T1", "T2", "T3"})
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived RemoveStale: %v", d, err)
		}
	}
	if out, _ := repo.Git(ctx, "", "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees still registered:\n%s", out)
	}

	logs.Reset()
	r := &Runner{Repo: repo, Agent: step{files: map[string]string{"a.txt": "a"}}.agent(), Log: log}
	if o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "**"}, Base: tip, Session: "s"}); o.Status != plan.StatusCompleted {
		t.Fatalf("run: %s %q", o.Status, o.Error)
	}
	r.Repo = failing{repo, "RemoveWorktree"}
	r.Close(ctx)
	if !strings.Contains(logs.String(), "removing worktree") {
		t.Errorf("Close did not log the worktree it could not remove:\n%s", logs.String())
	}
	if err := repo.RemoveWorktree(ctx, repo.WorktreeDir("s", "T1")); err != nil {
		t.Fatal(err)
	}
}

// TestRedTeamDirectivesRedactHeldValues: an agent that learned a value
// planex holds writes it in two halves (so no changed file holds it) and
// a directive that prints it whole and fails. The directive itself sees
// none of planex's held variables, and the task's error, which is stored
// and shown, never quotes the value.
func TestRedTeamDirectivesRedactHeldValues(t *testing.T) {
	const secret = "hunter2-0123456789-deploy"
	t.Setenv("DEPLOY_PASSWORD", secret)
	ctx := context.Background()
	repo, tip := testRepo(t)
	r := &Runner{Repo: repo, Agent: step{files: map[string]string{"p1": secret[:9], "p2": secret[9:]}}.agent()}
	defer r.Close(ctx)
	script := `echo "env: [$DEPLOY_PASSWORD]"; printf 'value: %s%s\n' "$(cat p1)" "$(cat p2)"; exit 1`
	o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "**"}, Base: tip, Session: "s", Directives: script})
	if o.Status != plan.StatusFailed || !strings.Contains(o.Error, "env: []") {
		t.Fatalf("%s %q; want a failure showing the directive saw no DEPLOY_PASSWORD", o.Status, o.Error)
	}
	if strings.Contains(o.Error, secret) || !strings.Contains(o.Error, "value: [redacted DEPLOY_PASSWORD]") {
		t.Errorf("the task's error quotes the held value: %q", o.Error)
	}

	// With a value held, every changed file is scanned for it; a scan
	// that cannot read the files fails the task rather than pass it.
	repo2, tip2 := testRepo(t)
	r2 := &Runner{Repo: failing{repo2, "StreamBlobs"}, Agent: step{files: map[string]string{"a.txt": "a"}}.agent()}
	defer r2.Close(ctx)
	o = r2.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "**"}, Base: tip2, Session: "s"})
	if o.Status != plan.StatusFailed || o.Error != "checking the task's changes for secrets: injected failure" {
		t.Errorf("%s %q; want the failed scan named", o.Status, o.Error)
	}
}

// TestRedTeamContainedDirectives: execution directives run code the agent
// wrote, so with a sandbox they are held as the agent is: a directive
// that tries to write outside the task's worktree changes nothing there,
// while the worktree itself stays writable.
func TestRedTeamContainedDirectives(t *testing.T) {
	if os.Geteuid() != 0 {
		// Unprivileged user namespaces may be off on a developer's
		// machine; CI and this project's test machine run as root.
		t.Skip("the sandbox test needs root to be sure namespaces are available")
	}
	t.Parallel()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.ModeOn)
	if err != nil {
		t.Fatalf("sandbox unavailable as root: %v", err)
	}
	// A target the sandbox shows, read-only: not under /tmp, /var/tmp
	// or /dev/shm, which it replaces with empty ones, nor /run, which it
	// replaces in a contained network.
	var outside string
	for _, parent := range []string{"/srv", "/mnt"} {
		if d, err := os.MkdirTemp(parent, "planex-execute-"); err == nil {
			outside = d
			break
		}
	}
	if outside == "" {
		t.Skip("no folder outside /tmp to put the target in")
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	target := filepath.Join(outside, "target")
	if err := os.WriteFile(target, []byte("original\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	// Open to every user, so that only the sandbox stands in the way.
	for p, mode := range map[string]os.FileMode{outside: 0o777, target: 0o666} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	repo, tip := testRepo(t)
	r := &Runner{Repo: repo, Agent: step{files: map[string]string{"a.txt": "a"}}.agent(), Contain: agent.Containment{Sandbox: sb}}
	defer r.Close(ctx)
	script := "echo pwned >> " + target + " || true\n" +
		"echo pwned > " + filepath.Join(outside, "new") + " || true\n" +
		"echo pwned > " + filepath.Join(repo.Root, "planted") + " || true\n" +
		"cat " + target + " > seen.log\n" +
		"echo built > build.log\n" +
		"test -f a.txt\n"
	o := r.Run(ctx, Job{Task: plan.Task{ID: "T1", Title: "t", Scope: "**"}, Base: tip, Session: "s", Directives: script})
	if o.Status != plan.StatusCompleted {
		t.Fatalf("%s %q; the contained directive could not work in its worktree", o.Status, o.Error)
	}
	if b, _ := os.ReadFile(target); string(b) != "original\n" {
		t.Errorf("the directive changed a file outside its worktree: %q", b)
	}
	for _, p := range []string{filepath.Join(outside, "new"), filepath.Join(repo.Root, "planted")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the directive created %s: %v", p, err)
		}
	}
	wt := repo.WorktreeDir("s", "T1")
	if b, err := os.ReadFile(filepath.Join(wt, "build.log")); err != nil || string(b) != "built\n" {
		t.Errorf("the directive's own output in its worktree: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "seen.log")); string(b) != "original\n" {
		t.Errorf("the directive could not read the target (%q), so the test proves nothing about writing it", b)
	}
}
