// Package execute carries out one task in isolation: a private worktree at
// the run branch's tip, the agent, the checks planex makes itself (scope,
// "no changes", execution directives), and the task's changes ready to be
// committed. It also turns a finished task into its commit on the branch.
package execute

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os/exec"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/proc"
	"github.com/planexhq/planex/internal/scope"
)

// Repo is what a task needs from git.
type Repo interface {
	WorktreeDir(session, task string) string
	AddWorktree(ctx context.Context, dir, commit string) error
	RemoveWorktree(ctx context.Context, dir string) error
	ResetWorktree(ctx context.Context, dir, commit string) error
	Snapshot(ctx context.Context, dir, base string) (string, []gitrepo.Change, error)
	SymlinkEscapes(ctx context.Context, tree string, changes []gitrepo.Change) ([]string, error)
	Tree(tree string) gitrepo.TreeView
	CommitChanges(ctx context.Context, parent string, changes []gitrepo.Change, message string) (string, error)
	CommitTree(ctx context.Context, parent, tree, message string) (string, error)
	UpdateBranch(ctx context.Context, branch, newSHA, oldSHA, reason string) error
	StreamBlobs(ctx context.Context, shas []string, fn func(sha string, content io.Reader) error) error
}

// Runner runs tasks.
type Runner struct {
	Repo  Repo
	Agent agent.Agent
	// Contain holds the directives as it holds the agent: they run code
	// the agent wrote.
	Contain agent.Containment
	// DirectiveTimeout bounds the execution directives (default 10 min).
	DirectiveTimeout time.Duration
	Log              *slog.Logger
	// Publisher, when set, makes each task's commit on the remote
	// (commit-signing: api); the local branch then takes the remote's
	// commit.
	Publisher Publisher

	// Worktrees are kept between tasks and reset to the next task's base
	// (far cheaper than a new one in a large repository) until Close.
	mu   sync.Mutex
	free map[string][]string // by session
	kept []string
	// checked holds the commits Recheck built for outcomes it let
	// through on a newer tip, by the tip and the changes (checkedKey):
	// Commit commits such a commit's tree instead of building it again.
	checked map[string]string
}

// maxChecked bounds Runner.checked: when full, it is emptied.
const maxChecked = 64

// Publisher recreates a local commit on the remote: the same tree and
// message on top of parent, the remote branch moved from parent to it.
// It returns the remote's commit, present locally.
type Publisher interface {
	Publish(ctx context.Context, branch, parent, commit string) (string, error)
}

// Job is one task to run.
type Job struct {
	Task    plan.Task
	Base    string // commit the worktree starts from
	Prompt  string
	Session string
	// Board is the session's discoveries.ndjson: the agent writes to a file
	// of its own, whose valid lines are added here after the step.
	Board   string
	Timeout time.Duration
	// Directives are run after the agent; empty means trust the agent's
	// own tests_passed.
	Directives string
	// Limit is what the task's step may spend (agent.Step.Limit).
	Limit agent.Limit
}

// Outcome is what became of a task.
type Outcome struct {
	ID            string
	Status        plan.Status
	Findings      string
	AcceptanceMet string
	TestsPassed   plan.TestResult
	Error         string
	Changes       []gitrepo.Change
	Usage         agent.Usage
	// NetworkRefused lists what the egress proxy refused the task's
	// processes (egress.Format).
	NetworkRefused string

	// tree is the snapshot the checks passed, base the commit Changes
	// are against: a commit on base is tree itself (Changes are every
	// path in which the two differ), so Commit need not rebuild it.
	tree, base string
}

// Files lists the paths the task changed.
func (o Outcome) Files() []string { return gitrepo.Paths(o.Changes) }

// Run carries out one task. It never returns an error: every failure is
// an Outcome with the reason, so it is always reported, with the network
// destinations its processes were refused.
func (r *Runner) Run(ctx context.Context, j Job) Outcome {
	var refused egress.Log
	out := r.run(agent.WithEgressLog(ctx, &refused), j)
	out.NetworkRefused = egress.Format(refused.Refusals())
	return out
}

