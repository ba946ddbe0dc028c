package clis

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// standIn writes a fake CLI that fails unless every expected argument is
// present (in order), checks it can see its credential but not other
// secrets, checks the prompt asks for the JSON result, then prints some
// chatter followed by the result, as the real CLIs do in text mode.
func standIn(t *testing.T, bin, name string, wantArgs []string, credential, result string) {
	t.Helper()
	script := `#!/bin/sh
args="$*"
want='` + strings.Join(wantArgs, " ") + `'
if [ "$args" != "$want" ]; then echo "unexpected args: [$args] want [$want]" >&2; exit 2; fi
if [ -z "$` + credential + `" ]; then echo "credential ` + credential + ` missing" >&2; exit 3; fi
if [ -n "$GITHUB_TOKEN" ]; then echo "GITHUB_TOKEN leaked" >&2; exit 4; fi
prompt=$(cat)
case "$prompt" in *"do the thing"*"matches this JSON Schema"*) ;; *) echo "prompt lacks task or schema: $prompt" >&2; exit 5;; esac
[ "$PLANEX_PHASE" = "$EXPECT_PHASE" ] || { echo "phase $PLANEX_PHASE" >&2; exit 6; }
echo "Working on it..."
echo "Here is the result:"
echo '` + "```json" + `'
echo '` + result + `'
echo '` + "```" + `'
`
	if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestNamedCLIs(t *testing.T) {
	const execResult = `{"id":"T2","status":"completed","findings":"done","tests_passed":true}`
	const exploreResult = `{"id":"E1","status":"completed","findings":"found"}`
	cases := []struct {
		name, credential string
		phase            agent.Phase
		id, model        string
		maxTurns         int
		wantArgs         []string
		result           string
	}{
		{"claude", "ANTHROPIC_API_KEY", agent.PhaseExecute, "T2", "sonnet", 30,
			[]string{"-p", "--output-format", "text", "--permission-mode", "acceptEdits", "--allowedTools", "Read,Grep,Glob,LS,Edit,MultiEdit,Write,Bash", "--model", "sonnet", "--max-turns", "30"}, execResult},
		{"claude", "ANTHROPIC_API_KEY", agent.PhaseExplore, "E1", "", 0,
			[]string{"-p", "--output-format", "text", "--permission-mode", "default", "--allowedTools", "Read,Grep,Glob,LS", "--disallowedTools", "Edit,MultiEdit,Write,NotebookEdit,Bash"}, exploreResult},
		{"codex", "OPENAI_API_KEY", agent.PhaseExecute, "T2", "gpt-5-codex", 0,
			[]string{"exec", "--sandbox", "workspace-write", "--skip-git-repo-check", "--color", "never", "-c", `shell_environment_policy.inherit="core"`, "--model", "gpt-5-codex", "-"}, execResult},
		{"codex", "OPENAI_API_KEY", agent.PhaseExplore, "E1", "", 0,
			[]string{"exec", "--sandbox", "read-only", "--skip-git-repo-check", "--color", "never", "-c", `shell_environment_policy.inherit="core"`, "-"}, exploreResult},
		{"gemini", "GEMINI_API_KEY", agent.PhaseExecute, "T2", "gemini-2.5-pro", 0,
			[]string{"--prompt", "Carry out the instructions given on standard input.", "--output-format", "text", "--approval-mode", "yolo", "--model", "gemini-2.5-pro"}, execResult},
		{"gemini", "GEMINI_API_KEY", agent.PhaseExplore, "E1", "", 0,
			[]string{"--prompt", "Carry out the instructions given on standard input.", "--output-format", "text", "--approval-mode", "default"}, exploreResult},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+string(tc.phase), func(t *testing.T) {
			bin := t.TempDir()
			standIn(t, bin, tc.name, tc.wantArgs, tc.credential, tc.result)
			env := []string{"PATH=" + bin + ":/usr/bin:/bin", tc.credential + "=key", "GITHUB_TOKEN=ghp_x", "EXPECT_PHASE=" + string(tc.phase)}
			a, err := New(Config{Name: tc.name, Model: tc.model, MaxTurns: tc.maxTurns, Env: env,
				LookPath: func(string) (string, error) { return filepath.Join(bin, tc.name), nil }})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), agent.Step{Phase: tc.phase, ID: tc.id, Prompt: "do the thing",
				Dir: t.TempDir(), Scope: "src/**", Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Raw) != tc.result {
				t.Errorf("result %s, want %s", res.Raw, tc.result)
			}
		})
	}
}

func TestStandInOnPATH(t *testing.T) {
	bin := t.TempDir()
	standIn(t, bin, "codex", []string{"exec", "--sandbox", "read-only", "--skip-git-repo-check", "--color", "never", "-c", `shell_environment_policy.inherit="core"`, "-"},
		"OPENAI_API_KEY", `{"type":"bugfix","complexity":"Low","angles":[{"id":"E1","angle":"a","description":"d","focus":"f"}]}`)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("EXPECT_PHASE", "analyze")
	a, err := New(Config{Name: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), agent.Step{Phase: agent.PhaseAnalyze, Prompt: "do the thing", Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for name, hint := range map[string]string{
		"claude": "npm install -g @anthropic-ai/claude-code",
		"codex":  "npm install -g @openai/codex",
		"gemini": "npm install -g @google/gemini-cli",
	} {
		_, err := New(Config{Name: name})
		if err == nil || !strings.Contains(err.Error(), hint) || !strings.Contains(err.Error(), "--agent anthropic") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New(Config{Name: "cursor"}); err == nil || !strings.Contains(err.Error(), "claude, codex, gemini") {
		t.Errorf("unknown: %v", err)
	}
}

func TestFailingCLIReportsStderr(t *testing.T) {
	bin := t.TempDir()
	standIn(t, bin, "claude", []string{"--wrong"}, "ANTHROPIC_API_KEY", "{}")
	a, err := New(Config{Name: "claude", Env: []string{"PATH=/usr/bin:/bin", "ANTHROPIC_API_KEY=k"},
		LookPath: func(string) (string, error) { return filepath.Join(bin, "claude"), nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "do the thing", Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "unexpected args") || !strings.HasPrefix(err.Error(), "claude agent:") {
		t.Fatalf("err %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "Read,Grep": "Read,Grep"} {
		if got := shellQuote(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
