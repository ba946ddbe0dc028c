package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/proc/proctest"
)

func step(t *testing.T, phase agent.Phase, id string) agent.Step {
	s, cleanup, err := agent.PrepareStep(agent.Step{Phase: phase, ID: id, Prompt: "PROMPT TEXT", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return s
}

func TestContract(t *testing.T) {
	cases := []struct {
		name    string
		cmd     string
		env     []string
		allow   []string
		timeout time.Duration
		wantErr string
		check   func(t *testing.T, s agent.Step, r agent.Result)
	}{
		{
			name: "result file, env and stdin",
			cmd: `test "$PLANEX_PHASE" = execute && test "$PLANEX_ID" = T3 && test -s "$PLANEX_SCHEMA_FILE" && test -z "${PLANEX_SESSION_DIR+set}" &&
				test -f "$PLANEX_DISCOVERIES_FILE" && test "$PLANEX_DISCOVERIES_FILE" = "$WANT_DISCOVERIES" &&
				test "$(dirname "$PLANEX_RESULT_FILE")" = "$WANT_TEMP" && test "$(dirname "$PLANEX_SCHEMA_FILE")" = "$WANT_TEMP" &&
				prompt=$(cat) && test "${prompt#PROMPT TEXT}" != "$prompt" && test "$(pwd)" = "$WANT_DIR" &&
				case "$prompt" in *'to $PLANEX_RESULT_FILE'*'"worker":"T3"'*) false ;; *'"worker":"T3"'*'to $PLANEX_RESULT_FILE'*) ;; *) false ;; esac &&
				echo '{"id":"T3","status":"completed","findings":"ok","tests_passed":true,"usage":{"input_tokens":7,"output_tokens":3,"cache_read_tokens":5}}' > "$PLANEX_RESULT_FILE"`,
			check: func(t *testing.T, s agent.Step, r agent.Result) {
				if !strings.Contains(string(r.Raw), `"T3"`) || r.Usage.InputTokens != 7 || r.Usage.OutputTokens != 3 || r.Usage.CacheReadTokens != 5 {
					t.Errorf("result %s usage %+v", r.Raw, r.Usage)
				}
			},
		},
		{
			name: "last JSON object on stdout, fenced",
			cmd:  "echo 'thinking {not json}'; echo '{\"id\":\"T3\",\"status\":\"failed\",\"findings\":\"first\",\"tests_passed\":false}'; printf '```json\\n{\"id\":\"T3\",\"status\":\"completed\",\"findings\":\"a } brace\",\"tests_passed\":true}\\n```\\n'",
			check: func(t *testing.T, s agent.Step, r agent.Result) {
				if !strings.Contains(string(r.Raw), "a } brace") {
					t.Errorf("picked %s, want the last object", r.Raw)
				}
			},
		},
		{name: "non-zero exit keeps stderr tail", cmd: "echo boom >&2; exit 3", wantErr: "agent command failed (exit status 3): boom"},
		{name: "no result", cmd: "echo nothing here", wantErr: "agent wrote no result"},
		{name: "invalid result", cmd: `echo '{"id":"T3","status":"weird","findings":"","tests_passed":true}'`, wantErr: "invalid agent result (from stdout): result does not match the execute schema: at /status"},
		{name: "timeout kills the group", cmd: "sleep 30 & sleep 30", timeout: 300 * time.Millisecond, wantErr: "agent timed out after 300ms"},
		{
			name: "only the allow-listed environment passes",
			cmd: `test -z "$GITHUB_TOKEN" && test -z "$OPENAI_API_KEY" && test -z "$DATABASE_URL" && test -z "$SESSION_COOKIE" &&
				test "$EXTRA_API_KEY" = ok && test "$PATH" != "" && test "$GITHUB_REPOSITORY" = o/r &&
				echo '{"id":"T3","status":"completed","findings":"","tests_passed":true}'`,
			env: []string{"GITHUB_TOKEN=secret", "OPENAI_API_KEY=secret", "EXTRA_API_KEY=ok", "GITHUB_REPOSITORY=o/r",
				"DATABASE_URL=postgres://u:p@h/db", "SESSION_COOKIE=abcdefgh"},
			allow: []string{"EXTRA_API_KEY"},
		},
		{
			name:    "a result file replaced by a link to /dev/zero is refused, not read",
			cmd:     `rm -f "$PLANEX_RESULT_FILE" && ln -s /dev/zero "$PLANEX_RESULT_FILE"`,
			wantErr: "reading agent result file",
		},
		{
			name:    "a result file replaced by a FIFO is refused, not waited for",
			cmd:     `rm -f "$PLANEX_RESULT_FILE" && mkfifo "$PLANEX_RESULT_FILE"`,
			wantErr: "is not a regular file",
		},
		{
			name:    "a result file larger than the bound is refused",
			cmd:     `truncate -s 9M "$PLANEX_RESULT_FILE"`,
			wantErr: "more than the 8 MiB a result may",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := step(t, agent.PhaseExecute, "T3")
			s.Timeout = c.timeout
			env := append(os.Environ(), "WANT_DIR="+s.Dir, "WANT_TEMP="+s.TempDir, "WANT_DISCOVERIES="+s.DiscoveriesFile)
			env = append(env, c.env...)
			start := time.Now()
			allow := append([]string{"WANT_DIR", "WANT_TEMP", "WANT_DISCOVERIES"}, c.allow...)
			r, err := New(Config{Command: c.cmd, Env: env, Contain: agent.Containment{AllowEnv: allow}}).Run(context.Background(), s)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				if time.Since(start) > 10*time.Second {
					t.Errorf("step was not stopped promptly")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, s, r)
			}
		})
	}
}

