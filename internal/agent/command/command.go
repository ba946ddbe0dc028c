// Package command runs any program as a planex agent. The contract is
// public (see docs/agent-contract.md): the program is run through `sh -c`
// in the step's directory with the prompt on stdin, and leaves its JSON
// result in $PLANEX_RESULT_FILE or as the last JSON object on stdout.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/proc"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/session"
)

// DefaultTimeout applies when neither the step nor the config sets one:
// 600 s for steps that change code, 300 s for the others.
func DefaultTimeout(p agent.Phase) time.Duration {
	if p == agent.PhaseExecute || p == agent.PhaseReview {
		return 600 * time.Second
	}
	return 300 * time.Second
}

// Config selects the program and what it may see.
type Config struct {
	// Command is a shell command line, run with sh -c.
	Command string
	// Contain says which variables the program sees and how it is
	// contained (the sandbox).
	Contain agent.Containment
	// Timeouts override DefaultTimeout per phase.
	Timeouts map[agent.Phase]time.Duration
	// Env is the environment to start from; nil means os.Environ().
	Env []string
	// ExtraEnv is added after scrubbing (e.g. a named CLI's own settings).
	ExtraEnv []string
	// Readable lists more paths the program may read inside the sandbox
	// (a named CLI's installation when it lives under a hidden home).
	Readable []string
	// Decode, when set, reads the program's own output format instead of
	// the contract's (a named CLI's JSON output). It gets stdout once the
	// program ended, whether or not it failed, and returns the text the
	// result is taken from (its last JSON object), the usage and problems
	// the output reports, and an error when the output says the step
	// failed. The result file, when the program wrote one, still wins.
	Decode func(stdout []byte) (Output, error)
}

// Output is what Config.Decode read from a program's output.
type Output struct {
	// Text holds the result as the last JSON object in it.
	Text     []byte
	Usage    agent.Usage
	Problems []string
	// MCPCalls names the MCP tools the program reports it called.
	MCPCalls []string
}

// Agent runs Config.Command for each step.
type Agent struct{ cfg Config }

// New returns a command agent.
func New(cfg Config) *Agent { return &Agent{cfg: cfg} }

// tailBytes is how much of stderr is quoted in error messages.
const tailBytes = 2000

// Bounds on what planex keeps of a program's output, whatever it prints:
// the end of stdout (where the result and a CLI's report are) and of
// stderr, and the largest result file read.
const (
	maxStdout     = 8 << 20
	maxStderr     = 64 << 10
	maxResultFile = 8 << 20
)

