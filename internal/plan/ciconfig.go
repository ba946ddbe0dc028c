package plan

import (
	"bytes"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/planexhq/planex/internal/scope"
)

// ActionsDir is where a repository keeps its local actions by convention
// (a workflow's `uses: ./.github/actions/setup`). A step that uses one
// runs its definition and scripts with whatever secrets the workflow
// hands it (`with: token: ${{ secrets.DEPLOY_KEY }}`), read from the
// pushed commit, like a workflow file.
const ActionsDir = ".github/actions"

// codeOwners are the places GitHub reads a CODEOWNERS file from (the
// first it finds): who must review a change once branch protection asks
// for code owners' reviews.
var codeOwners = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// dependabot is Dependabot's configuration: once merged, its registries
// receive the repository's Dependabot secrets.
var dependabot = []string{".github/dependabot.yml", ".github/dependabot.yaml"}

// Guard is what a task's scope must say before the task may change a path
// that GitHub (or planex) reads as the repository's configuration.
type Guard int

const (
	// Unguarded: a scope covering the path lets the change through.
	Unguarded Guard = iota
	// GuardFolder: a glob covering the path and written for the folder
	// (Guarded.Dir or below it), never a wide one reaching it by chance.
	GuardFolder
	// GuardName: the path itself, written out in the scope.
	GuardName
)

// Guarded says what guards one path and why.
type Guarded struct {
	Guard Guard
	// Dir is the folder a glob must be written for (GuardFolder).
	Dir string
	// What the path is, for a person: "a workflow file".
	What string
}

// GuardOf says what guards p, a repository path as GitHub reads it:
//
//   - planex's settings file, the CODEOWNERS files and Dependabot's
//     settings decide what happens after a merge (what later runs may do,
//     who must review, where Dependabot's secrets go), and the root's
//     .gitmodules and .lfsconfig where every checkout fetches submodules
//     and large files from: named only;
//   - a workflow file, a local action in ActionsDir, and an action's
//     definition anywhere (action.yml or action.yaml: the steps or
//     program a `uses: ./…` runs) run on the push that adds them, with
//     the secrets the workflow names: a glob written for their folder.
//     The repository's own action.yml at its root is named only (a glob
//     written for the root is any glob);
//   - what coding agents read as the repository's guidance on start
//     (AGENTS.md, CLAUDE.md, .claude/ and the rest: guidanceGuard).
func GuardOf(p string) Guarded {
	switch {
	case p == SettingsFile:
		return Guarded{Guard: GuardName, What: "planex's settings file"}
	case oneOf(p, codeOwners):
		return Guarded{Guard: GuardName, What: "a CODEOWNERS file"}
	case oneOf(p, dependabot):
		return Guarded{Guard: GuardName, What: "Dependabot's settings"}
	case strings.EqualFold(windowsName(p), ".gitmodules"):
		// Where every checkout with submodules (CI's, a developer's
		// clone --recursive) fetches them from: an address there is a
		// way out for what the agent read, and another repository's
		// history under the submodule's name.
		return Guarded{Guard: GuardName, What: "the submodules' sources (.gitmodules)"}
	case strings.EqualFold(windowsName(p), ".lfsconfig"):
		// The Git LFS server every checkout with LFS asks for the
		// repository's large files, with its credentials.
		return Guarded{Guard: GuardName, What: "Git LFS's settings (.lfsconfig)"}
	case InWorkflows(p):
		return Guarded{Guard: GuardFolder, Dir: WorkflowsDir, What: "a workflow file"}
	case p == ActionsDir || strings.HasPrefix(p, ActionsDir+"/"):
		return Guarded{Guard: GuardFolder, Dir: ActionsDir, What: "a local action's file"}
	}
	if g, ok := guidanceGuard(p); ok {
		return g
	}
	if IsActionFile(path.Base(p)) {
		if dir := path.Dir(p); dir != "." {
			return Guarded{Guard: GuardFolder, Dir: dir, What: "an action's definition"}
		}
		return Guarded{Guard: GuardName, What: "the repository's action definition"}
	}
	return Guarded{}
}

// LinkedFolders are the folders whose replacement by a symbolic link
// would move what GitHub reads as configuration elsewhere in the
// repository: a task may not make one a link, and where a committed link
// already does, a change where it leads is judged by the name GitHub
// reads (ReadAs). The root's guidance files and agents' settings folders
// are among them: a committed CLAUDE.md -> notes/claude.md makes
// notes/claude.md what Claude Code reads.
var LinkedFolders = []string{".github", WorkflowsDir, ActionsDir, "docs",
	"AGENTS.md", "CLAUDE.md", "GEMINI.md", ".mcp.json", ".github/copilot-instructions.md", InstructionsDir,
	".claude", ".codex", ".gemini", ".cursor", ".windsurf", ".clinerules", ".junie", ".continue", ".roo", ".kilocode",
	".amazonq", ".openhands", ".zed", ".github/prompts", ".github/agents", ".github/chatmodes",
	".vscode", ".devcontainer", ".husky"}