func (r *Runner) run(ctx context.Context, j Job) Outcome {
	out := Outcome{ID: j.Task.ID, Status: plan.StatusFailed}
	secrets := r.Contain.Secrets()
	// What the agent's tooling reported (permission denials, refusals)
	// explains a failure planex finds afterwards, so it goes with it.
	var problems []string
	fail := func(format string, args ...any) Outcome {
		out.Status = plan.StatusFailed
		msg := fmt.Sprintf(format, args...)
		if len(problems) > 0 {
			msg += " (the agent reported: " + strings.Join(problems, "; ") + ")"
		}
		// Directive output (a test runner's colours) is text from outside;
		// a secret an agent got hold of is never stored.
		out.Error = abbrev.Truncate(agent.Redact(agent.CleanText(msg), secrets), 1000)
		out.Changes = nil
		return out
	}
	wt, err := r.worktree(ctx, j)
	if err != nil {
		return fail("preparing worktree: %v", err)
	}
	defer r.release(j.Session, wt)

	res, err := agent.RunStep(ctx, r.Agent, agent.Step{
		Phase: agent.PhaseExecute, ID: j.Task.ID, Prompt: j.Prompt, Dir: wt,
		Scope: j.Task.Scope, Timeout: j.Timeout, Limit: j.Limit,
	}, j.Board, r.log())
	out.Usage = res.Usage
	problems = res.Problems
	// Which MCP tools the agent used, and that its output was cut, belong
	// with what it found, in the task's row and the report.
	var note string
	if len(res.MCPCalls) > 0 {
		note = abbrev.Truncate("MCP tools called: "+strings.Join(res.MCPCalls, ", ")+".", 300)
	}
	if res.OutputDropped > 0 {
		note = strings.TrimSpace(note + fmt.Sprintf(" The agent's output was cut: planex kept only its end (%d bytes were dropped).", res.OutputDropped))
	}
	out.Findings = note
	if err != nil {
		return fail("%v", err)
	}
	var er agent.ExecuteResult
	if err := agent.Decode(agent.PhaseExecute, res.Raw, &er); err != nil {
		return fail("%v", err)
	}
	out.Findings = abbrev.Truncate(agent.Redact(strings.TrimSpace(er.Findings), secrets), 500-len(note))
	if note != "" {
		out.Findings = strings.TrimSpace(out.Findings + " " + note)
	}
	out.AcceptanceMet = er.AcceptanceMet
	if er.ID != "" && er.ID != j.Task.ID {
		r.log().Warn("agent reported another task id", "task", j.Task.ID, "reported", er.ID)
	}

	// What the agent says it changed is a claim; the worktree is the fact.
	tree, changes, err := r.Repo.Snapshot(ctx, wt, j.Base)
	if err != nil {
		return fail("reading the task's changes: %v", err)
	}
	if why := r.refuseChanges(ctx, j.Task.Scope, j.Base, tree, changes, secrets); why != "" {
		return fail("%s", why)
	}
	if er.Status != string(plan.StatusCompleted) {
		msg := strings.TrimSpace(er.Error)
		if msg == "" {
			msg = "the agent reported the task as " + er.Status
		}
		out.TestsPassed = plan.ClaimedFrom(er.TestsPassed)
		return fail("%s", msg)
	}
	if len(changes) == 0 {
		return fail("no changes: the agent reported success but changed no file")
	}
	out.Changes, out.tree, out.base = changes, tree, j.Base
	// Without directives planex checks nothing: the agent's word stays a
	// claim, shown as such in the report.
	out.TestsPassed = plan.ClaimedFrom(er.TestsPassed)
	if strings.TrimSpace(j.Directives) != "" {
		if err := r.checkoutSnapshot(ctx, wt, j, tree); err != nil {
			return fail("preparing the worktree for the execution directives: %v", err)
		}
		if derr := r.runDirectives(ctx, wt, j.Directives); derr != nil {
			out.TestsPassed = plan.TestsFail
			return fail("execution directives failed: %v", derr)
		}
		out.TestsPassed = plan.TestsPass
	}
	if !out.TestsPassed.Passed() {
		return fail("tests did not pass (reported by the agent)")
	}
	out.Status = plan.StatusCompleted
	return out
}

