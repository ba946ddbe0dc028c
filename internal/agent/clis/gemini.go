package clis

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/agent"
)

// geminiDefaultBaseURL is Gemini's API, the endpoint when --base-url names none.
const geminiDefaultBaseURL = "https://generativelanguage.googleapis.com"

// Gemini CLI (`gemini -p`), checked with 0.61.0:
//   - --output-format json prints one object: the answer in "response",
//     tokens per model in "stats.models", tool calls and the decisions on
//     them in "stats.tools", and "error" when the run failed.
//   - --approval-mode plan is its read-only mode; auto_edit runs its edit
//     tools (write_file, replace) unasked, and a planex policy file adds
//     its shell for the tests an execute step runs. No yolo mode.
//   - Headless runs in a folder it does not trust exit with code 55:
//     --skip-trust trusts the worktree for this run only.
//   - GOOGLE_GEMINI_BASE_URL points it at another endpoint, but only
//     with API-key authentication selected in a settings file; planex
//     gives it a GEMINI_CLI_HOME of its own whose .gemini/settings.json
//     selects it (the key stays in GEMINI_API_KEY). The user's ~/.gemini
//     (logins, extensions, MCP servers) is not used; the servers of
//     --mcp-config are its mcpServers, their tools allowed by the policy.
//   - The nearest .gemini/.env (or .env) of the working directory and
//     the folders above it, up to /, fills in every variable not already
//     set, before anything else runs: a repository's file, or one
//     another user leaves in /tmp above a task's worktree, would choose
//     the endpoint its key goes to, a proxy with certificate checks off,
//     or the file that replaces its system prompt (GEMINI_SYSTEM_MD).
//     planex sets the endpoint and certificate checks itself, and its
//     settings turn .env files off (advanced.ignoreLocalEnv: only one in
//     Gemini's home, planex's, is read). A contained step sees the
//     worktree's .gemini folder (its settings, which could turn .env
//     files back on, agents, commands and .env) and every .gemini/.env
//     above it empty and read-only; without the sandbox a step is refused
//     where a .gemini/.env above it is another user's.
func geminiCLI() cli {
	return cli{
		projectConfig: geminiProjectConfig,
		aboveConfig:   []string{".gemini/.env"},
		binary:        "gemini",
		credentials:   []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		args: func(s setup, _ int) []string {
			a := []string{"--prompt", "Carry out the instructions given on standard input.",
				"--output-format", "json", "--skip-trust", "--model", s.model}
			if s.phase.ReadOnly() {
				return append(a, "--approval-mode", "plan", "--policy", geminiPolicyFile(s))
			}
			return append(a, "--approval-mode", "auto_edit", "--policy", geminiPolicyFile(s))
		},
		configure: func(s setup) ([]string, error) {
			home := filepath.Join(s.home, "gemini")
			settings := map[string]any{
				"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
				"privacy":  map[string]any{"usageStatisticsEnabled": false},
				// No .env of the worktree's or a folder above it.
				"advanced": map[string]any{"ignoreLocalEnv": true},
			}
			if !s.mcp.Empty() {
				settings["mcpServers"] = geminiMCP(s.mcp)
			}
			b, err := json.MarshalIndent(settings, "", "  ")
			if err != nil {
				return nil, err
			}
			if err := writeFile(filepath.Join(home, ".gemini", "settings.json"), string(b)+"\n"); err != nil {
				return nil, err
			}
			policy := geminiExecutePolicy
			if s.phase.ReadOnly() {
				policy = geminiReadOnlyPolicy
			}
			if err := writeFile(geminiPolicyFile(s), policy+geminiMCPPolicy(s.mcp)); err != nil {
				return nil, err
			}
			base := s.baseURL
			if base == "" {
				base = geminiDefaultBaseURL
			}
			// Set, so that no .env of the repository's can set them.
			// GEMINI_CLI_NO_RELAUNCH: otherwise its launcher starts a second
			// node process running Gemini CLI again (to raise the heap
			// limit to half the machine's memory, and to restart it when
			// settings change in an interactive session), about 0.9 s of
			// CPU more per step (1.9 s against 1.0 s for gemini --version),
			// and that launcher ignores SIGINT, SIGTERM and SIGHUP.
			env := []string{"GEMINI_CLI_HOME=" + home, "GOOGLE_GEMINI_BASE_URL=" + strings.TrimRight(base, "/"),
				"NODE_TLS_REJECT_UNAUTHORIZED=1", "GEMINI_CLI_NO_RELAUNCH=true"}
			return env, nil
		},
		decode: decodeGemini,
	}
}

