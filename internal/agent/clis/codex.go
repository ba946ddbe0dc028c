package clis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/agent"
)

// Codex (`codex exec`), checked with 0.169.0:
//   - --json prints one event a line: the model's messages as
//     item.completed agent_message items, its commands, patches and
//     errors as items, token counts in turn.completed, and turn.failed or
//     error events when the run fails.
//   - --sandbox read-only|workspace-write is Codex's own sandbox (inside
//     planex's); edits go through its apply_patch tool.
//   - Codex reads no base-URL variable: planex gives it a CODEX_HOME of
//     its own whose config.toml defines a model provider with the base
//     URL and the name of the key variable (never the key itself). The
//     user's ~/.codex (logins, MCP servers, profiles) is not used; the
//     servers of --mcp-config are [mcp_servers.NAME] tables there.
func codexCLI() cli {
	return cli{
		binary:      "codex",
		credentials: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		args: func(s setup, _ int) []string {
			sandbox := "read-only"
			if !s.phase.ReadOnly() {
				sandbox = "workspace-write"
			}
			// The commands Codex runs inherit only the basic variables,
			// never its API key.
			return []string{"exec", "--json", "--color", "never", "--skip-git-repo-check",
				"--sandbox", sandbox, "--model", s.model,
				"-c", `shell_environment_policy.inherit="core"`, "-"}
		},
		configure: func(s setup) ([]string, error) {
			home := filepath.Join(s.home, "codex")
			if err := writeFile(filepath.Join(home, "config.toml"), codexConfig(s)); err != nil {
				return nil, err
			}
			return []string{"CODEX_HOME=" + home}, nil
		},
		decode: decodeCodex,
	}
}

// codexConfig is the config.toml planex writes for one step.
func codexConfig(s setup) string {
	base := s.baseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	var b strings.Builder
	b.WriteString("# Written by planex for one step. The key is read from the variable env_key names.\n")
	fmt.Fprintf(&b, "model = %s\n", tomlString(s.model))
	b.WriteString("model_provider = \"planex\"\n")
	b.WriteString("check_for_update_on_startup = false\n")
	// Codex's search stays on OpenAI's index, whatever its sandbox (with
	// full access it would search live, which the gateway refuses: the
	// model would open pages of its choosing).
	b.WriteString("web_search = \"cached\"\n\n")
	b.WriteString("[analytics]\nenabled = false\n\n")
	b.WriteString("[model_providers.planex]\nname = \"planex\"\n")
	fmt.Fprintf(&b, "base_url = %s\n", tomlString(strings.TrimRight(base, "/")))
	b.WriteString("wire_api = \"responses\"\n")
	if s.keyVar != "" {
		fmt.Fprintf(&b, "env_key = %s\n", tomlString(s.keyVar))
	}
	b.WriteString(codexMCP(s.mcp))
	return b.String()
}

type codexEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		// Input includes Cached, the prompt tokens served from the cache.
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *codexItem `json:"item"`
}

// codexItem is one finished step of a codex turn.
type codexItem struct {
	Type             string `json:"type"`
	Server           string `json:"server"`
	Tool             string `json:"tool"`
	Text             string `json:"text"`
	Message          string `json:"message"`
	Command          string `json:"command"`
	Status           string `json:"status"`
	ExitCode         *int   `json:"exit_code"`
	AggregatedOutput string `json:"aggregated_output"`
	Changes          []struct {
		Path string `json:"path"`
	} `json:"changes"`
}

func decodeCodex(stdout []byte) (report, error) {
	r := report{tokens: map[string]agent.Usage{}}
	var errs []string
	events, completed, failed := 0, false, false
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e codexEvent
		if json.Unmarshal(line, &e) != nil || e.Type == "" {
			continue
		}
		events++
		switch e.Type {
		case "turn.completed":
			completed = true
			if e.Usage != nil {
				r.tokens[""] = r.tokens[""].Add(agent.Usage{InputTokens: e.Usage.Input, OutputTokens: e.Usage.Output, CacheReadTokens: e.Usage.Cached})
			}
		case "turn.failed":
			failed = true
			if e.Error != nil {
				errs = append(errs, e.Error.Message)
			}
		case "error":
			errs = append(errs, e.Message)
		case "item.completed":
			if e.Item != nil {
				r.addCodexItem(e.Item)
			}
		}
	}
	if events == 0 {
		return r, fmt.Errorf("codex printed no JSON events%s", quoteTail(stdout))
	}
	r.problems = limit(r.problems, 5)
	r.settleCodex(completed, failed, errs)
	return r, nil
}

// addCodexItem records what a finished item tells: the answer, a tool
// used, or a problem worth showing.
func (r *report) addCodexItem(it *codexItem) {
	switch it.Type {
	case "agent_message":
		r.text = it.Text
	case "mcp_tool_call":
		if r.tools == nil {
			r.tools = map[string]int{}
		}
		r.tools["mcp__"+it.Server+"__"+it.Tool]++
	case "error":
		r.problems = append(r.problems, "codex: "+it.Message)
	case "command_execution":
		if it.Status == "declined" {
			r.problems = append(r.problems, "command declined: "+it.Command)
		}
	case "file_change":
		if it.Status == "failed" {
			var paths []string
			for _, c := range it.Changes {
				paths = append(paths, c.Path)
			}
			r.problems = append(r.problems, "patch failed: "+strings.Join(paths, ", "))
		}
	}
}

// settleCodex decides from how the turn ended whether the run failed; the
// errors codex printed are the failure or, if it did not fail, problems.
func (r *report) settleCodex(completed, failed bool, errs []string) {
	switch {
	case failed || (!completed && len(errs) > 0):
		r.failure = strings.Join(nonEmpty(errs, "codex reported a failed turn"), "; ")
	case completed && strings.TrimSpace(r.text) == "":
		// Codex shows no refusal: the model's turn just ends without a
		// message.
		r.failure = "codex finished without an answer (the model sent no message; a refusal looks like this)"
		r.problems = append(r.problems, errs...)
	case len(errs) > 0:
		r.problems = append(r.problems, errs...)
	}
}

func nonEmpty(items []string, fallback string) []string {
	var out []string
	for _, s := range items {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{fallback}
	}
	return out
}