// refuseChanges holds a task's changes against the trust boundary
// whatever the agent reported: it says why they cannot be committed, or
// returns "" when they may.
func (r *Runner) refuseChanges(ctx context.Context, taskScope, base, tree string, changes []gitrepo.Change, secrets map[string]string) string {
	// A committed link out of the repository would hand whoever checks
	// the branch out (or a later step) a path to files elsewhere.
	escapes, err := r.Repo.SymlinkEscapes(ctx, tree, changes)
	if err != nil {
		return fmt.Sprintf("checking the task's symlinks: %v", err)
	}
	if len(escapes) > 0 {
		return fmt.Sprintf("symlinks point outside the repository: %s", strings.Join(escapes, ", "))
	}
	if bad := scope.Outside(taskScope, gitrepo.Paths(changes)); len(bad) > 0 {
		return fmt.Sprintf("wrote outside its scope %q: %s", taskScope, strings.Join(bad, ", "))
	}
	// A committed link (.github -> ci) makes GitHub read ci/workflows as
	// the repository's workflows: a change there is judged by that name.
	aliases, err := r.Repo.Tree(tree).ResolveFolders(ctx, plan.LinkedFolders)
	if err != nil {
		return fmt.Sprintf("checking where the repository's configuration folders lead: %v", err)
	}
	// A folder holding an action's definition is a local action a
	// workflow may run (uses: ./tools/deploy), scripts and all.
	actions, err := r.Repo.Tree(tree).FoldersHolding(ctx, gitrepo.Paths(changes), plan.IsActionFile)
	if err != nil {
		return fmt.Sprintf("checking which folders hold local actions: %v", err)
	}
	used, images, err := localActions(ctx, r.Repo.Tree(tree), aliases)
	if err != nil {
		return fmt.Sprintf("checking which folders the workflows run as local actions: %v", err)
	}
	for _, d := range used {
		actions[d] = true
	}
	if why := unnamedChanges(taskScope, changes, aliases, actions, images); why != "" {
		return why
	}
	// Even an agent that got hold of a secret (no sandbox) cannot have
	// planex commit and push it.
	leaks, err := r.leaks(ctx, changes, secrets)
	if err != nil {
		return fmt.Sprintf("checking the task's changes for secrets: %v", err)
	}
	if len(leaks) > 0 {
		return fmt.Sprintf("the changes contain secret values, so nothing was committed: %s", strings.Join(leaks, ", "))
	}
	imgs, err := r.outsideImages(ctx, base, changes)
	if err != nil {
		return fmt.Sprintf("checking the images the task's rendered files show: %v", err)
	}
	if len(imgs) > 0 {
		return fmt.Sprintf("adds images GitHub would fetch from hosts the contained network does not allow, when the file is viewed (an address can carry what the agent read): %s; "+
			"allow the host (--allow-host, the Action's allow-hosts) or use an image in the repository", strings.Join(imgs, ", "))
	}
	return ""
}

// Recheck holds the changes of an outcome another process made (a
// matrix task job's published commit, which whoever can push may have
// replaced) to everything Run holds an agent's changes to, on the tree
// they give on tip: the scope, links out of the repository, planex's
// settings file, CI configuration and gitlinks a wide scope does not
// name (unnamedChanges), and values planex holds. It says why they cannot be committed, or returns "" (as
// it does for an outcome Run made here and checked on tip already, and
// for one that did not complete). An outcome Run made on an older base is
// judged again on the tree it makes on tip.
func (r *Runner) Recheck(ctx context.Context, taskScope, tip string, o Outcome) string {
	if o.Status != plan.StatusCompleted || (o.tree != "" && o.base == tip) {
		return ""
	}
	secrets := r.Contain.Secrets()
	if o.tree != "" {
		// Run's own outcome, for a newer tip (a task beside it committed
		// first): what a file is (a local action's script, a workflow's
		// folder) depends on the tree the commit makes, so the checks run
		// again on it. Its blobs were scanned for held values already.
		secrets = nil
	}
	// The commit the changes make on tip, never a branch's: its tree is
	// what the checks read (git gc removes it if it is not committed).
	tree, err := r.Repo.CommitChanges(ctx, tip, o.Changes, "planex: checking "+o.ID)
	why := ""
	if err != nil {
		why = fmt.Sprintf("reading the task's changes: %v", err)
	} else {
		why = r.refuseChanges(ctx, taskScope, tip, tree, o.Changes, secrets)
	}
	if why == "" {
		r.noteChecked(tip, o.Changes, tree)
		return ""
	}
	return abbrev.Truncate(agent.Redact(agent.CleanText(why), secrets), 1000)
}

