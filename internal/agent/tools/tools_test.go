package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// gitRepo makes a real repository with a few files, a .gitignore and a
// secret file next to it (outside the repo) that tools must never reach.
func gitRepo(t *testing.T) (repo, outside string) {
	t.Helper()
	base := t.TempDir()
	repo = filepath.Join(base, "repo")
	outside = filepath.Join(base, "secret.txt")
	files := map[string]string{
		"README.md":         "# demo\n",
		"src/main.go":       "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"src/util.go":       "package main\n\n// dup\n// dup\n",
		"docs/guide.md":     "guide\n",
		".gitignore":        "build/\n*.log\n",
		"build/out.txt":     "generated hi\n",
		"src/debug.log":     "hi from log\n",
		"vendor/.gitignore": "skip.go\n",
		"vendor/skip.go":    "package hi\n",
		"vendor/keep.go":    "package hi\n",
	}
	for name, body := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, []byte("top secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.Symlink(outside, filepath.Join(repo, "src", "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base), filepath.Join(repo, "updir")); err != nil {
		t.Fatal(err)
	}
	return repo, outside
}

func newSet(t *testing.T, phase agent.Phase, repo, scope string) *Set {
	t.Helper()
	s, err := New(Config{Phase: phase, Worker: "T1", Dir: repo, DiscoveriesFile: filepath.Join(t.TempDir(), "discoveries.ndjson"), Scope: scope,
		Env: []string{"PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-secret", "HOME=/tmp", "KEEP=1", "LANG=C.keep"},
		Now: func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func call(t *testing.T, s *Set, name string, args any) Output {
	t.Helper()
	b, _ := json.Marshal(args)
	out, err := s.Call(context.Background(), name, b)
	if err != nil {
		t.Fatalf("%s: unexpected fatal error %v", name, err)
	}
	return out
}

func TestConfinement(t *testing.T) {
	repo, outside := gitRepo(t)
	s := newSet(t, agent.PhaseExecute, repo, "src/**;docs")
	gitConfig, _ := os.ReadFile(filepath.Join(repo, ".git", "config"))

	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"read parent escape", ReadFile, map[string]any{"path": "../../etc/passwd"}, "leaves the repository"},
		{"read absolute", ReadFile, map[string]any{"path": "/etc/passwd"}, "absolute"},
		{"read git config", ReadFile, map[string]any{"path": ".git/config"}, ".git/"},
		{"read through symlink out", ReadFile, map[string]any{"path": "src/escape.txt"}, "outside the repository"},
		{"read through dir symlink", ReadFile, map[string]any{"path": "updir/secret.txt"}, "outside the repository"},
		{"list git", ListFiles, map[string]any{"path": ".git"}, ".git/"},
		{"search outside", Search, map[string]any{"pattern": "secret", "path": ".."}, "leaves the repository"},
		{"write parent escape", WriteFile, map[string]any{"path": "../../etc/passwd", "content": "x"}, "leaves the repository"},
		{"write git config", WriteFile, map[string]any{"path": ".git/config", "content": "x"}, ".git/"},
		{"write nested git", WriteFile, map[string]any{"path": "src/.git/hooks/pre-commit", "content": "x"}, ".git/"},
		{"write outside scope", WriteFile, map[string]any{"path": "README.md", "content": "x"}, "outside this task's scope"},
		{"write via symlink out", WriteFile, map[string]any{"path": "src/escape.txt", "content": "x"}, "outside the repository"},
		{"edit outside scope", EditFile, map[string]any{"path": "README.md", "old_text": "demo", "new_text": "x"}, "outside this task's scope"},
		{"edit git config", EditFile, map[string]any{"path": ".git/config", "old_text": "core", "new_text": "x"}, ".git/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := call(t, s, tc.tool, tc.args)
			if !out.IsError || !strings.Contains(out.Text, tc.want) {
				t.Fatalf("got %+v, want an error containing %q", out, tc.want)
			}
		})
	}
	// Nothing changed on disk.
	if b, _ := os.ReadFile(outside); string(b) != "top secret\n" {
		t.Errorf("outside file changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "README.md")); string(b) != "# demo\n" {
		t.Errorf("README changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(b) != string(gitConfig) {
		t.Errorf(".git/config changed")
	}
	if _, err := os.Stat(filepath.Join(repo, "src", ".git")); !os.IsNotExist(err) {
		t.Errorf("src/.git was created")
	}
}

func TestReadOnlyPhaseOffersNoWriters(t *testing.T) {
	repo, _ := gitRepo(t)
	for _, p := range []agent.Phase{agent.PhaseAnalyze, agent.PhaseExplore, agent.PhasePlan, agent.PhaseReview} {
		s := newSet(t, p, repo, "**")
		var names []string
		for _, d := range s.Defs() {
			names = append(names, d.Name)
			if !json.Valid(d.InputSchema) {
				t.Errorf("%s: schema of %s is not JSON", p, d.Name)
			}
		}
		got := strings.Join(names, ",")
		if got != "list_files,read_file,search,append_discovery,report_result" {
			t.Errorf("%s offers %s", p, got)
		}
		out := call(t, s, WriteFile, map[string]any{"path": "src/x.go", "content": "x"})
		if !out.IsError || !strings.Contains(out.Text, "not available") {
			t.Errorf("%s: write_file got %+v", p, out)
		}
		out = call(t, s, RunCommand, map[string]any{"command": "touch hacked"})
		if !out.IsError {
			t.Errorf("%s: run_command got %+v", p, out)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "hacked")); err == nil {
		t.Error("run_command ran in a read-only phase")
	}
	s := newSet(t, agent.PhaseExecute, repo, "src")
	if len(s.Defs()) != 8 {
		t.Errorf("execute offers %d tools, want 8", len(s.Defs()))
	}
}

func TestListAndSearchRespectGitignore(t *testing.T) {
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExplore, repo, "")
	out := call(t, s, ListFiles, map[string]any{})
	want := ".gitignore\nREADME.md\ndocs/guide.md\nsrc/main.go\nsrc/util.go\nvendor/.gitignore\nvendor/keep.go"
	if out.IsError || out.Text != want {
		t.Errorf("list_files:\n%s\nwant:\n%s", out.Text, want)
	}
	out = call(t, s, ListFiles, map[string]any{"glob": "**/*.go"})
	if out.Text != "src/main.go\nsrc/util.go\nvendor/keep.go" {
		t.Errorf("list_files glob: %q", out.Text)
	}
	out = call(t, s, Search, map[string]any{"pattern": `\bhi\b`})
	if out.IsError || out.Text != "src/main.go:4: \tprintln(\"hi\")\nvendor/keep.go:1: package hi" {
		t.Errorf("search: %q", out.Text)
	}
	out = call(t, s, Search, map[string]any{"pattern": "DUP", "ignore_case": true, "path": "src"})
	if out.Text != "src/util.go:3: // dup\nsrc/util.go:4: // dup" {
		t.Errorf("search ignore_case: %q", out.Text)
	}
	out = call(t, s, Search, map[string]any{"pattern": "("})
	if !out.IsError || !strings.Contains(out.Text, "RE2") {
		t.Errorf("bad regexp: %+v", out)
	}
}

func TestReadFileRanges(t *testing.T) {
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExplore, repo, "")
	out := call(t, s, ReadFile, map[string]any{"path": "src/main.go", "start_line": 3, "end_line": 4})
	if out.Text != "3\tfunc main() {\n4\t\tprintln(\"hi\")\n" {
		t.Errorf("range: %q", out.Text)
	}
	s.cfg.MaxReadLines = 2
	out = call(t, s, ReadFile, map[string]any{"path": "src/main.go"})
	if !strings.Contains(out.Text, "[shown lines 1-2 of 5; call read_file with start_line=3 for more]") {
		t.Errorf("cap: %q", out.Text)
	}
	out = call(t, s, ReadFile, map[string]any{"path": "nope.go"})
	if !out.IsError || !strings.Contains(out.Text, "no such file") || strings.Contains(out.Text, repo) {
		t.Errorf("missing: %+v", out)
	}
}

