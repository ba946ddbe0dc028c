package clis

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/agent"
)

// Claude Code (`claude -p`), checked with 2.1.330:
//   - --output-format json prints one object: the final answer in
//     "result", "usage" and "modelUsage" (tokens, per model), the cost in
//     "total_cost_usd", "is_error" with "errors", and every tool call the
//     permission rules refused in "permission_denials".
//   - --tools sets which built-in tools exist at all; --allowedTools with
//     --permission-mode dontAsk runs exactly those without asking and
//     denies anything else (nothing can wait for a prompt). No bypass
//     flag is used, so Claude Code runs as root too.
//   - --setting-sources user and --strict-mcp-config ignore settings,
//     hooks and MCP servers the repository may carry: its content is data.
//     The user's MCP servers come in a --mcp-config file planex writes,
//     their tools allowed as mcp__NAME.
//   - ANTHROPIC_BASE_URL points it at another endpoint.
const (
	claudeReadTools  = "Read,Grep,Glob"
	claudeWriteTools = "Read,Grep,Glob,Edit,Write,Bash"
	// Edits are allowed inside the working directory (the task's
	// worktree) only; the shell runs the task's tests.
	claudeWriteAllowed = "Read,Grep,Glob,Edit(./**),Write(./**),Bash"
)

func claudeCLI() cli {
	return cli{
		binary:      "claude",
		credentials: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		args: func(s setup, maxTurns int) []string {
			tools, allowed := claudeReadTools, claudeReadTools
			if !s.phase.ReadOnly() {
				tools, allowed = claudeWriteTools, claudeWriteAllowed
			}
			a := []string{"-p", "--output-format", "json", "--model", s.model,
				"--tools", tools, "--allowedTools", allowed, "--permission-mode", "dontAsk",
				"--setting-sources", "user", "--strict-mcp-config", "--no-session-persistence"}
			if !s.mcp.Empty() {
				// Only these servers: --strict-mcp-config keeps out any the
				// repository or the user's settings name.
				a = append(a, "--mcp-config", claudeMCPFile(s))
				a[slices.Index(a, "--allowedTools")+1] += "," + claudeMCPAllowed(s.mcp)
			}
			if maxTurns > 0 {
				a = append(a, "--max-turns", strconv.Itoa(maxTurns))
			}
			return a
		},
		configure: func(s setup) ([]string, error) {
			// Updates, telemetry and error reports are not part of a step.
			env := []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
			if s.baseURL != "" {
				env = append(env, "ANTHROPIC_BASE_URL="+strings.TrimRight(s.baseURL, "/"))
			}
			if !s.mcp.Empty() {
				b, err := claudeMCP(s.mcp)
				if err != nil {
					return nil, err
				}
				if err := writeFile(claudeMCPFile(s), string(b)+"\n"); err != nil {
					return nil, err
				}
			}
			return env, nil
		},
		decode: decodeClaude,
	}
}

type claudeOutput struct {
	Type      string   `json:"type"`
	Subtype   string   `json:"subtype"`
	IsError   bool     `json:"is_error"`
	Result    string   `json:"result"`
	Errors    []string `json:"errors"`
	CostUSD   *float64 `json:"total_cost_usd"`
	Terminal  string   `json:"terminal_reason"`
	StopCause string   `json:"stop_reason"`
	Usage     struct {
		Input         int64 `json:"input_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		Output        int64 `json:"output_tokens"`
	} `json:"usage"`
	ModelUsage map[string]struct {
		Input         int64 `json:"inputTokens"`
		Output        int64 `json:"outputTokens"`
		CacheRead     int64 `json:"cacheReadInputTokens"`
		CacheCreation int64 `json:"cacheCreationInputTokens"`
	} `json:"modelUsage"`
	Denials []struct {
		Tool  string         `json:"tool_name"`
		Input map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
}

func claudeUsage(in, cacheRead, cacheWrite, out int64) agent.Usage {
	return agent.Usage{InputTokens: in + cacheRead + cacheWrite, OutputTokens: out,
		CacheReadTokens: cacheRead, CacheWriteTokens: cacheWrite}
}

func decodeClaude(stdout []byte) (report, error) {
	doc, ok := jsonDocument(stdout)
	if !ok {
		return report{}, fmt.Errorf("claude printed no JSON report%s", quoteTail(stdout))
	}
	var o claudeOutput
	if err := json.Unmarshal(doc, &o); err != nil {
		return report{}, fmt.Errorf("reading claude's JSON report: %w", err)
	}
	r := report{text: o.Result, tokens: map[string]agent.Usage{}}
	// Claude's input counts leave out cache reads and writes; they are
	// input too, as for the built-in agents, priced at their own rates.
	if len(o.ModelUsage) > 0 {
		for m, u := range o.ModelUsage {
			r.tokens[m] = claudeUsage(u.Input, u.CacheRead, u.CacheCreation, u.Output)
		}
	} else {
		r.tokens[""] = claudeUsage(o.Usage.Input, o.Usage.CacheRead, o.Usage.CacheCreation, o.Usage.Output)
	}
	if o.CostUSD != nil {
		r.reportedCost, r.costKnown = *o.CostUSD, true
	}
	for _, d := range o.Denials {
		r.problems = append(r.problems, "permission denied: "+toolCall(d.Tool, d.Input))
	}
	r.problems = limit(r.problems, 5)
	if o.IsError || (o.Subtype != "" && o.Subtype != "success") {
		var why []string
		if s := strings.TrimSpace(o.Result); s != "" {
			why = append(why, s)
		}
		why = append(why, o.Errors...)
		if len(why) == 0 {
			why = append(why, "claude reported an error ("+firstOf(o.Subtype, o.Terminal, "no detail")+")")
		}
		r.failure = strings.Join(why, "; ")
	}
	if o.StopCause == "refusal" {
		if r.failure == "" {
			r.failure = strings.TrimSpace(o.Result)
		}
		r.failure = "the model refused: " + r.failure
	}
	return r, nil
}

// toolCall names a denied tool call by its most telling argument.
func toolCall(tool string, input map[string]any) string {
	for _, k := range []string{"file_path", "path", "command", "pattern", "url"} {
		if v, ok := input[k].(string); ok && v != "" {
			if len(v) > 120 {
				v = v[:120] + "…"
			}
			return fmt.Sprintf("%s(%s)", tool, v)
		}
	}
	return tool
}

func limit(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], fmt.Sprintf("and %d more", len(items)-n))
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// quoteTail quotes the end of a CLI's output for an error message.
func quoteTail(b []byte) string {
	s := strings.TrimSpace(agent.CleanText(string(b)))
	if s == "" {
		return " (stdout was empty)"
	}
	if r := []rune(s); len(r) > 500 {
		s = "…" + string(r[len(r)-500:])
	}
	return ": " + strconv.Quote(s)
}