// geminiProjectConfig is what Gemini CLI reads from a trusted worktree
// on start: its .gemini folder. Its .env is not read (ignoreLocalEnv),
// so every step sees the worktree's .env as the file it is.
func geminiProjectConfig(agent.Phase) []string {
	return []string{".gemini"}
}

func geminiPolicyFile(s setup) string { return filepath.Join(s.home, "gemini", "planex-policy.toml") }

// geminiReadOnlyPolicy takes the edit tools and the shell away from a
// read-only step altogether (plan mode alone still offers the edit tools
// for plan files of its own).
const geminiReadOnlyPolicy = `# Written by planex for one read-only step.
[[rule]]
toolName = ["write_file", "replace", "run_shell_command"]
decision = "deny"
priority = 900
`

// geminiExecutePolicy lets an execute step run shell commands (its
// tests) in auto_edit mode, where they would otherwise need approval.
const geminiExecutePolicy = `# Written by planex for one execute step: the task's tests need the shell.
[[rule]]
toolName = "run_shell_command"
decision = "allow"
priority = 100
modes = ["autoEdit"]
`

type geminiOutput struct {
	Response string `json:"response"`
	Error    *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Code    any    `json:"code"`
	} `json:"error"`
	Stats struct {
		Models map[string]struct {
			Tokens struct {
				Prompt     int64 `json:"prompt"`
				Cached     int64 `json:"cached"` // part of Prompt
				Candidates int64 `json:"candidates"`
				Thoughts   int64 `json:"thoughts"`
				Tool       int64 `json:"tool"`
			} `json:"tokens"`
		} `json:"models"`
		Tools struct {
			ByName map[string]struct {
				Count     int `json:"count"`
				Fail      int `json:"fail"`
				Decisions struct {
					Reject int `json:"reject"`
				} `json:"decisions"`
			} `json:"byName"`
		} `json:"tools"`
	} `json:"stats"`
}

func decodeGemini(stdout []byte) (report, error) {
	doc, ok := jsonDocument(stdout)
	if !ok {
		return report{}, fmt.Errorf("gemini printed no JSON report%s", quoteTail(stdout))
	}
	var o geminiOutput
	if err := json.Unmarshal(doc, &o); err != nil {
		return report{}, fmt.Errorf("reading gemini's JSON report: %w", err)
	}
	r := report{text: o.Response, tokens: map[string]agent.Usage{}}
	for m, u := range o.Stats.Models {
		r.tokens[m] = agent.Usage{InputTokens: u.Tokens.Prompt + u.Tokens.Tool, OutputTokens: u.Tokens.Candidates + u.Tokens.Thoughts,
			CacheReadTokens: u.Tokens.Cached}
	}
	names := make([]string, 0, len(o.Stats.Tools.ByName))
	for n := range o.Stats.Tools.ByName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := o.Stats.Tools.ByName[n]
		if strings.HasPrefix(n, "mcp_") && t.Count > 0 {
			if r.tools == nil {
				r.tools = map[string]int{}
			}
			r.tools[n] = t.Count
		}
		if t.Decisions.Reject > 0 {
			r.problems = append(r.problems, fmt.Sprintf("%s: %d call(s) refused by the approval policy", n, t.Decisions.Reject))
		}
		if t.Fail > 0 {
			r.problems = append(r.problems, fmt.Sprintf("%s: %d call(s) failed", n, t.Fail))
		}
	}
	if o.Error != nil {
		r.failure = strings.TrimSpace(firstOf(o.Error.Message, o.Error.Type, "gemini reported an error"))
		if o.Error.Type != "" && o.Error.Message != "" {
			r.failure = o.Error.Type + ": " + o.Error.Message
		}
	}
	return r, nil
}
