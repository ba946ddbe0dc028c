package plan

import (
	"strings"
	"testing"
)

// TestGuardOfGuidance: what guards each kind of file a coding agent reads
// as the repository's guidance, and the folder a glob must be written
// for; look-alikes stay unguarded.
func TestGuardOfGuidance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path  string
		guard Guard
		dir   string
	}{
		{"AGENTS.md", GuardName, ""},
		{"docs/AGENTS.md", GuardName, ""},
		{"src/pkg/CLAUDE.md", GuardName, ""},
		{"CLAUDE.local.md", GuardName, ""},
		{"GEMINI.md", GuardName, ""},
		{"AGENTS.override.md", GuardName, ""},
		{".mcp.json", GuardName, ""},
		{".env", GuardName, ""},
		{"web/.env", GuardName, ""},
		{".env.example", Unguarded, ""},
		{".cursorrules", GuardName, ""},
		{"web/.windsurfrules", GuardName, ""},
		{".github/copilot-instructions.md", GuardName, ""},
		{".vscode/mcp.json", GuardName, ""},
		{".github/instructions/go.instructions.md", GuardFolder, ".github/instructions"},
		{".github/instructions", GuardFolder, ".github/instructions"},
		{".claude/settings.json", GuardFolder, ".claude"},
		{".claude", GuardFolder, ".claude"},
		{"src/.claude/commands/x.md", GuardFolder, "src/.claude"},
		{".codex/config.toml", GuardFolder, ".codex"},
		{".gemini/settings.json", GuardFolder, ".gemini"},
		{"app/.cursor/rules/x.mdc", GuardFolder, "app/.cursor"},
		{".windsurf/rules/x.md", GuardFolder, ".windsurf"},
		{"docs/agents.md", GuardName, ""},
		{"AGENTS.md.bak", Unguarded, ""},
		{"docs/claude/notes.md", Unguarded, ""},
		{".vscode/settings.json", GuardName, ""},
		{".vscode/tasks.json", GuardName, ""},
		{".vscode/launch.json", Unguarded, ""},
		{".vscode/extensions.json", Unguarded, ""},
		{".aider.conf.yml", GuardName, ""},
		{"sub/.aider.conf.yml", GuardName, ""},
		{".clinerules/rules.md", GuardFolder, ".clinerules"},
		{".junie/guidelines.md", GuardFolder, ".junie"},
		{".continue/rules/x.md", GuardFolder, ".continue"},
		{".roo/rules/x.md", GuardFolder, ".roo"},
		{".kilocode/mcp.json", GuardFolder, ".kilocode"},
		{".amazonq/rules/x.md", GuardFolder, ".amazonq"},
		{".openhands/microagents/repo.md", GuardFolder, ".openhands"},
		{".zed/settings.json", GuardFolder, ".zed"},
		{".github/prompts/x.prompt.md", GuardFolder, ".github/prompts"},
		{".github/agents/x.agent.md", GuardFolder, ".github/agents"},
		{".github/chatmodes/x.chatmode.md", GuardFolder, ".github/chatmodes"},
		{".devcontainer/devcontainer.json", GuardFolder, ".devcontainer"},
		{".devcontainer/py/devcontainer.json", GuardFolder, ".devcontainer"},
		{".devcontainer.json", GuardName, ""},
		{".husky/pre-commit", GuardFolder, ".husky"},
		{".pre-commit-config.yaml", GuardName, ""},
		{"lefthook.yml", GuardName, ""},
		{".gitpod.yml", GuardName, ""},
		{".envrc", Unguarded, ""},
		{".tool-versions", Unguarded, ""},
		{".github/Workflows/x.yml", Unguarded, ""},
		{"Agents.md", GuardName, ""},
		{"Claude.md", GuardName, ""},
		{"src/gemini.MD", GuardName, ""},
		{"claude.LOCAL.md", GuardName, ""},
		{"agents.override.MD", GuardName, ""},
		{".Claude/settings.json", GuardFolder, ".Claude"},
		{"src/.CLAUDE/commands/x.md", GuardFolder, "src/.CLAUDE"},
		{".MCP.json", GuardName, ""},
		{"web/.Env", GuardName, ""},
		{".VSCode/tasks.json", GuardName, ""},
		{".DevContainer/devcontainer.json", GuardFolder, ".DevContainer"},
		{".Husky/pre-commit", GuardFolder, ".Husky"},
		{".GitHub/Prompts/x.prompt.md", GuardFolder, ".GitHub/Prompts"},
		{".GitHub/Copilot-Instructions.md", GuardName, ""},
		{".cl\u0430ude/settings.json", Unguarded, ""},
		{"AGENTS\u200b.md", Unguarded, ""},
		{".github/instructionsx/a.md", Unguarded, ""},
		{".huskyrc", Unguarded, ""},
		{"docs/devcontainer.md", Unguarded, ""},
		{"copilot-instructions.md", Unguarded, ""},
		{".github/instructions.md", Unguarded, ""},
	}
	for _, c := range cases {
		if g := GuardOf(c.path); g.Guard != c.guard || g.Dir != c.dir {
			t.Errorf("GuardOf(%q) = %v %q, want %v %q", c.path, g.Guard, g.Dir, c.guard, c.dir)
		}
	}
}

