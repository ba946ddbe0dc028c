package clis

import (
	"os"
	"strings"
	"testing"
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

// checkRepoConfigRanNothing fails the test when a program repoConfigs
// names left its marker in dir.
func checkRepoConfigRanNothing(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-ran") {
			t.Errorf("the repository's configuration ran a program: %s", e.Name())
		}
	}
}