// localActions lists the folders the tree's workflows run as local
// actions (uses: ./docker/ci), read where the workflows folder leads
// (aliases): the runner runs one holding only a Dockerfile as well, so
// such a folder's files are a local action's although it holds no
// action.yml. The definitions of those actions, and of the repository's
// own action at its root, are read in turn: a composite action's steps
// run `uses: ./…` folders too, and a Docker action builds its image from
// the file its `image:` names, which may lie outside its folder (the
// root's Dockerfile, for the root's action); images lists those files,
// and the root's Dockerfile when a workflow runs the root (`uses: ./`),
// each also where its committed links lead. At most maxWorkflowFiles
// workflow files, maxActionFolders definitions' folders, and the first
// maxWorkflowBytes of each file are read; a tree with more workflow files
// or local actions, or a longer file, is refused, as what went unread
// would go unguarded.
func localActions(ctx context.Context, view gitrepo.TreeView, aliases map[string]string) (dirs, images []string, err error) {
	dir := plan.WorkflowsDir
	if to, ok := aliases[dir]; ok && to != "" {
		dir = to
	}
	files, err := view.FolderFiles(ctx, dir, maxWorkflowFiles, maxWorkflowBytes+1)
	if err == nil {
		err = readWhole(files)
	}
	if err != nil {
		return nil, nil, err
	}
	w := &actionWalk{view: view, seen: map[string]bool{".": true}, queue: []string{"."}}
	for _, body := range files {
		if err := w.add(ctx, body); err != nil {
			return nil, nil, err
		}
	}
	rootDefined := false
	for read := 0; read < len(w.queue); read++ {
		if read == maxActionFolders {
			// The folders past the bound would go unread, and what their
			// definitions run unguarded.
			return nil, nil, fmt.Errorf("the workflows use more than %d local actions (the root counted)", maxActionFolders)
		}
		folder := w.queue[read]
		defs, err := definitions(ctx, view, folder)
		if err != nil {
			return nil, nil, err
		}
		for _, body := range defs {
			rootDefined = rootDefined || folder == "."
			if err := w.add(ctx, body); err != nil {
				return nil, nil, err
			}
			if img := plan.ActionImage(body); img != "" {
				if p := path.Join(folder, img); p != ".." && !strings.HasPrefix(p, "../") && !slices.Contains(images, p) {
					images = append(images, p)
				}
			}
		}
	}
	if w.usesRoot && !rootDefined {
		images = append(images, "Dockerfile", "dockerfile")
	}
	if images, err = linkedImages(ctx, view, images); err != nil {
		return nil, nil, err
	}
	return w.dirs, images, nil
}

// definitions reads the definition of the action in folder (ActionFiles,
// in any case: a macOS or Windows runner finds Action.yml too), and where
// a committed link in its place leads: the runner reads the file the
// link names (action.yml -> ../../shared/action.yml), whose steps and
// image are then the action's.
func definitions(ctx context.Context, view gitrepo.TreeView, folder string) (map[string][]byte, error) {
	defs, links, err := view.NamedFiles(ctx, folder, plan.IsActionFile, maxWorkflowBytes+1)
	if err == nil {
		err = readWhole(defs)
	}
	if err != nil || len(links) == 0 {
		return defs, err
	}
	to, err := view.ResolveFolders(ctx, links)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, l := range links {
		if t, ok := to[l]; ok && t != "" {
			targets = append(targets, t)
		}
	}
	linked, err := view.ReadFiles(ctx, targets, maxWorkflowBytes+1)
	if err == nil {
		err = readWhole(linked)
	}
	if err != nil {
		return nil, err
	}
	maps.Copy(defs, linked)
	return defs, nil
}

// readWhole refuses files read up to maxWorkflowBytes+1 of which one is
// longer than maxWorkflowBytes: the runner reads a workflow or an
// action's definition whole, and what lies past the part read would go
// unguarded.
func readWhole(files map[string][]byte) error {
	for name, body := range files {
		if len(body) > maxWorkflowBytes {
			return fmt.Errorf("%s is larger than %d MiB, more than planex reads to check what it runs", name, maxWorkflowBytes>>20)
		}
	}
	return nil
}