func TestWriteAndEdit(t *testing.T) {
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExecute, repo, "src/**")
	out := call(t, s, WriteFile, map[string]any{"path": "src/new/a.go", "content": "package a\n"})
	if out.IsError {
		t.Fatal(out.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "src/new/a.go")); string(b) != "package a\n" {
		t.Errorf("written %q", b)
	}
	cases := []struct {
		old, new, want string
		isErr          bool
	}{
		{"// dup\n", "x", "occurs 2 times", true},
		{"missing", "x", "was not found", true},
		{"", "x", "old_text is empty", true},
		{"package main\n", "package util\n", "edited src/util.go", false},
	}
	for _, c := range cases {
		out := call(t, s, EditFile, map[string]any{"path": "src/util.go", "old_text": c.old, "new_text": c.new})
		if out.IsError != c.isErr || !strings.Contains(out.Text, c.want) {
			t.Errorf("edit %q: got %+v", c.old, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "src/util.go")); string(b) != "package util\n\n// dup\n// dup\n" {
		t.Errorf("after edit: %q", b)
	}
}

func TestRunCommand(t *testing.T) {
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExecute, repo, "src")
	// Only the allow-listed environment reaches the command.
	out := call(t, s, RunCommand, map[string]any{"command": "echo key=$OPENAI_API_KEY keep=$KEEP lang=$LANG; pwd"})
	if out.IsError || !strings.Contains(out.Text, "key= keep= lang=C.keep") || !strings.Contains(out.Text, "exit code 0") {
		t.Errorf("env: %q", out.Text)
	}
	out = call(t, s, RunCommand, map[string]any{"command": "echo oops >&2; exit 3"})
	if !out.IsError || !strings.HasPrefix(out.Text, "exit code 3\noops") {
		t.Errorf("exit: %+v", out)
	}
	out = call(t, s, RunCommand, map[string]any{"command": "sleep 5", "timeout_seconds": 1})
	if !out.IsError || !strings.Contains(out.Text, "timed out after 1s") {
		t.Errorf("timeout: %+v", out)
	}
	s.cfg.MaxOutputBytes = 100
	out = call(t, s, RunCommand, map[string]any{"command": "seq 1 1000"})
	if !strings.Contains(out.Text, "bytes of output left out") || !strings.HasSuffix(out.Text, "1000\n") {
		t.Errorf("cap: %q", out.Text)
	}
}

