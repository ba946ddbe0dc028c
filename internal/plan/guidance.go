package plan

import (
	"path"
	"slices"
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
// Cline their rules files; Aider's .aider.conf.yml sets the lint and
// test commands it runs and the files it reads.
var guidanceFiles = []string{"AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md",
	".mcp.json", ".env", ".cursorrules", ".windsurfrules", ".clinerules", ".aider.conf.yml"}

// guidanceNamed are single files read as guidance at one place only:
// Copilot's instructions and the MCP servers VS Code's agent starts.
var guidanceNamed = []string{".github/copilot-instructions.md", ".vscode/mcp.json"}

// guidanceDirs are the folders whose files a coding agent's CLI reads as
// its settings, hooks, commands or rules (Claude Code's settings.json
// hooks run commands of their own), wherever one lies: besides Claude
// Code, Codex, Gemini CLI, Cursor and Windsurf, Cline's .clinerules/
// folder, Junie's guidelines, Continue's, Roo Code's and Kilo Code's
// rules and MCP servers, Amazon Q's rules, OpenHands' microagents and
// Zed's project settings (its context servers are commands).
var guidanceDirs = []string{".claude", ".codex", ".gemini", ".cursor", ".windsurf",
	".clinerules", ".junie", ".continue", ".roo", ".kilocode", ".amazonq", ".openhands", ".zed"}

// InstructionsDir holds Copilot's path-specific instructions
// (*.instructions.md).
const InstructionsDir = ".github/instructions"

// copilotDirs are the folders of .github whose files Copilot reads as
// instructions: path-specific instructions, prompt files, custom agents
// and chat modes.
var copilotDirs = []string{InstructionsDir, ".github/prompts", ".github/agents", ".github/chatmodes"}

// guidanceGuard says what guards p when a coding agent reads it as the
// repository's guidance: a file of guidanceFiles in any folder, and one
// of guidanceNamed, must be named; a file in a folder of guidanceDirs (at
// any depth) or in InstructionsDir needs a glob written for that folder.
// Once committed, an agent of any later run on the branch, and every
// developer's own after a merge, takes such a file for the repository's
// word.
func guidanceGuard(p string) (Guarded, bool) {
	if guidanceFile(path.Base(p)) || foldedOneOf(p, guidanceNamed) {
		return Guarded{Guard: GuardName, What: "a coding agent's guidance file"}, true
	}
	for _, d := range copilotDirs {
		if dir, ok := underFolded(p, d); ok {
			return Guarded{Guard: GuardFolder, Dir: dir, What: "a coding agent's instructions file"}, true
		}
	}
	if g, ok := autorunGuard(p); ok {
		return g, true
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if foldedOneOf(s, guidanceDirs) {
			return Guarded{Guard: GuardFolder, Dir: strings.Join(segs[:i+1], "/"), What: "a coding agent's settings file"}, true
		}
	}
	return Guarded{}, false
}

// guidanceFile says whether a file named base is one of guidanceFiles,
// whatever its case: a developer's case-insensitive disk (macOS,
// Windows) serves claude.md or Agents.md for the CLAUDE.md or AGENTS.md
// the tool asks for, and some agents look for the lower-case name
// themselves. An ordinary document called agents.md is then changed only
// by a task whose scope names it.
func guidanceFile(base string) bool {
	return foldedOneOf(base, guidanceFiles)
}

// foldedOneOf says whether s is one of set whatever its case.
func foldedOneOf(s string, set []string) bool {
	for _, x := range set {
		if strings.EqualFold(s, x) {
			return true
		}
	}
	return false
}

// underFolded says whether p is the folder d, or lies in it, matching each
// name whatever its case, and returns the folder as p spells it.
func underFolded(p, d string) (string, bool) {
	ps, ds := strings.Split(p, "/"), strings.Split(d, "/")
	if len(ps) < len(ds) {
		return "", false
	}
	for i := range ds {
		if !strings.EqualFold(ps[i], ds[i]) {
			return "", false
		}
	}
	return strings.Join(ps[:len(ds)], "/"), true
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
	for _, d := range slices.Concat(copilotDirs, autorunDirs) {
		if scope.TargetsDir(taskScope, d) {
			return true
		}
	}
	for _, g := range scope.Split(taskScope) {
		literal := !strings.ContainsAny(g, "*?[{\\")
		if literal && (guidanceFile(path.Base(g)) || foldedOneOf(path.Clean(g), guidanceNamed) || foldedOneOf(path.Clean(g), autorunNamed)) {
			return true
		}
		for _, s := range strings.Split(g, "/") {
			if strings.ContainsAny(s, "*?[{\\") {
				break
			}
			if foldedOneOf(s, guidanceDirs) {
				return true
			}
		}
	}
	return false
}

// autorunNamed are files at the repository's root that a developer's
// tools run as commands on their own, documented so by the tool: VS
// Code's tasks with runOn folderOpen and its workspace settings (the
// programs its extensions start, the terminal's environment), Gitpod's
// tasks on a workspace's start, and the git hooks pre-commit and
// lefthook run on every commit once installed. direnv's .envrc and
// mise's settings are not among them: both ask the developer to trust a
// changed file before running it.
var autorunNamed = []string{".vscode/tasks.json", ".vscode/settings.json", ".devcontainer.json", ".gitpod.yml",
	".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml"}

// autorunDirs are root folders whose files run as commands on their own:
// a dev container's postCreateCommand (Codespaces runs it with the
// developer's token) and husky's git hooks, installed by npm's prepare.
var autorunDirs = []string{".devcontainer", ".husky"}

// autorunGuard says what guards p when a developer's tools run it on
// their own (autorunNamed, autorunDirs).
func autorunGuard(p string) (Guarded, bool) {
	if foldedOneOf(p, autorunNamed) {
		return Guarded{Guard: GuardName, What: "a file developers' tools run on their own"}, true
	}
	for _, d := range autorunDirs {
		if dir, ok := underFolded(p, d); ok {
			return Guarded{Guard: GuardFolder, Dir: dir, What: "a file developers' tools run on their own"}, true
		}
	}
	return Guarded{}, false
}