// linkedImages is images with, for each that is a committed link (or lies
// under one), the file it leads to: the runner builds the image from
// there (Dockerfile -> ../../build/Dockerfile).
func linkedImages(ctx context.Context, view gitrepo.TreeView, images []string) ([]string, error) {
	to, err := view.ResolveFolders(ctx, images)
	if err != nil {
		return nil, err
	}
	for _, img := range images {
		if t, ok := to[img]; ok && t != "" && !slices.Contains(images, t) {
			images = append(images, t)
		}
	}
	return images, nil
}

// actionWalk is localActions' list of the folders used as local actions
// so far (dirs), and those whose definitions are still to read (queue).
type actionWalk struct {
	view     gitrepo.TreeView
	seen     map[string]bool
	dirs     []string
	queue    []string
	usesRoot bool
}

// add notes the folders a workflow's or a definition's text uses. The
// runner reads a folder where its links lead (docker/ci -> ../tools/ci),
// so the folder they lead to is the action's too.
func (w *actionWalk) add(ctx context.Context, text []byte) error {
	w.usesRoot = w.usesRoot || plan.UsesRoot(text)
	used := plan.UsedActionDirs(text)
	to, err := w.view.ResolveFolders(ctx, used)
	if err != nil {
		return err
	}
	for _, d := range used {
		names := []string{d}
		if t, ok := to[d]; ok {
			w.usesRoot = w.usesRoot || t == ""
			names = append(names, cmp.Or(t, "."))
		}
		for _, n := range names {
			if !w.seen[n] {
				w.seen[n] = true
				w.dirs, w.queue = append(w.dirs, n), append(w.queue, n)
			}
		}
	}
	return nil
}

// The bounds of what localActions reads of a repository's workflows and
// actions: well past what large monorepos keep (a few hundred workflows),
// since a tree past them fails every task; memory stays bounded by the
// 16 MiB FolderFiles reads in all.
const (
	maxWorkflowFiles = 1000
	maxActionFolders = 500
	maxWorkflowBytes = 1 << 20
)

// unnamedChanges refuses the changes a wide scope does not let through
// (plan.GuardOf): planex's settings file, CODEOWNERS and Dependabot's
// settings (a commit there widens what happens once merged), a file coding
// agents read as the repository's guidance (AGENTS.md, CLAUDE.md: every
// later agent on the branch obeys it; their settings folders need a glob
// written for the folder) and a gitlink
// (a submodule entry, which can point at any commit of any repository) at
// a path the task's scope does not name; a workflow file, a local action's
// file, an action's definition or any file in a folder holding one (a
// local action's script) without a glob written for its folder (they run
// on the push that adds them, before anyone has read them, with the
// secrets the workflow names). Each path is judged by every name
// GitHub reads it under (plan.ReadAs, through the links aliases holds).
// A link at .github, its workflows or actions folder or a guarded path is
// refused whatever the scope: it would move what GitHub reads out of the
// guarded names.
func unnamedChanges(taskScope string, changes []gitrepo.Change, aliases map[string]string, actions map[string]bool, images []string) string {
	var links, named []string
	folders := map[string][]string{}
	var dirs []string
	for _, c := range changes {
		for _, read := range plan.ReadAs(c.Path, aliases) {
			shown := c.Path
			if read != c.Path {
				shown += " (read by GitHub as " + read + ")"
			}
			if c.Mode == "120000" && plan.MayNotLink(read) {
				links = append(links, shown)
				continue
			}
			if slices.ContainsFunc(images, func(img string) bool { return strings.EqualFold(img, read) }) && !scope.Names(taskScope, c.Path) {
				named = append(named, "the file a local Docker action's image is built from, "+shown)
				continue
			}
			g, ok := plan.MayChange(taskScope, c.Path, read, actions)
			switch {
			case ok:
			case g.Guard == plan.GuardName:
				named = append(named, g.What+" "+shown)
			case g.Guard == plan.GuardFolder:
				if folders[g.Dir] == nil {
					dirs = append(dirs, g.Dir)
				}
				folders[g.Dir] = append(folders[g.Dir], g.What+" "+shown)
			}
		}
		if c.Mode == "160000" && !scope.Names(taskScope, c.Path) {
			named = append(named, "a submodule entry (gitlink) at "+c.Path)
		}
	}
	var why []string
	if len(links) > 0 {
		why = append(why, fmt.Sprintf("made %s a symbolic link, which would move what GitHub or a coding agent reads as the repository's configuration elsewhere; no task may", strings.Join(links, ", ")))
	}
	if len(named) > 0 {
		why = append(why, fmt.Sprintf("changed %s, which only a task whose scope names the path itself may change (scope %q)", strings.Join(named, ", "), taskScope))
	}
	for _, d := range dirs {
		why = append(why, fmt.Sprintf("changed %s, which only a task whose scope is written for %s/ may change (scope %q)", strings.Join(folders[d], ", "), d, taskScope))
	}
	return strings.Join(why, "; ")
}