func TestAppendDiscovery(t *testing.T) {
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExplore, repo, "")
	out := call(t, s, AppendDiscover, map[string]any{"type": "test_command", "data": map[string]any{"command": "go test ./..."}})
	if out.IsError {
		t.Fatal(out.Text)
	}
	for _, bad := range []map[string]any{
		{"type": "gossip", "data": map[string]any{"a": 1}},
		{"type": "convention", "data": "text"},
		{"type": "convention", "data": map[string]any{}},
	} {
		if out := call(t, s, AppendDiscover, bad); !out.IsError {
			t.Errorf("%v accepted", bad)
		}
	}
	b, err := os.ReadFile(s.cfg.DiscoveriesFile)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ts":"2025-01-02T03:04:05Z","worker":"T1","type":"test_command","data":{"command":"go test ./..."}}` + "\n"
	if string(b) != want {
		t.Errorf("board:\n%s\nwant\n%s", b, want)
	}
}

func TestReportResult(t *testing.T) {
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExecute, repo, "src")
	out := call(t, s, ReportResult, map[string]any{"id": "T1", "status": "done"})
	if !out.IsError || !strings.Contains(out.Text, "second invalid result fails") {
		t.Fatalf("first invalid: %+v", out)
	}
	good := map[string]any{"id": "T1", "status": "completed", "findings": "ok", "tests_passed": true}
	if out := call(t, s, ReportResult, map[string]any{"result": good}); out.IsError {
		t.Fatalf("wrapped valid result refused: %s", out.Text)
	}
	raw, ok := s.Result()
	if !ok || !strings.Contains(string(raw), `"completed"`) {
		t.Fatalf("result %s %v", raw, ok)
	}

	s2 := newSet(t, agent.PhaseExecute, repo, "src")
	call(t, s2, ReportResult, map[string]any{})
	_, err := s2.Call(context.Background(), ReportResult, json.RawMessage(`{"id":"X"}`))
	if !errors.Is(err, ErrResultRejected) {
		t.Fatalf("second invalid: %v", err)
	}
}

