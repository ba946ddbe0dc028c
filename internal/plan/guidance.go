package plan

import (
	"path"
	"strings"

	"github.com/planexhq/planex/internal/scope"
)

// guidanceFiles are the names under which a coding agent's CLI reads a
// file as the repository's instructions or settings when it starts, in
// whatever folder it finds one (the folder it starts in, those above it
// up to the repository's root, or the one it works in): Codex, Copilot
// and Cursor read AGENTS.md (Codex also AGENTS.override.md), Claude Code
// CLAUDE.md and CLAUDE.local.md and the MCP servers of .mcp.json, Gemini
// CLI GEMINI.md and the variables of .env (GEMINI_SYSTEM_MD replaces its
// system prompt with a file of the repository), Cursor, Windsurf and
// Cline their rules files.
var guidanceFiles = []string{"AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md",
	".mcp.json", ".env", ".cursorrules", ".windsurfrules", ".clinerules"}

// guidanceNamed are single files read as guidance at one place only:
// Copilot's instructions and the MCP servers VS Code's agent starts.
var guidanceNamed = []string{".github/copilot-instructions.md", ".vscode/mcp.json"}

// guidanceDirs are the folders whose files a coding agent's CLI reads as
// its settings, hooks, commands or rules (Claude Code's settings.json
// hooks run commands of their own), wherever one lies.
var guidanceDirs = []string{".claude", ".codex", ".gemini", ".cursor", ".windsurf"}

// InstructionsDir holds Copilot's path-specific instructions
// (*.instructions.md).
const InstructionsDir = ".github/instructions"

// guidanceGuard says what guards p when a coding agent reads it as the
// repository's guidance: a file of guidanceFiles in any folder, and one
// of guidanceNamed, must be named; a file in a folder of guidanceDirs (at
// any depth) or in InstructionsDir needs a glob written for that folder.
// Once committed, an agent of any later run on the branch, and every
// developer's own after a merge, takes such a file for the repository's
// word.
func guidanceGuard(p string) (Guarded, bool) {
	if oneOf(path.Base(p), guidanceFiles) || oneOf(p, guidanceNamed) {
		return Guarded{Guard: GuardName, What: "a coding agent's guidance file"}, true
	}
	if p == InstructionsDir || strings.HasPrefix(p, InstructionsDir+"/") {
		return Guarded{Guard: GuardFolder, Dir: InstructionsDir, What: "a coding agent's instructions file"}, true
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if oneOf(s, guidanceDirs) {
			return Guarded{Guard: GuardFolder, Dir: strings.Join(segs[:i+1], "/"), What: "a coding agent's settings file"}, true
		}
	}
	return Guarded{}, false
}

// GuidanceTasks lists the tasks, in plan order, whose scope may change
// what coding agents read as the repository's guidance (guidanceGuard):
// it names such a file, or one of its globs is written for a folder of
// guidanceDirs or for InstructionsDir.
func GuidanceTasks(tasks []Task) []string {
	var out []string
	for _, t := range tasks {
		if mayChangeGuidance(t.Scope) {
			out = append(out, t.ID)
		}
	}
	return out
}

func mayChangeGuidance(taskScope string) bool {
	if scope.TargetsDir(taskScope, InstructionsDir) {
		return true
	}
	for _, g := range scope.Split(taskScope) {
		literal := !strings.ContainsAny(g, "*?[{\\")
		if literal && (oneOf(path.Base(g), guidanceFiles) || oneOf(path.Clean(g), guidanceNamed)) {
			return true
		}
		for _, s := range strings.Split(g, "/") {
			if strings.ContainsAny(s, "*?[{\\") {
				break
			}
			if oneOf(s, guidanceDirs) {
				return true
			}
		}
	}
	return false
}