// leaks names the changed files whose path or content holds the value of
// a secret (or a form of it, see agent.Matcher), each with the variables
// it belongs to (never the value); names first. Contents are streamed,
// so a file of any size costs a bounded amount of memory.
func (r *Runner) leaks(ctx context.Context, changes []gitrepo.Change, secrets map[string]string) ([]string, error) {
	if len(secrets) == 0 {
		return nil, nil
	}
	m := agent.NewMatcher(secrets)
	var inNames, inContent []string
	var shas []string
	paths := map[string][]string{}
	for _, c := range changes {
		if names := m.FindString(c.Path); len(names) > 0 {
			inNames = append(inNames, "the name of "+c.Path+" ("+strings.Join(names, ", ")+")")
		}
		if c.Mode != "000000" && c.Mode != "160000" { // a deletion or a submodule: no content of ours
			if paths[c.Blob] == nil {
				shas = append(shas, c.Blob)
			}
			paths[c.Blob] = append(paths[c.Blob], c.Path)
		}
	}
	err := r.Repo.StreamBlobs(ctx, shas, func(sha string, content io.Reader) error {
		names, err := m.Find(content)
		if len(names) > 0 {
			for _, p := range paths[sha] {
				inContent = append(inContent, p+" ("+strings.Join(names, ", ")+")")
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(inNames)
	sort.Strings(inContent)
	return append(inNames, inContent...), nil
}

// checkoutSnapshot makes the task's worktree hold exactly tree, the tree
// planex commits for it, before the execution directives run there:
// they vouch for that commit (the report's "passed", the review's "planex
// ran the tests"), so nothing the agent left uncommitted may take part.
// Files git ignores (the repository's rules, or a .gitignore that ignores
// itself) never reach the snapshot, its scope check or the commit, and a
// tests/conftest.py of that kind made failing tests pass on the agent's
// tree. The worktree is reset as for a next task (everything untracked or
// ignored removed), at a commit of tree on the task's base that no branch
// holds; the next task resets it again.
func (r *Runner) checkoutSnapshot(ctx context.Context, wt string, j Job, tree string) error {
	sha, err := r.Repo.CommitTree(ctx, j.Base, tree, "planex: testing "+j.Task.ID)
	if err != nil {
		return err
	}
	return r.Repo.ResetWorktree(ctx, wt, sha)
}

// runDirectives runs the task's verification commands as one shell
// script that stops at the first failing command.
func (r *Runner) runDirectives(ctx context.Context, dir, script string) error {
	timeout := r.DirectiveTimeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = dir
	cleanup, err := r.Contain.PrepareContext(ctx, cmd, nil, []string{dir}, []string{dir})
	if err != nil {
		return err
	}
	defer cleanup()
	// Only the end of the output is kept (and quoted): a test runner may
	// print without end.
	buf := proc.NewTail(64 << 10)
	cmd.Stdout = buf
	cmd.Stderr = buf
	err = proc.Run(ctx, cmd)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", timeout)
	}
	if err != nil {
		tail := strings.TrimSpace(buf.String())
		if len(tail) > 800 {
			tail = "…" + tail[len(tail)-800:]
		}
		if tail != "" {
			return fmt.Errorf("%v: %s", err, tail)
		}
		return err
	}
	return nil
}

// Commit records a completed task as one commit on top of tip and moves
// the branch there (compare-and-swap). It returns the new tip.
func (r *Runner) Commit(ctx context.Context, branch, tip, session string, t plan.Task, o Outcome) (string, error) {
	// The title comes from the plan, which an agent wrote: no value planex
	// holds goes into the message either.
	msg := agent.Redact(gitrepo.TaskMessage(session, t.ID, t.Title, o.Findings), r.Contain.Secrets())
	var sha string
	var err error
	if o.tree != "" && o.base == tip {
		sha, err = r.Repo.CommitTree(ctx, tip, o.tree, msg)
	} else if checked := r.takeChecked(tip, o.Changes); checked != "" {
		// The tree Recheck built from these changes on this tip.
		sha, err = r.Repo.CommitTree(ctx, tip, checked+"^{tree}", msg)
	} else {
		sha, err = r.Repo.CommitChanges(ctx, tip, o.Changes, msg)
	}
	if err != nil {
		return "", fmt.Errorf("committing %s: %w", t.ID, err)
	}
	if r.Publisher != nil {
		if sha, err = r.Publisher.Publish(ctx, branch, tip, sha); err != nil {
			return "", fmt.Errorf("committing %s through GitHub's API: %w", t.ID, err)
		}
	}
	if err := r.Repo.UpdateBranch(ctx, branch, sha, tip, "planex: "+t.ID); err != nil {
		return "", fmt.Errorf("committing %s: %w", t.ID, err)
	}
	return sha, nil
}

// checkedKey names changes applied on tip: Recheck's commit of them is
// Commit's tree.
func checkedKey(tip string, changes []gitrepo.Change) string {
	h := sha256.New()
	for _, c := range changes {
		fmt.Fprintf(h, "%s %s %s\x00", c.Mode, c.Blob, c.Path)
	}
	return tip + " " + hex.EncodeToString(h.Sum(nil))
}

// noteChecked keeps commit, which Recheck made of changes on tip and let
// through, for Commit.
func (r *Runner) noteChecked(tip string, changes []gitrepo.Change, commit string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checked == nil || len(r.checked) >= maxChecked {
		r.checked = map[string]string{}
	}
	r.checked[checkedKey(tip, changes)] = commit
}

// takeChecked returns (and forgets) the commit Recheck made of changes
// on tip, or "".
func (r *Runner) takeChecked(tip string, changes []gitrepo.Change) string {
	key := checkedKey(tip, changes)
	r.mu.Lock()
	defer r.mu.Unlock()
	commit := r.checked[key]
	delete(r.checked, key)
	return commit
}

// worktree returns a worktree at j.Base for j: a kept one of the
// session's reset there, or a new one. A kept one that cannot be reset
// (the agent may have left anything in it) is replaced.
func (r *Runner) worktree(ctx context.Context, j Job) (string, error) {
	r.mu.Lock()
	var wt string
	if free := r.free[j.Session]; len(free) > 0 {
		wt = free[len(free)-1]
		r.free[j.Session] = free[:len(free)-1]
	}
	r.mu.Unlock()
	if wt != "" {
		err := r.Repo.ResetWorktree(ctx, wt, j.Base)
		if err == nil {
			return wt, nil
		}
		r.log().Warn("replacing a kept worktree", "task", j.Task.ID, "err", err)
	} else {
		// Named after the first task it serves: unique across processes
		// running tasks of one session, and found again after a crash.
		wt = r.Repo.WorktreeDir(j.Session, j.Task.ID)
		r.mu.Lock()
		r.kept = append(r.kept, wt)
		r.mu.Unlock()
	}
	if err := r.Repo.AddWorktree(ctx, wt, j.Base); err != nil {
		return "", err
	}
	return wt, nil
}

func (r *Runner) release(session, wt string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.free == nil {
		r.free = map[string][]string{}
	}
	r.free[session] = append(r.free[session], wt)
}

// RemoveStale removes the worktrees a killed run of the session left
// behind: they are named after tasks (see worktree). Only for a run that
// holds the session alone: another process's task may be using one.
func (r *Runner) RemoveStale(ctx context.Context, session string, taskIDs []string) {
	for _, id := range taskIDs {
		wt := r.Repo.WorktreeDir(session, id)
		if err := r.Repo.RemoveWorktree(ctx, wt); err != nil {
			r.log().Warn("removing a worktree left behind", "dir", wt, "err", err)
		}
	}
}

// Close removes the worktrees kept between tasks. No task may be running.
func (r *Runner) Close(ctx context.Context) {
	r.mu.Lock()
	kept := r.kept
	r.kept, r.free = nil, nil
	r.mu.Unlock()
	// A fresh deadline: cleaning up must happen even after cancellation.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for _, wt := range kept {
		if err := r.Repo.RemoveWorktree(ctx, wt); err != nil {
			r.log().Warn("removing worktree", "dir", wt, "err", err)
		}
	}
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}
