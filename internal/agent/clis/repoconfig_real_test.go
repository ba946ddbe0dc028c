package clis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/agent/clis/clistest"
)

// repoConfigs are the project configurations each CLI may load from the
// folder it starts in, each naming a program that leaves a marker named
// after what ran it: hooks at session start, before the agent and before
// tools, an MCP server that starts with the CLI, a notifier. A
// repository's content is data: none of them may run.
var repoConfigs = map[string]string{
	".claude/settings.json": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch claude-hook-ran"}]}],
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch claude-prompt-hook-ran"}]}]},
  "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}, "apiKeyHelper": "touch claude-key-helper-ran; echo key"}`,
	".mcp.json": `{"mcpServers": {"repo": {"command": "sh", "args": ["-c", "touch mcp-json-server-ran"]}}}`,
	".gemini/settings.json": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch gemini-hook-ran"}]}],
  "BeforeAgent": [{"hooks": [{"type": "command", "command": "touch gemini-agent-hook-ran"}]}]},
  "mcpServers": {"repo": {"command": "sh", "args": ["-c", "touch gemini-mcp-server-ran"]}}}`,
	".codex/config.toml": "notify = [\"sh\", \"-c\", \"touch codex-notify-ran\"]\n[mcp_servers.repo]\ncommand = \"sh\"\nargs = [\"-c\", \"touch codex-mcp-server-ran\"]\n",
}

// TestRealCLIRepositoryConfigRunsNothing: the task's worktree ships each
// CLI's project configuration with hooks, MCP servers, a key helper and a
// notifier; the CLI does its step, and none of them ran. The Claude and
// Gemini configurations do run where the CLI honours them (claude -p
// without --setting-sources user; gemini in a folder its trusted list
// names, which --skip-trust does not make it), so a CLI version that
// starts loading them fails here.
func TestRealCLIRepositoryConfigRunsNothing(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			script := func(turn agenttest.Turn) agenttest.Action {
				return clistest.Answer(map[string]any{"id": "T1", "status": "completed", "findings": "nothing to do",
					"files_modified": []string{}, "tests_passed": true})
			}
			r := startReal(t, name, script, "")
			dir := gitDir(t)
			for p, content := range repoConfigs {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := r.run(t, agent.Step{Phase: agent.PhaseExecute, ID: "T1", Prompt: "## Step: carry out task T1\nnothing to do",
				Dir: dir, Scope: "a/**"}); err != nil {
				t.Fatalf("run: %v", err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), "-ran") {
					t.Errorf("the repository's configuration ran a program: %s", e.Name())
				}
			}
		})
	}
}