// MayNotLink says whether a task may not commit a symbolic link at p, a
// path as GitHub reads it: .github, its workflows and actions folders,
// .vscode in any case (it holds the guarded tasks.json and settings.json) and
// every guarded path.
func MayNotLink(p string) bool {
	return p == ".github" || p == WorkflowsDir || p == ActionsDir || strings.EqualFold(p, ".vscode") || GuardOf(p).Guard != Unguarded
}

// ReadAs lists the names under which GitHub reads the repository path p:
// p itself, and for each folder of LinkedFolders that a committed link
// leads elsewhere (aliases maps the folder to where it leads, a path of
// the repository), the folder's name for a p that lies there.
func ReadAs(p string, aliases map[string]string) []string {
	out := []string{p}
	for _, f := range LinkedFolders {
		to, ok := aliases[f]
		if !ok || to == f {
			continue
		}
		var name string
		switch {
		case to == "" || to == ".":
			name = f + "/" + p
		case p == to:
			name = f
		case strings.HasPrefix(p, to+"/"):
			name = f + p[len(to):]
		default:
			continue
		}
		if !oneOf(name, out) {
			out = append(out, name)
		}
	}
	return out
}

// ActionFiles are the names of an action's definition: a folder holding
// one is a local action a workflow may run (`uses: ./tools/deploy`).
var ActionFiles = []string{"action.yml", "action.yaml"}

// IsActionFile says whether name is one of ActionFiles whatever its case:
// a macOS or Windows runner reads Action.yml as action.yml.
func IsActionFile(name string) bool {
	for _, f := range ActionFiles {
		if strings.EqualFold(name, f) {
			return true
		}
	}
	return false
}

// MayChange says whether a task whose scope is taskScope may change the
// repository path p, which GitHub reads as read (p itself, or its name
// through a linked folder: ReadAs), and what guards it. A folder's glob
// is looked for where the folder really lies: for ci/workflows/x.yml read
// as .github/workflows/x.yml (.github a link to ci), ci/workflows/*.yml.
// actionDirs are the folders of the tree holding an action's definition
// (ActionFiles), the root left out: every file in one is the action's (a
// script its composite steps run) and needs a glob written for it.
func MayChange(taskScope, p, read string, actionDirs map[string]bool) (Guarded, bool) {
	g := GuardOf(read)
	if g.Guard == Unguarded {
		if d := innermost(p, actionDirs); d != "" {
			g = Guarded{Guard: GuardFolder, Dir: d, What: "a local action's file"}
			return g, scope.Targets(taskScope, d, p)
		}
	}
	switch g.Guard {
	case GuardName:
		return g, scope.Names(taskScope, p)
	case GuardFolder:
		g.Dir = RealDir(p, read, g.Dir)
		return g, scope.Targets(taskScope, g.Dir, p)
	}
	return g, true
}

// RealDir is where dir, a folder of read (a name GitHub reads p by),
// lies for p: the same folder when read is p, else the part of p that
// stands for it.
func RealDir(p, read, dir string) string {
	if p == read {
		return dir
	}
	rest := strings.TrimPrefix(read, dir)
	if real, ok := strings.CutSuffix(p, rest); ok && real != "" {
		return real
	}
	return path.Dir(p)
}

// innermost is the deepest folder of dirs that holds p, as p spells it,
// or "". Folders are compared whatever their case: a macOS or Windows
// runner finds docker/ci for a workflow's `uses: ./Docker/CI`.
func innermost(p string, dirs map[string]bool) string {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if dirs[d] {
			return d
		}
		for k := range dirs {
			if strings.EqualFold(k, d) {
				return d
			}
		}
	}
	return ""
}

// ConfigTasks lists the tasks, in plan order, whose scope may change
// configuration GitHub acts on beyond workflow files (WorkflowTasks) and
// planex's settings (SettingsTasks): a glob written for ActionsDir, an
// action definition's file name, or a CODEOWNERS or Dependabot file,
// .gitmodules or .lfsconfig named. A glob written for another folder that holds an action.yml
// (ci/build/** with ci/build/action.yml) may change that action too,
// which the plan alone cannot tell.
func ConfigTasks(tasks []Task) []string {
	var out []string
	for _, t := range tasks {
		if mayChangeConfig(t.Scope) {
			out = append(out, t.ID)
		}
	}
	return out
}

func mayChangeConfig(taskScope string) bool {
	if scope.TargetsDir(taskScope, ActionsDir) {
		return true
	}
	for _, p := range slices.Concat(codeOwners, dependabot, []string{".gitmodules", ".lfsconfig"}) {
		if scope.Names(taskScope, p) {
			return true
		}
	}
	for _, g := range scope.Split(taskScope) {
		if IsActionFile(path.Base(g)) {
			return true
		}
	}
	return false
}