// TestReadOnlyPhaseReadsNoIgnored: the tools run in planex, outside the
// sandbox, so in a read-only phase (the user's checkout) read_file
// refuses what the sandbox hides from contained processes: a path its
// .gitignore files ignore (also below an ignored folder, through a link
// and by a roundabout name), and one the containment's listing holds (the
// Action's untracked files, the user's own excludes), unless granted. An
// execute step, in a worktree of committed content, reads its own
// ignored build output.
func TestReadOnlyPhaseReadsNoIgnored(t *testing.T) {
	t.Parallel()
	repo, _ := gitRepo(t)
	for rel, body := range map[string]string{"gha-creds.json": "cloud-key\n", "granted/g.txt": "granted\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../build/out.txt", filepath.Join(repo, "docs", "out-link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../build", filepath.Join(repo, "docs", "build-link")); err != nil {
		t.Fatal(err)
	}
	relists := 0
	ignored := agent.Ignored{Root: repo, Keep: []string{filepath.Join(repo, "granted")}, Relist: func(context.Context) ([]string, error) {
		relists++
		return []string{filepath.Join(repo, "gha-creds.json"), filepath.Join(repo, "granted")}, nil
	}}
	s, err := New(Config{Phase: agent.PhasePlan, Dir: repo, Contain: agent.Containment{Ignored: ignored}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for path, refused := range map[string]bool{
		"build/out.txt": true, "src/debug.log": true, "vendor/skip.go": true, "docs/out-link.txt": true,
		"docs/../build/out.txt": true, "gha-creds.json": true,
		// Spellings of the same ignored file, and a link to its folder.
		"./build/out.txt": true, "build/out.txt/": true, "build//out.txt": true, " build/out.txt ": true,
		"src/.././build/./out.txt": true, "docs/build-link/out.txt": true, "./gha-creds.json": true,
		"README.md": false, "vendor/keep.go": false, "granted/g.txt": false,
	} {
		out := call(t, s, ReadFile, map[string]any{"path": path})
		if out.IsError != refused || (refused && !strings.Contains(out.Text, "git-ignored")) {
			t.Errorf("read_file %s in the plan step: %+v, want refused %v", path, out, refused)
		}
	}
	// The absolute name of an ignored file is no way round either.
	if out := call(t, s, ReadFile, map[string]any{"path": filepath.Join(repo, "build", "out.txt")}); !out.IsError || strings.Contains(out.Text, "generated hi") {
		t.Errorf("read_file of an ignored file by its absolute name: %+v", out)
	}
	// Nor do list_files and search_files show what the listing hides.
	if out := call(t, s, ListFiles, map[string]any{}); strings.Contains(out.Text, "gha-creds.json") || !strings.Contains(out.Text, "granted/g.txt") {
		t.Errorf("list_files shows the listed gha-creds.json, or not the granted granted/g.txt:\n%s", out.Text)
	}
	if out := call(t, s, Search, map[string]any{"pattern": "cloud-key"}); strings.Contains(out.Text, "cloud-key") {
		t.Errorf("search_files reads the listed gha-creds.json: %s", out.Text)
	}
	if relists != 1 {
		t.Errorf("the checkout was listed %d times for one step, want once", relists)
	}
	exec := newSet(t, agent.PhaseExecute, repo, "src/**")
	if out := call(t, exec, ReadFile, map[string]any{"path": "build/out.txt"}); out.IsError {
		t.Errorf("an execute step could not read its own ignored output: %+v", out)
	}
}