// Run executes one step.
func (a *Agent) Run(ctx context.Context, step agent.Step) (agent.Result, error) {
	if strings.TrimSpace(a.cfg.Command) == "" {
		return agent.Result{}, errors.New("no agent command configured (set --agent-cmd or PLANEX_AGENT_CMD)")
	}
	timeout := StepTimeout(step, a.cfg.Timeouts)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}

	files, err := prepareFiles(step)
	if err != nil {
		return agent.Result{}, err
	}
	defer files.cleanup()

	cmd := exec.Command("sh", "-c", a.cfg.Command)
	cmd.Dir = step.Dir
	cmd.Stdin = strings.NewReader(step.Prompt + a.contract(step))
	stdout, stderr := proc.NewTail(maxStdout), proc.NewTail(maxStderr)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// The program may write its step folder and, when the step changes
	// code, its directory (the task's worktree); it reads the rest.
	writable := []string{files.dir}
	if step.Phase == agent.PhaseExecute || step.Phase == agent.PhaseReview {
		writable = append(writable, step.Dir)
	}
	readable := append([]string{step.Dir}, a.cfg.Readable...)
	cleanup, err := a.cfg.Contain.PrepareContext(ctx, cmd, a.cfg.Env, writable, readable)
	if err != nil {
		return agent.Result{}, err
	}
	defer cleanup()
	cmd.Env = append(append(cmd.Env, a.cfg.ExtraEnv...),
		"PLANEX_PHASE="+string(step.Phase),
		"PLANEX_ID="+step.ID,
		"PLANEX_DISCOVERIES_FILE="+step.DiscoveriesFile,
		"PLANEX_RESULT_FILE="+files.result,
		"PLANEX_SCHEMA_FILE="+files.schema,
		"PLANEX_SCOPE="+step.Scope,
	)
	runErr := proc.Run(ctx, cmd)
	var out Output
	var decodeErr error
	if a.cfg.Decode != nil {
		out, decodeErr = a.cfg.Decode(stdout.Bytes())
		out.Problems = cleanAll(out.Problems)
	}
	if n := stdout.Dropped(); n > 0 {
		out.Problems = append(out.Problems, fmt.Sprintf("the agent printed %d bytes to stdout; planex kept only the last %d MiB", n+maxStdout, maxStdout>>20))
	}
	// Whatever happens next, the tokens the program reported were spent.
	failed := agent.Result{Usage: out.Usage, MCPCalls: out.MCPCalls, OutputDropped: stdout.Dropped()}
	if err := runFailure(runErr, decodeErr, stderr, timeout, out.Problems); err != nil {
		return failed, err
	}
	raw, from, err := a.result(files.result, out, stdout, stderr)
	if err != nil {
		return failed, err
	}
	raw = agent.CleanJSON(raw)
	if err := agent.Validate(step.Phase, raw); err != nil {
		return failed, fmt.Errorf("invalid agent result (from %s): %w", from, err)
	}
	usage := usageFrom(raw)
	if a.cfg.Decode != nil {
		usage = out.Usage
	}
	return agent.Result{Raw: raw, Usage: usage, Problems: out.Problems, MCPCalls: out.MCPCalls, OutputDropped: stdout.Dropped()}, nil
}

// StepTimeout is the step's own time limit, else the one configured for
// its phase, else DefaultTimeout.
func StepTimeout(step agent.Step, timeouts map[agent.Phase]time.Duration) time.Duration {
	timeout := step.Timeout
	if timeout == 0 {
		timeout = timeouts[step.Phase]
	}
	if timeout == 0 {
		timeout = DefaultTimeout(step.Phase)
	}
	return timeout
}

// runFailure is the error a finished program stands for: its exit (or
// time-out) with what stderr and the decoder said, or what the decoder
// found wrong in its output; nil when neither failed.
func runFailure(runErr, decodeErr error, stderr *proc.Tail, timeout time.Duration, problems []string) error {
	if runErr != nil {
		detail := stderrTail(stderr)
		if decodeErr != nil {
			if detail != "" {
				detail = "; stderr" + detail
			}
			detail = ": " + agent.CleanText(decodeErr.Error()) + detail
		}
		switch {
		case errors.Is(runErr, context.DeadlineExceeded):
			return fmt.Errorf("agent timed out after %s%s", timeout, detail)
		case errors.Is(runErr, context.Canceled):
			return fmt.Errorf("agent interrupted: %w", runErr)
		}
		return fmt.Errorf("agent command failed (%v)%s", runErr, withProblems(detail, problems))
	}
	if decodeErr != nil {
		msg := agent.CleanText(decodeErr.Error())
		if len(problems) > 0 {
			msg += "; " + strings.Join(problems, "; ")
		}
		return errors.New(msg)
	}
	return nil
}