// TestOwnFolderWhenNoneGiven: a step without a TempDir gets a private
// folder of the agent's own, outside its working directory, removed after
// the step.
func TestOwnFolderWhenNoneGiven(t *testing.T) {
	s := agent.Step{Phase: agent.PhaseExecute, ID: "T3", Prompt: "x", Dir: t.TempDir()}
	cmd := `dirname "$PLANEX_RESULT_FILE" > where && test -z "$PLANEX_DISCOVERIES_FILE" &&
		echo '{"id":"T3","status":"completed","findings":"","tests_passed":true}' > "$PLANEX_RESULT_FILE"`
	if _, err := New(Config{Command: cmd}).Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "where"))
	if err != nil {
		t.Fatal(err)
	}
	folder := strings.TrimSpace(string(b))
	if folder == "" || strings.HasPrefix(folder, s.Dir) {
		t.Fatalf("step folder %q", folder)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("step folder %s left behind (%v)", folder, err)
	}
}

func TestLastJSONObject(t *testing.T) {
	cases := map[string]string{
		`x {"a":1} y {"b":{"c":"}"}} z`: `{"b":{"c":"}"}}`,
		"no json":                       "",
		`{"a":"unterminated`:            "",
		`{"a":"esc \" }"}`:              `{"a":"esc \" }"}`,
	}
	for in, want := range cases {
		if got := string(LastJSONObject([]byte(in))); got != want {
			t.Errorf("LastJSONObject(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNoCommand(t *testing.T) {
	_, err := New(Config{}).Run(context.Background(), step(t, agent.PhaseAnalyze, ""))
	if err == nil || !strings.Contains(err.Error(), "--agent-cmd") {
		t.Fatalf("error %v", err)
	}
}

// TestTerminalCodesNeverStored: a program's colours and control
// characters are removed from the result's strings and from errors.
func TestTerminalCodesNeverStored(t *testing.T) {
	a := New(Config{Command: `printf '{"id":"T3","status":"completed","findings":"\\u001b[31mred\\u001b[0m\\u0007 done","tests_passed":true}\n'`})
	res, err := a.Run(context.Background(), step(t, agent.PhaseExecute, "T3"))
	if err != nil {
		t.Fatal(err)
	}
	var er agent.ExecuteResult
	if err := agent.Decode(agent.PhaseExecute, res.Raw, &er); err != nil || er.Findings != "red done" {
		t.Errorf("findings %q (%v)", er.Findings, err)
	}
	a = New(Config{Command: `printf '\033[1;31mfatal:\033[0m \033]0;title\007broken\r\n' >&2; exit 2`})
	_, err = a.Run(context.Background(), step(t, agent.PhaseExecute, "T3"))
	if err == nil || !strings.HasSuffix(err.Error(), "fatal: broken") {
		t.Errorf("error %q", err)
	}
}

// TestDecode: a program with its own output format (a named CLI) is read
// through Config.Decode: the result comes from its text, its usage and
// problems are reported, and a failure it reports keeps the usage.
func TestDecode(t *testing.T) {
	decode := func(stdout []byte) (Output, error) {
		s := string(stdout)
		out := Output{Usage: agent.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: 0.5}, Problems: []string{"permission denied: \x1b[1mWrite\x1b[0m(x)"}}
		if text, ok := strings.CutPrefix(s, "ANSWER "); ok {
			out.Text = []byte(text)
			return out, nil
		}
		return out, errors.New("the CLI said: " + strings.TrimSpace(s))
	}
	run := func(cmd string) (agent.Result, error) {
		return New(Config{Command: cmd, Decode: decode}).Run(context.Background(), step(t, agent.PhaseExecute, "T3"))
	}
	res, err := run(`echo 'ANSWER done {"id":"T3","status":"completed","findings":"ok","tests_passed":true}'`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.InputTokens != 10 || res.Usage.CostUSD != 0.5 || len(res.Problems) != 1 || res.Problems[0] != "permission denied: Write(x)" {
		t.Errorf("result %+v", res)
	}
	// A failure the output reports, with the program exiting non-zero.
	res, err = run(`echo 'quota exceeded'; echo 'some log' >&2; exit 1`)
	if err == nil || !strings.Contains(err.Error(), "the CLI said: quota exceeded; stderr: some log; permission denied: Write(x)") || res.Usage.InputTokens != 10 {
		t.Errorf("failed run: %v, usage %+v", err, res.Usage)
	}
	// A failure the output reports although the program exited 0.
	if res, err = run(`echo 'quota exceeded'`); err == nil || err.Error() != "the CLI said: quota exceeded; permission denied: Write(x)" || res.Usage.OutputTokens != 2 {
		t.Errorf("reported failure: %v, usage %+v", err, res.Usage)
	}
	// An answer without a result quotes the answer.
	if res, err = run(`echo 'ANSWER I will not.'`); err == nil || !strings.Contains(err.Error(), `its answer holds no JSON object: "I will not."`) || res.Usage.InputTokens != 10 {
		t.Errorf("no result: %v, usage %+v", err, res.Usage)
	}
}

// TestRedTeamOutputFloodKeepsMemoryBounded: an agent printing 1 GiB to
// stdout and 64 MiB to stderr before its result costs planex a bounded
// tail: the heap stays small, the result (at the end) is still found,
// and the step says output was dropped.
func TestRedTeamOutputFloodKeepsMemoryBounded(t *testing.T) {
	s := step(t, agent.PhaseExecute, "T3")
	cmd := `head -c 67108864 /dev/zero >&2; head -c 1073741824 /dev/zero | tr '\0' x; echo; echo '{"id":"T3","status":"completed","findings":"","tests_passed":true}'`
	var peak uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	r, err := New(Config{Command: cmd}).Run(context.Background(), s)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.Raw), `"T3"`) {
		t.Errorf("result %s", r.Raw)
	}
	if r.OutputDropped < 1000<<20 || !strings.Contains(strings.Join(r.Problems, "; "), "planex kept only the last 8 MiB") {
		t.Errorf("problems %q do not say output was dropped", r.Problems)
	}
	if peak > 128<<20 {
		t.Errorf("heap in use reached %d MiB while the agent printed 1 GiB", peak>>20)
	}
	proctest.CheckPeakRSS(t)
}
