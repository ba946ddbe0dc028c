package execute

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
)

// BenchmarkTaskGit measures planex's git work per task (a worktree at the
// tip, the snapshot of the task's changes, the checks on them, the commit
// and the branch update; the agent writes one file and returns at once)
// against a plumbing floor doing the same work with plain git in the same
// repository: move a kept worktree to the tip with checkout -f --detach,
// write the change, status -uall, hash-object -w, read-tree into a
// temporary index, update-index --cacheinfo, write-tree, commit-tree,
// update-ref. Each runs tasks one after another on a generated repository
// of 200 and of 20,000 files. The floor's kept worktree is made before
// its timing starts; planex's worktree is made by its first task and
// removed by Close, timed apart as "setup". It reports:
//
//   - ratio-20k: planex's per-task cost over the floor's at 20,000 files
//     (target ≤ 3);
//
//   - rise-ratio: how much planex's per-task cost rises from 200 to 20,000
//     files over how much the floor's does (target ≤ 3);
//
//   - run-ratio-20k: as ratio-20k, with the setup spread over the run's
//     tasks (it falls as a run has more tasks per worktree);
//
//   - the per-task and setup costs themselves, in milliseconds.
//
//     go test ./internal/execute -run '^$' -bench TaskGit -benchtime 1x
//
// PLANEX_BENCH_TASKS sets the number of timed tasks per run (default 10).
func BenchmarkTaskGit(b *testing.B) {
	tasks := 10
	if v := os.Getenv("PLANEX_BENCH_TASKS"); v != "" {
		fmt.Sscan(v, &tasks)
	}
	sizes := []int{200, 20000}
	var planex, setup, floor [2]time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for k, size := range sizes {
			dir := generateRepo(b, size)
			p, s := planexPerTask(b, dir, tasks)
			f := floorPerTask(b, dir, tasks)
			planex[k], setup[k], floor[k] = planex[k]+p, setup[k]+s, floor[k]+f
			os.RemoveAll(dir)
			os.RemoveAll(dir + "-floor")
		}
		b.StartTimer()
	}
	n := time.Duration(b.N)
	ms := func(d time.Duration) float64 { return float64(d/n) / float64(time.Millisecond) }
	b.ReportMetric(ms(planex[0]), "planex-200-ms")
	b.ReportMetric(ms(planex[1]), "planex-20k-ms")
	b.ReportMetric(ms(setup[0]), "setup-200-ms")
	b.ReportMetric(ms(setup[1]), "setup-20k-ms")
	b.ReportMetric(ms(floor[0]), "floor-200-ms")
	b.ReportMetric(ms(floor[1]), "floor-20k-ms")
	b.ReportMetric(float64(planex[1])/float64(floor[1]), "ratio-20k")
	b.ReportMetric(float64(planex[1]-planex[0])/float64(floor[1]-floor[0]), "rise-ratio")
	run := planex[1] + setup[1]/time.Duration(tasks+1)
	b.ReportMetric(float64(run)/float64(floor[1]), "run-ratio-20k")
}

// generateRepo makes a repository with n small files in 100-file folders.
func generateRepo(b *testing.B, n int) string {
	b.Helper()
	dir, err := os.MkdirTemp("", "planex-bench-")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, "src", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.go", i))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		content := fmt.Sprintf("package d%03d\n\n// F%d is generated.\nfunc F%d() int { return %d }\n", i/100, i, i, i)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "generated"}} {
		plainGit(b, dir, nil, nil, args...)
	}
	return dir
}

func plainGit(b *testing.B, dir string, env []string, stdin []byte, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// planexPerTask runs a first task (which makes the worktree) and then
// tasks more one after another through a Runner, each committed on a
// branch, and Close. It returns the mean time of the later tasks, and the
// time of the first task and Close less one such task.
func planexPerTask(b *testing.B, dir string, tasks int) (perTask, setup time.Duration) {
	b.Helper()
	ctx := context.Background()
	repo, err := gitrepo.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	tip := plainGit(b, dir, nil, nil, "rev-parse", "HEAD")
	plainGit(b, dir, nil, nil, "branch", "bench-planex", tip)
	a := agent.Func(func(_ context.Context, s agent.Step) (agent.Result, error) {
		if err := os.WriteFile(filepath.Join(s.Dir, "src", "d000", s.ID+".go"), []byte("package d000\n"), 0o644); err != nil {
			return agent.Result{}, err
		}
		raw, _ := json.Marshal(map[string]any{"id": s.ID, "status": "completed", "findings": "ok", "tests_passed": true})
		return agent.Result{Raw: raw}, nil
	})
	r := &Runner{Repo: repo, Agent: a}
	one := func(i int) {
		t := plan.Task{ID: fmt.Sprintf("T%d", i), Title: "bench", Scope: "src/**"}
		o := r.Run(ctx, Job{Task: t, Base: tip, Prompt: "bench", Session: "bench", Timeout: time.Minute})
		if o.Status != plan.StatusCompleted {
			b.Fatalf("%s: %s %s", t.ID, o.Status, o.Error)
		}
		if tip, err = r.Commit(ctx, "bench-planex", tip, "bench", t, o); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	one(1)
	first := time.Since(start)
	start = time.Now()
	for i := 2; i <= tasks+1; i++ {
		one(i)
	}
	perTask = time.Since(start) / time.Duration(tasks)
	start = time.Now()
	r.Close(ctx)
	return perTask, first + time.Since(start) - perTask
}

// floorPerTask does the same work with the fewest plain git commands,
// from a kept worktree (created before timing starts).
func floorPerTask(b *testing.B, dir string, tasks int) time.Duration {
	b.Helper()
	tip := plainGit(b, dir, nil, nil, "rev-parse", "HEAD")
	plainGit(b, dir, nil, nil, "branch", "bench-floor", tip)
	wt := dir + "-floor"
	plainGit(b, dir, nil, nil, "worktree", "add", "-q", "--detach", wt, tip)
	defer func() {
		plainGit(b, dir, nil, nil, "worktree", "remove", "--force", wt)
	}()
	idx := filepath.Join(b.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	start := time.Now()
	for i := 1; i <= tasks; i++ {
		plainGit(b, wt, nil, nil, "checkout", "-q", "-f", "--detach", tip)
		name := fmt.Sprintf("src/d000/T%d.go", i)
		if err := os.WriteFile(filepath.Join(wt, name), []byte("package d000\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if st := plainGit(b, wt, nil, nil, "status", "--porcelain", "-uall"); !strings.Contains(st, name) {
			b.Fatalf("status does not show %s: %q", name, st)
		}
		blob := plainGit(b, wt, nil, nil, "hash-object", "-w", name)
		plainGit(b, dir, env, nil, "read-tree", tip+"^{tree}")
		plainGit(b, dir, env, nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+name)
		tree := plainGit(b, dir, env, nil, "write-tree")
		commit := plainGit(b, dir, nil, nil, "commit-tree", tree, "-p", tip, "-m", "floor")
		plainGit(b, dir, nil, nil, "update-ref", "refs/heads/bench-floor", commit, tip)
		tip = commit
	}
	return time.Since(start) / time.Duration(tasks)
}