// windowsName is the name a Windows checkout writes p under: Windows
// drops a name's trailing dots and spaces, so ".lfsconfig." is the
// .lfsconfig git and Git LFS read from a Windows runner's work tree.
func windowsName(p string) string { return strings.TrimRight(p, ". ") }

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// UsedActionDirs lists the folders of the repository that a workflow (or
// an action's definition) text runs as local actions: each `uses: ./dir`
// step, the root (`./`) and reusable workflows in WorkflowsDir left out.
// The runner takes such a folder for an action whatever its definition
// is: action.yml or action.yaml, or with neither a Dockerfile (or
// dockerfile) alone, which it builds and runs with what the step hands
// it. So a folder named here is a local action's, scripts and all, even
// when it holds no file of ActionFiles. A step may first check the
// repository out into a folder (actions/checkout's `path: sub`) and then
// run `uses: ./sub/tools/deploy`: for a folder under a `path:` the text
// names, the folder of the repository it stands for (tools/deploy) is
// listed too. The text is read as YAML (anchors, aliases and flow style
// included) and line by line; a reference leaving the repository (../)
// is not a folder of it.
func UsedActionDirs(text []byte) []string {
	var out []string
	add := func(d string) {
		if d != "." && !outside(d) && !InWorkflows(d) && !oneOf(d, out) {
			out = append(out, d)
		}
	}
	checkouts := CheckoutPaths(text)
	for _, d := range localUses(text) {
		add(d)
		for _, c := range checkouts {
			if rest, ok := strings.CutPrefix(d, c+"/"); ok {
				add(rest)
			}
		}
	}
	return out
}

// UsesRoot says whether the text runs the repository's root as a local
// action (`uses: ./`), whose definition (or, without one, its Dockerfile)
// the runner reads at the root.
func UsesRoot(text []byte) bool {
	return oneOf(".", localUses(text))
}

// CheckoutPaths lists the folders of the workspace a text names with a
// `path:` key (actions/checkout's, among others), as repository paths.
func CheckoutPaths(text []byte) []string {
	var out []string
	for _, v := range yamlValues(text, "path") {
		d := path.Clean(strings.TrimPrefix(v, "./"))
		if d != "." && !outside(d) && !path.IsAbs(d) && !strings.Contains(d, "${{") && !oneOf(d, out) {
			out = append(out, d)
		}
	}
	return out
}

// ActionImage is the file a Docker action's definition builds its image
// from (`image: Dockerfile`), relative to the action's folder, or "" for
// an image from a registry (`docker://…`) or no image.
func ActionImage(text []byte) string {
	for _, v := range yamlValues(text, "image") {
		if v == "" || strings.Contains(v, "://") {
			continue
		}
		return path.Clean(strings.TrimPrefix(v, "./"))
	}
	return ""
}

// localUses lists the `uses: ./…` references of a text, cleaned ("." for
// the root).
func localUses(text []byte) []string {
	var out []string
	for _, v := range yamlValues(text, "uses") {
		if rest, ok := strings.CutPrefix(v, "./"); ok {
			out = append(out, path.Clean(rest))
		}
	}
	return out
}

// outside says whether a cleaned relative path leaves the repository.
func outside(d string) bool { return d == ".." || strings.HasPrefix(d, "../") }

// yamlValues lists the values of a key in a YAML text: those its YAML
// gives (nodeValues) first, then those read line by line (lineValues),
// which a text that is not YAML, or not all of it, still gives.
func yamlValues(text []byte, key string) []string {
	return append(nodeValues(text, key), lineValues(text, key)...)
}

// maxYAMLDocuments bounds the documents nodeValues reads of one text.
const maxYAMLDocuments = 64

// nodeValues lists the scalar values of a key in a YAML text as GitHub
// reads it: in a flow mapping (`- {uses: ./x}`), a key spaced from its
// colon, a value folded onto the next line, tagged or anchored
// (`uses: &a ./x`), or an alias of a scalar anchored anywhere
// (`uses: *a`). An alias is never walked into (the anchored node is read
// where it stands), so a text of nested aliases costs no more than its
// length. The documents before one that is not YAML are read.
func nodeValues(text []byte, key string) []string {
	var out []string
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for range maxYAMLDocuments {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return out // io.EOF, or a document that is not YAML
		}
		out = appendNodeValues(out, &doc, key)
	}
	return out
}

// appendNodeValues appends to out the scalar values of key in n and the
// nodes under it.
func appendNodeValues(out []string, n *yaml.Node, key string) []string {
	if n.Kind == yaml.AliasNode {
		return out
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if k.Kind == yaml.ScalarNode && k.Value == key && v.Kind == yaml.ScalarNode {
				out = append(out, strings.TrimSpace(v.Value))
			}
		}
	}
	for _, c := range n.Content {
		out = appendNodeValues(out, c, key)
	}
	return out
}

// lineValues lists the values of a key in a YAML text, read line by line
// as YAML writes a plain or quoted scalar after the key (in a list item
// or not, the key plain or quoted), its comment and quotes removed.
func lineValues(text []byte, key string) []string {
	var out []string
	for _, line := range strings.Split(string(text), "\n") {
		l := strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		l = strings.TrimSpace(strings.TrimPrefix(l, "-"))
		var v string
		ok := false
		for _, k := range []string{key + ":", `"` + key + `":`, "'" + key + "':"} {
			if rest, found := strings.CutPrefix(l, k); found {
				v, ok = rest, true
			}
		}
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out = append(out, v)
	}
	return out
}
