// Package clis drives the coding-agent CLIs people already use (Claude
// Code, Codex, Gemini CLI) as planex agents. Each is run through the
// command agent's contract (sh -c in the step directory, prompt on stdin,
// secrets scrubbed, result as the last JSON object on stdout); this
// package only knows each CLI's non-interactive flags.
//
// Flags were checked against the vendors' documentation:
//   - Claude Code: -p/--print runs one prompt without the UI and reads it
//     from stdin when no argument is given; --output-format text prints
//     only the final answer; --permission-mode, --allowedTools and
//     --disallowedTools decide which tools run without asking (in print
//     mode anything that would need a prompt is denied); --max-turns and
//     --model are optional.
//   - Codex: `codex exec` is the non-interactive mode; progress goes to
//     stderr and only the final agent message to stdout; a prompt of "-"
//     is read from stdin; --sandbox read-only|workspace-write bounds what
//     it may change; --skip-git-repo-check lets it run in a worktree it
//     does not recognise as trusted.
//   - Gemini CLI: -p/--prompt runs headless and appends piped stdin to
//     the prompt; --output-format text prints the answer only;
//     --approval-mode default|auto_edit|yolo decides which tools run
//     unattended (in headless default mode, tools that need approval
//     are not available).
//
// The JSON wrappers the CLIs can print (--output-format json) put the
// model's answer inside a string field, which the command contract's
// "last JSON object on stdout" would not unwrap, so plain text output is
// used and the prompt asks the model to end with the bare JSON result.
// Token usage is therefore not reported by these agents.
package clis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/command"
)

// Names lists the supported CLIs.
func Names() []string { return []string{"claude", "codex", "gemini"} }

// Config selects a CLI and how it runs.
type Config struct {
	// Name is claude, codex or gemini.
	Name  string
	Model string
	// MaxTurns is passed to CLIs that support a turn limit (claude).
	MaxTurns int
	// Contain holds the CLI's processes; the credential variables the CLI
	// itself needs are let through in addition to Contain.AllowEnv.
	Contain  agent.Containment
	Timeouts map[agent.Phase]time.Duration
	// Env is the environment to start from; nil means os.Environ().
	Env []string
	// LookPath finds the binary; nil means exec.LookPath.
	LookPath func(string) (string, error)
}

type cli struct {
	binary  string
	install string
	// credentials are the variables the CLI authenticates with; they are
	// let through the secret filter because the CLI cannot work without.
	credentials []string
	args        func(phase agent.Phase, model string, maxTurns int) []string
}

func lookup(name string) (cli, bool) {
	switch name {
	case "claude":
		return cli{
			binary:      "claude",
			install:     "npm install -g @anthropic-ai/claude-code",
			credentials: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
			args: func(p agent.Phase, model string, maxTurns int) []string {
				a := []string{"-p", "--output-format", "text"}
				if p.ReadOnly() {
					a = append(a, "--permission-mode", "default",
						"--allowedTools", "Read,Grep,Glob,LS",
						"--disallowedTools", "Edit,MultiEdit,Write,NotebookEdit,Bash")
				} else {
					a = append(a, "--permission-mode", "acceptEdits",
						"--allowedTools", "Read,Grep,Glob,LS,Edit,MultiEdit,Write,Bash")
				}
				if model != "" {
					a = append(a, "--model", model)
				}
				if maxTurns > 0 {
					a = append(a, "--max-turns", strconv.Itoa(maxTurns))
				}
				return a
			},
		}, true
	case "codex":
		return cli{
			binary:      "codex",
			install:     "npm install -g @openai/codex",
			credentials: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
			args: func(p agent.Phase, model string, _ int) []string {
				sandbox := "read-only"
				if !p.ReadOnly() {
					sandbox = "workspace-write"
				}
				// The commands Codex runs inherit only the basic variables,
				// never its API key.
				a := []string{"exec", "--sandbox", sandbox, "--skip-git-repo-check", "--color", "never",
					"-c", `shell_environment_policy.inherit="core"`}
				if model != "" {
					a = append(a, "--model", model)
				}
				return append(a, "-")
			},
		}, true
	case "gemini":
		return cli{
			binary:      "gemini",
			install:     "npm install -g @google/gemini-cli",
			credentials: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
			args: func(p agent.Phase, model string, _ int) []string {
				mode := "default"
				if !p.ReadOnly() {
					// Execute runs in its own worktree and needs the shell for tests.
					mode = "yolo"
				}
				a := []string{"--prompt", "Carry out the instructions given on standard input.", "--output-format", "text", "--approval-mode", mode}
				if model != "" {
					a = append(a, "--model", model)
				}
				return a
			},
		}, true
	}
	return cli{}, false
}

// Agent runs one of the CLIs for each step.
type Agent struct {
	cfg  Config
	cli  cli
	path string
}

// New checks that the CLI is installed and returns its agent.
func New(cfg Config) (*Agent, error) {
	c, ok := lookup(cfg.Name)
	if !ok {
		return nil, fmt.Errorf("unknown agent CLI %q (known: %s)", cfg.Name, strings.Join(Names(), ", "))
	}
	look := cfg.LookPath
	if look == nil {
		look = exec.LookPath
	}
	path, err := look(c.binary)
	if err != nil {
		return nil, fmt.Errorf("the %s CLI was not found on PATH: install it with `%s`, pass --agent-cmd with its full path, "+
			"or pick a built-in agent (--agent anthropic or --agent openai, which need only an API key)", c.binary, c.install)
	}
	return &Agent{cfg: cfg, cli: c, path: path}, nil
}

// CommandLine is the shell command run for a phase.
func (a *Agent) CommandLine(phase agent.Phase) string {
	parts := []string{shellQuote(a.path)}
	for _, arg := range a.cli.args(phase, a.cfg.Model, a.cfg.MaxTurns) {
		parts = append(parts, shellQuote(arg))
	}
	return strings.Join(parts, " ")
}

// Run executes one step through the command agent.
func (a *Agent) Run(ctx context.Context, step agent.Step) (agent.Result, error) {
	schema, err := agent.Schema(step.Phase)
	if err != nil {
		return agent.Result{}, err
	}
	step.Prompt = step.Prompt + resultInstructions(step.Phase, schema)
	contain := a.cfg.Contain
	contain.AllowEnv = append(append([]string(nil), a.cli.credentials...), contain.AllowEnv...)
	ca := command.New(command.Config{
		Command:  a.CommandLine(step.Phase),
		Contain:  contain,
		Timeouts: a.cfg.Timeouts,
		Env:      a.cfg.Env,
	})
	res, err := ca.Run(ctx, step)
	if err != nil {
		return res, fmt.Errorf("%s agent: %w", a.cli.binary, err)
	}
	return res, nil
}

func resultInstructions(p agent.Phase, schema []byte) string {
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		compact.Reset()
		compact.Write(schema)
	}
	return fmt.Sprintf("\n\n---\nWhen you are finished, end your final message with the %s result as one JSON object "+
		"that matches this JSON Schema, and nothing after it:\n%s\n", p, compact.String())
}

// shellQuote quotes s for sh unless it is made only of safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
