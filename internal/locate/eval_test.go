package locate

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// The SWE-bench evaluation needs the upstream repositories, which are not
// part of this tree: run it with
//
//	go test ./internal/locate -run TestEvalSWEBenchLite -v -args -locate.repos DIR
//
// where DIR holds <owner>__<name> git directories or clones.
var reposFlag = flag.String("locate.repos", "", "directory of <owner>__<name> repositories for TestEvalSWEBenchLite")

func TestEvalSWEBenchLite(t *testing.T) {
	if *reposFlag == "" {
		t.Skip("set -locate.repos to run the SWE-bench Lite localisation evaluation")
	}
	ins, err := LoadInstances("testdata/swe-bench-lite-dev.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(context.Background(), ins, *reposFlag, 10, EvalOptions{Out: os.Stdout})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Outcomes {
		t.Logf("%-40s %-14s rank=%d top=%v", o.InstanceID, o.System, o.Rank, o.Top[:min(3, len(o.Top))])
	}
	if rep.Metrics[0].N == 0 {
		t.Fatal("nothing evaluated")
	}
}

// TestExtractCommit: a commit's regular files come out with their
// content, a symbolic link does not, and the checkout is left alone.
func TestExtractCommit(t *testing.T) {
	repo := t.TempDir()
	repomaptest.InitRepo(t, repo, map[string]string{"pkg/mod.py": "def f():\n    return 1\n", "README.md": "# demo\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, "leak")); err != nil {
		t.Fatal(err)
	}
	repomaptest.Git(t, repo, "add", "leak")
	repomaptest.Git(t, repo, "commit", "-qm", "link")
	head := strings.TrimSpace(repomaptest.Git(t, repo, "rev-parse", "HEAD"))
	dest := t.TempDir()
	if err := extractCommit(context.Background(), filepath.Join(repo, ".git"), head, dest); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"pkg/mod.py": "def f():\n    return 1\n", "README.md": "# demo\n"} {
		got, err := os.ReadFile(filepath.Join(dest, p))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dest, "leak")); !os.IsNotExist(err) {
		t.Errorf("the symbolic link was extracted: %v", err)
	}
	if err := extractCommit(context.Background(), filepath.Join(repo, ".git"), "0000000000000000000000000000000000000000", dest); err == nil {
		t.Error("a missing commit extracted without an error")
	}
}

// TestWriteOutcomes: every outcome comes out as one JSON line with its
// instance, system, rank and top files, in order, so two runs can be
// compared instance by instance.
func TestWriteOutcomes(t *testing.T) {
	t.Parallel()
	rep := &EvalReport{Outcomes: []Outcome{
		{InstanceID: "a-1", Repo: "o/a", System: SystemLocate, Rank: 2, Top: []string{"x.py", "a.py"}},
		{InstanceID: "a-1", Repo: "o/a", System: SystemLOO, Rank: 0},
	}}
	var b strings.Builder
	if err := rep.WriteOutcomes(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), b.String())
	}
	for i, want := range []string{
		`{"instance_id":"a-1","repo":"o/a","system":"planex locate","rank":2,"top":["x.py","a.py"]}`,
		`{"instance_id":"a-1","repo":"o/a","system":"planex locate, leave-one-repo-out","rank":0,"top":[]}`,
	} {
		if lines[i] != want {
			t.Errorf("line %d = %s\nwant      %s", i+1, lines[i], want)
		}
	}
}