// TestMayChangeGuidance: which scopes let a change to a guidance file
// through: its name written out, or a glob written for its folder.
func TestMayChangeGuidance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scope, path string
		want        bool
	}{
		{"**", "AGENTS.md", false},
		{"*.md", "AGENTS.md", false},
		{"AGENTS.md", "AGENTS.md", true},
		{"docs/**", "docs/AGENTS.md", false},
		{"**/AGENTS.md", "docs/AGENTS.md", false},
		{"docs/AGENTS.md", "docs/AGENTS.md", true},
		{"AGENTS.md", "docs/AGENTS.md", false},
		{".github/**", ".github/copilot-instructions.md", false},
		{".github/copilot-instructions.md", ".github/copilot-instructions.md", true},
		{".github/**", ".github/instructions/a.instructions.md", false},
		{".github/instructions/**", ".github/instructions/a.instructions.md", true},
		{"**", ".claude/settings.json", false},
		{".claude/**", ".claude/settings.json", true},
		{".claude/settings.json", ".claude/settings.json", true},
		{"src/**", "src/.claude/commands/x.md", false},
		{"src/.claude/**", "src/.claude/commands/x.md", true},
		{".claude/**", "src/.claude/commands/x.md", false},
		{"**", ".mcp.json", false},
		{".mcp.json", ".mcp.json", true},
		{"docs/**", "docs/agents.md", false},
		{"docs/agents.md", "docs/agents.md", true},
		{"**", "Claude.md", false},
	}
	for _, c := range cases {
		if _, got := MayChange(c.scope, c.path, c.path, nil); got != c.want {
			t.Errorf("MayChange(%q, %q) = %v, want %v", c.scope, c.path, got, c.want)
		}
	}
}

// TestGuidanceTasks: the tasks the plan comment names as able to change
// what coding agents read as the repository's guidance; a wide scope,
// which cannot, is not named.
func TestGuidanceTasks(t *testing.T) {
	t.Parallel()
	tasks := []Task{
		{ID: "T1", Scope: "**"},
		{ID: "T2", Scope: "src/**;AGENTS.md"},
		{ID: "T3", Scope: "docs/**"},
		{ID: "T4", Scope: ".claude/**"},
		{ID: "T5", Scope: ".github/instructions/*.instructions.md"},
		{ID: "T6", Scope: "pkg/x/CLAUDE.md"},
		{ID: "T7", Scope: "**/AGENTS.md"},
		{ID: "T8", Scope: ".github/copilot-instructions.md"},
		{ID: "T9", Scope: "web/.cursor/rules/*.mdc"},
		{ID: "T10", Scope: ".github/**"},
		{ID: "T11", Scope: "**/.claude/**"},
		{ID: "T12", Scope: ".devcontainer/**"},
		{ID: "T13", Scope: ".vscode/tasks.json"},
		{ID: "T14", Scope: ".github/prompts/*.prompt.md"},
		{ID: "T15", Scope: ".roo/rules/*"},
		{ID: "T16", Scope: ".vscode/**"},
	}
	if got := strings.Join(GuidanceTasks(tasks), ","); got != "T2,T4,T5,T6,T8,T9,T12,T13,T14,T15" {
		t.Errorf("GuidanceTasks = %s", got)
	}
}

// TestMayNotLinkGuidance: a guidance file or an agent's settings folder
// may not become a link (it would move what agents read to a file a wide
// scope may change).
func TestMayNotLinkGuidance(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{"CLAUDE.md": true, "docs/GEMINI.md": true, ".claude": true, ".github/instructions": true, "docs/agents": false} {
		if got := MayNotLink(p); got != want {
			t.Errorf("MayNotLink(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestReadAsGuidanceLink: where the root's CLAUDE.md or .claude is a
// committed link, the file it leads to is read as the guidance and held
// by that name.
func TestReadAsGuidanceLink(t *testing.T) {
	t.Parallel()
	aliases := map[string]string{"CLAUDE.md": "notes/claude.md", ".claude": "config/claude"}
	cases := []struct {
		scope, path, read string
		want              bool
	}{
		{"notes/**", "notes/claude.md", "CLAUDE.md", false},
		{"notes/claude.md", "notes/claude.md", "CLAUDE.md", true},
		{"config/**", "config/claude/settings.json", ".claude/settings.json", false},
		{"config/claude/**", "config/claude/settings.json", ".claude/settings.json", true},
	}
	for _, c := range cases {
		if got := ReadAs(c.path, aliases); len(got) != 2 || got[1] != c.read {
			t.Errorf("ReadAs(%q) = %q, want it read as %q too", c.path, got, c.read)
		}
		if _, got := MayChange(c.scope, c.path, c.read, nil); got != c.want {
			t.Errorf("MayChange(%q, %q, %q) = %v, want %v", c.scope, c.path, c.read, got, c.want)
		}
	}
}