// result finds the program's JSON result: the result file when it wrote
// one, else the last JSON object of its answer (decoded output) or of its
// stdout. from says which, for messages.
func (a *Agent) result(resultFile string, out Output, stdout, stderr *proc.Tail) (raw []byte, from string, err error) {
	raw, err = readResultFile(resultFile)
	if err != nil {
		return nil, "", fmt.Errorf("reading agent result file: %w", err)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 {
		return raw, "result file", nil
	}
	if a.cfg.Decode != nil {
		if raw = LastJSONObject(out.Text); raw == nil {
			return nil, "", fmt.Errorf("agent wrote no result: its answer holds no JSON object%s",
				withProblems(textTail(out.Text), out.Problems))
		}
		return raw, "stdout", nil
	}
	if raw = LastJSONObject(stdout.Bytes()); raw == nil {
		return nil, "", fmt.Errorf("agent wrote no result: %s is empty and stdout holds no JSON object%s", "PLANEX_RESULT_FILE", stderrTail(stderr))
	}
	return raw, "stdout", nil
}

// contract tells the program how it hands its work in: through the files
// the contract's variables name. It belongs to this agent, not to the
// engine's prompts, which the built-in agent gets too (it hands in
// through its tools). A named CLI (Decode set) answers in its final
// message, which its own instructions ask for, and gets only the notes.
func (a *Agent) contract(step agent.Step) string {
	var b strings.Builder
	if step.DiscoveriesFile != "" {
		worker := step.ID
		if worker == "" {
			worker = string(step.Phase)
		}
		fmt.Fprintf(&b, "- Shared notes: you may append one-line JSON notes for other agents to the file named by $PLANEX_DISCOVERIES_FILE, each shaped "+
			`{"ts":"<RFC 3339 time>","worker":%q,"type":"<%s>","data":{...}}. planex checks them after the step and shares the valid ones.`+"\n",
			worker, strings.Join(session.DiscoveryTypes(), "|"))
	}
	if a.cfg.Decode == nil {
		b.WriteString("- Finish by writing one JSON object that matches the schema in $PLANEX_SCHEMA_FILE to $PLANEX_RESULT_FILE (or print it as the last JSON object on stdout).\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n\n## Handing in your work\n\n" + b.String()
}

// withProblems adds the problems a program reported to an error detail.
func withProblems(detail string, problems []string) string {
	if len(problems) == 0 {
		return detail
	}
	if detail == "" {
		return ": " + strings.Join(problems, "; ")
	}
	return detail + "; " + strings.Join(problems, "; ")
}

func cleanAll(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(agent.CleanText(s)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// textTail quotes the end of a program's answer for an error message.
func textTail(b []byte) string {
	s := strings.TrimSpace(agent.CleanText(string(b)))
	if s == "" {
		return " (its answer was empty)"
	}
	if r := []rune(s); len(r) > 500 {
		s = "…" + string(r[len(r)-500:])
	}
	return ": " + strconv.Quote(s)
}

type stepFiles struct {
	dir, result, schema string
	cleanup             func()
}

// prepareFiles puts the schema and an empty result file in the step's
// private folder (one of its own when the caller gave none).
func prepareFiles(step agent.Step) (stepFiles, error) {
	schema, err := agent.Schema(step.Phase)
	if err != nil {
		return stepFiles{}, err
	}
	dir, cleanup := step.TempDir, func() {}
	if dir == "" {
		var prepared agent.Step
		if prepared, cleanup, err = agent.PrepareStep(step); err != nil {
			return stepFiles{}, err
		}
		dir = prepared.TempDir
	}
	f := stepFiles{dir: dir, result: filepath.Join(dir, agent.StepResultFile), schema: filepath.Join(dir, agent.StepSchemaFile), cleanup: cleanup}
	if err := os.WriteFile(f.schema, schema, 0o644); err != nil {
		cleanup()
		return f, fmt.Errorf("writing result schema: %w", err)
	}
	if err := os.WriteFile(f.result, nil, 0o644); err != nil {
		cleanup()
		return f, fmt.Errorf("creating result file: %w", err)
	}
	return f, nil
}

// readResultFile reads the result file the program may have replaced:
// only a regular file (never through a link, never a FIFO or device),
// at most maxResultFile bytes. A missing file is an empty result.
func readResultFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|safefile.NoFollow|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(name))
	}
	if st.Size() > maxResultFile {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d MiB a result may", filepath.Base(name), st.Size(), maxResultFile>>20)
	}
	return io.ReadAll(io.LimitReader(f, maxResultFile))
}

func stderrTail(b *proc.Tail) string {
	s := strings.TrimSpace(agent.CleanText(b.String()))
	if s == "" {
		return ""
	}
	if len(s) > tailBytes {
		s = "…" + s[len(s)-tailBytes:]
	}
	return ": " + s
}
