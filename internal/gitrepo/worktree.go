package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/safefile"
)

// WorktreeDir is where planex keeps a task's linked worktree: outside the
// repository and its git directory (agents' tools refuse to write under
// .git, and nothing an agent writes may land in the user's checkout), in a
// per-repository folder under TempDir (or the OS temp dir) that only
// this user may enter. The path is stable, so an interrupted run's
// worktree is found and replaced; it is one level deep, so that tasks
// starting and finishing side by side share no folder but that one.
func (r *Repo) WorktreeDir(session, task string) string {
	return filepath.Join(r.worktreeBase(), pathSafe(session)+"."+pathSafe(task))
}

// pathSafe keeps a name to one harmless path element.
func pathSafe(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, s)
}

func (r *Repo) worktreeBase() string {
	tmp := r.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	sum := sha256.Sum256([]byte(r.CommonDir))
	return filepath.Join(tmp, "planex-"+hex.EncodeToString(sum[:6]))
}

// privateDir creates dir with mode 0700, or makes sure an existing one is
// a real directory of this user's that nobody else can write, not
// something planted in a shared temp dir (safefile.PrivateDir); one that
// others may only read is restricted to 0700.
func privateDir(dir string) error {
	if err := safefile.PrivateDir(dir); err != nil {
		return fmt.Errorf("refusing to use %s for worktrees: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("restricting %s: %w", dir, err)
		}
	}
	return nil
}

// AddWorktree creates a detached linked worktree at dir checked out at
// commit, replacing a stale one left by an interrupted run.
func (r *Repo) AddWorktree(ctx context.Context, dir, commit string) error {
	// The shared temp dir's folder is checked before anything in it is
	// removed: a link planted in its place would lead the removal of a
	// stale worktree into another folder.
	base := r.worktreeBase()
	if within(base, dir) {
		if err := privateDir(base); err != nil {
			return err
		}
	}
	if err := r.RemoveWorktree(ctx, dir); err != nil {
		return err
	}
	if !within(base, dir) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return fmt.Errorf("creating worktree parent: %w", err)
		}
	}
	unlock, err := r.lockWorktrees(ctx)
	if err != nil {
		return fmt.Errorf("creating worktree for %s: %w", filepath.Base(dir), err)
	}
	if err := revisions(commit); err != nil {
		return fmt.Errorf("adding a worktree: %w", err)
	}
	_, err = r.Git(ctx, "", "worktree", "add", "--detach", "--force", dir, commit)
	unlock()
	if err != nil {
		return fmt.Errorf("creating worktree for %s: %w", filepath.Base(dir), err)
	}
	admin, err := r.worktreeGitDir(dir)
	if err != nil {
		return fmt.Errorf("creating worktree for %s: %w", filepath.Base(dir), err)
	}
	if err := cleanWorktreeConfig(ctx, r, admin); err != nil {
		return fmt.Errorf("creating worktree for %s: %w", filepath.Base(dir), err)
	}
	// No agent has run in it yet: its index is planex's, and becomes the
	// private index the worktree is snapshot and reset through.
	if err := copyFile(filepath.Join(admin, "index"), indexFile(dir)); err != nil {
		return fmt.Errorf("creating worktree for %s: %w", filepath.Base(dir), err)
	}
	if err := dropStaleIndexLock(dir); err != nil {
		return fmt.Errorf("creating worktree for %s: %w", filepath.Base(dir), err)
	}
	return nil
}

// cleanWorktreeConfig rewrites the config.worktree of the linked
// worktree whose admin directory is admin as a contained agent may read
// it (AgentConfigOf): with extensions.worktreeConfig set, `git worktree
// add` copies the main worktree's config.worktree into the new one, with
// whatever credential `git config --worktree` left there, and the task's
// agent reads its own admin directory. The file, made after the sandbox's
// overlays were chosen, is planex's; what git needs of it stays.
func cleanWorktreeConfig(ctx context.Context, r *Repo, admin string) error {
	file := filepath.Join(admin, "config.worktree")
	fi, err := os.Lstat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", file)
	}
	cfg, err := AgentConfigOf(ctx, r, file)
	if err != nil {
		return err
	}
	return safefile.Write(file, cfg, fi.Mode().Perm())
}

// indexFile is the private index planex keeps for the worktree at dir:
// beside it, in planex's own folder, where a contained agent (which may
// write only its worktree) cannot reach it. It always describes the
// commit planex last checked the worktree out at, with the stat data git
// needs to find what changed since without reading every file.
func indexFile(dir string) string { return dir + ".index" }

// dropStaleIndexLock removes the lock of the private index of the
// worktree at dir: a git planex's stop killed while it staged the task
// (SIGTERM, Ctrl-C) leaves it, and every later git on that index would
// fail. Only called where no git uses the index (the worktree is being
// made or reset), so a lock found there is a dead process's.
func dropStaleIndexLock(dir string) error {
	if err := os.Remove(indexFile(dir) + ".lock"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing a stopped run's index lock: %w", err)
	}
	return nil
}

// copyFile writes a copy of src at dst, replacing (never following)
// whatever is there.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("copying the index: %w", err)
	}
	tmp := dst + ".tmp"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safefile.NoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("copying the index: %w", err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, dst)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("copying the index: %w", werr)
	}
	return nil
}

// ResetWorktree moves a worktree made by AddWorktree to commit for the
// next task, as a fresh one would be: tracked files as committed, nothing
// untracked or ignored left, its .git file pointing at its own admin
// directory again. Only files that differ are rewritten, which is what
// makes keeping worktrees between tasks cheap in a large repository. Git
// never writes through a symlink the agent left in place of a folder.
// On an error the caller replaces the worktree (AddWorktree).
func (r *Repo) ResetWorktree(ctx context.Context, dir, commit string) error {
	admin, err := r.worktreeGitDir(dir)
	if err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("resetting worktree %s: not a directory", filepath.Base(dir))
	}
	idx := indexFile(dir)
	if fi, err := os.Lstat(idx); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("resetting worktree %s: no private index", filepath.Base(dir))
	}
	if err := dropStaleIndexLock(dir); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	dotGit := filepath.Join(dir, ".git")
	if err := removeAll(dotGit); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	if err := os.WriteFile(dotGit, []byte("gitdir: "+admin+"\n"), 0o644); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	env := append([]string{"GIT_DIR=" + admin, "GIT_WORK_TREE=" + dir, "GIT_INDEX_FILE=" + idx}, statEnv()...)
	// Submodule folders (gitlinks): the snapshot records a repository the
	// agent made as one, and git's clean and checkout never enter them.
	links, err := gitlinks(ctx, r, dir, env)
	if err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	// Everything untracked or ignored goes first: git's checkout honours
	// a .gitattributes it finds in the working tree (line endings, an
	// encoding), so one the last agent left, even a failed task's, would
	// re-encode what this checkout writes for the next task.
	// git's clean leaves a FIFO, and its checkout waits on one named
	// .gitattributes.
	if err := removeSpecialRuleFiles(ctx, dir); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	if _, err := r.git(ctx, dir, env, "clean", "-q", "-f", "-f", "-d", "-x"); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	if _, err := r.git(ctx, dir, env, "checkout", "-q", "-f", "--detach", commit); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	kept, err := gitlinks(ctx, r, dir, env)
	if err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	if err := emptySubmoduleFolders(dir, links, kept); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	// A forced checkout removes what the old base tracked and the new one
	// does not, changed or not: nothing untracked is left.
	// The agent's own git in the worktree sees the same index.
	if err := copyFile(idx, filepath.Join(admin, "index")); err != nil {
		return fmt.Errorf("resetting worktree %s: %w", filepath.Base(dir), err)
	}
	return nil
}

// emptySubmoduleFolders leaves every submodule folder of a reset worktree
// as `git worktree add` makes it: an empty folder where the commit holds
// a submodule (kept), nothing where only the last task's snapshot did
// (was). Git never enters them, so what the last agent put there (a
// repository of its own, files in a submodule no one checked out) would
// otherwise be in the next task's worktree. A link on the way fails the
// reset, and the caller makes the worktree anew.
func emptySubmoduleFolders(dir string, was, kept map[string]bool) error {
	for _, set := range []map[string]bool{was, kept} {
		for rel := range set {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if !within(dir, p) || p == dir {
				return fmt.Errorf("submodule path %q leaves the worktree", rel)
			}
			for q := filepath.Dir(p); q != dir; q = filepath.Dir(q) {
				if fi, err := os.Lstat(q); err == nil && !fi.IsDir() {
					return fmt.Errorf("%s, above submodule %s, is not a folder", q, rel)
				}
			}
			if err := removeAll(p); err != nil {
				return fmt.Errorf("emptying submodule folder %s: %w", rel, err)
			}
			if kept[rel] {
				if err := os.MkdirAll(p, 0o755); err != nil {
					return fmt.Errorf("making submodule folder %s: %w", rel, err)
				}
			}
		}
	}
	return nil
}

// statEnv makes git judge a file unchanged from its index entry only on
// full stat data, ctime included (which no process without the right to
// set the clock can restore after a write), whatever the repository's
// config says; and keeps no cache of untracked folders between calls.
func statEnv() []string {
	return []string{"GIT_CONFIG_PARAMETERS='core.trustctime=true' 'core.checkstat=default' 'core.untrackedcache=false' 'core.splitindex=false'"}
}

// RemoveWorktree deletes a linked worktree and its administrative files.
// It works from the admin entries in the common git directory, never from
// the worktree's .git file (the agent could have rewritten it), and runs
// no git at all.
func (r *Repo) RemoveWorktree(ctx context.Context, dir string) error {
	if base := r.worktreeBase(); within(base, dir) {
		if _, err := os.Lstat(base); err == nil {
			if err := privateDir(base); err != nil {
				return err
			}
		}
	}
	admins, err := r.adminDirsFor(dir)
	if err != nil {
		return err
	}
	if err := removeAll(dir); err != nil {
		return fmt.Errorf("removing worktree %s: %w", dir, err)
	}
	if err := os.Remove(indexFile(dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing worktree %s: %w", dir, err)
	}
	if len(admins) == 0 {
		return nil
	}
	// The admin entries go under the worktree lock, so that no `git
	// worktree add` reads one half-deleted.
	unlock, err := r.lockWorktrees(ctx)
	if err != nil {
		return fmt.Errorf("removing worktree %s: %w", dir, err)
	}
	defer unlock()
	for _, a := range admins {
		if err := os.RemoveAll(a); err != nil {
			return fmt.Errorf("removing worktree %s: %w", dir, err)
		}
	}
	// The repository folder stays: removing it while another task is
	// creating its worktree there would race.
	return nil
}

// within reports whether p lies strictly below dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// removeAll deletes dir even when an agent took the write bit off
// directories inside it.
func removeAll(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// maxGitdirFile bounds what is read of a worktree's gitdir file: one
// path.
const maxGitdirFile = 64 << 10

// adminDirsFor finds the admin directories (<common>/worktrees/<name>)
// that git keeps for a worktree at dir, by their gitdir files.
func (r *Repo) adminDirsFor(dir string) ([]string, error) {
	want := sameFile(filepath.Join(dir, ".git"))
	root := filepath.Join(r.CommonDir, "worktrees")
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", root, err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		// A FIFO there is refused, not waited on.
		b, err := safefile.ReadRegular(filepath.Join(root, e.Name(), "gitdir"), maxGitdirFile)
		if err != nil {
			continue
		}
		if sameFile(strings.TrimSpace(string(b))) == want {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	return out, nil
}

// maxOtherWorktrees bounds how many of the repository's worktrees
// OtherWorktrees reads.
const maxOtherWorktrees = 1024

// OtherWorktrees lists the work trees of the repository other than the
// one r works in and planex's own task worktrees: the main work tree
// (the folder holding the common git directory, when it is named .git)
// and the linked worktrees the user made (git worktree add), each found
// from its gitdir file under <common>/worktrees/. Their git-ignored
// files (a .env, keys) are not the checkout's, which planex lists and
// hides; a contained agent found each such work tree's path there and
// read them where they lie outside the hidden home and temporary
// folders. Paths are as git recorded them, cleaned; one that no longer
// exists is left out.
func OtherWorktrees(r *Repo) []string {
	here := filepath.Clean(r.Root)
	base := r.worktreeBase()
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || p == here || p == base || within(base, p) || slices.Contains(out, p) {
			return
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	if filepath.Base(r.CommonDir) == ".git" {
		add(filepath.Dir(r.CommonDir))
	}
	root := filepath.Join(r.CommonDir, "worktrees")
	f, err := os.Open(root)
	if err != nil {
		return out
	}
	ents, _ := f.ReadDir(maxOtherWorktrees)
	f.Close()
	for _, e := range ents {
		b, err := safefile.ReadRegularNoFollow(filepath.Join(root, e.Name(), "gitdir"), 4096)
		if err != nil {
			continue
		}
		if p := strings.TrimSpace(string(b)); filepath.Base(p) == ".git" {
			add(filepath.Dir(p))
		}
	}
	return out
}

// sameFile makes two spellings of a path comparable: the directory part
// resolved through symlinks (temp dirs often are one), the name kept.
func sameFile(p string) string {
	p = filepath.Clean(p)
	if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(d, filepath.Base(p))
	}
	return p
}

// worktreeGitDir is the admin directory of the linked worktree at dir,
// found from the common git directory. planex's git on a task worktree
// uses it explicitly: the worktree's .git file is the agent's to rewrite.
func (r *Repo) worktreeGitDir(dir string) (string, error) {
	admins, err := r.adminDirsFor(dir)
	if err != nil {
		return "", err
	}
	if len(admins) != 1 {
		return "", fmt.Errorf("%s is not a worktree of %s (%d admin entries)", dir, r.CommonDir, len(admins))
	}
	return admins[0], nil
}

// tempIndex returns the path of an index file in a fresh private directory
// and a function that removes it.
func tempIndex() (string, func(), error) {
	dir, err := os.MkdirTemp("", "planex-index-")
	if err != nil {
		return "", nil, fmt.Errorf("creating a temporary index: %w", err)
	}
	return filepath.Join(dir, "index"), func() { os.RemoveAll(dir) }, nil
}

// Change is one path a task changed, as git plumbing sees it.
type Change struct {
	Path string
	Mode string // "000000" for a deletion
	Blob string
}

// Snapshot records everything in the worktree at dir (respecting
// .gitignore) as a tree and returns it with the paths that differ from
// base. It trusts nothing in the worktree but its files: the git
// directory is the worktree's admin entry in the common directory, and
// the index is planex's private one (see indexFile), describing base when
// the worktree was made or reset there, never the worktree's own. Only
// files whose stat data changed are read again. Without a private index
// it starts from base's tree and reads every file.
func (r *Repo) Snapshot(ctx context.Context, dir, base string) (tree string, changes []Change, err error) {
	admin, err := r.worktreeGitDir(dir)
	if err != nil {
		return "", nil, fmt.Errorf("staging task changes: %w", err)
	}
	idx := indexFile(dir)
	if fi, serr := os.Lstat(idx); serr != nil || !fi.Mode().IsRegular() {
		tmp, done, err := tempIndex()
		if err != nil {
			return "", nil, err
		}
		defer done()
		idx = tmp
		if _, err := r.git(ctx, dir, []string{"GIT_DIR=" + admin, "GIT_WORK_TREE=" + dir, "GIT_INDEX_FILE=" + idx}, "read-tree", base+"^{tree}"); err != nil {
			return "", nil, fmt.Errorf("staging task changes: %w", err)
		}
	}
	if err := refuseSpecialRuleFiles(ctx, dir); err != nil {
		return "", nil, fmt.Errorf("staging task changes: %w", err)
	}
	env := append([]string{"GIT_DIR=" + admin, "GIT_WORK_TREE=" + dir, "GIT_INDEX_FILE=" + idx}, statEnv()...)
	if _, err := r.git(ctx, dir, env, "add", "--all", "--", "."); err != nil {
		return "", nil, fmt.Errorf("staging task changes: %w", err)
	}
	out, err := r.git(ctx, dir, env, "write-tree")
	if err != nil {
		return "", nil, fmt.Errorf("writing task tree: %w", err)
	}
	tree = strings.TrimSpace(out)
	changes, err = r.DiffTrees(ctx, base, tree)
	return tree, changes, err
}

// Paths returns the paths of changes.
func Paths(changes []Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Path
	}
	return out
}

// CommitChanges applies changes on top of parent's tree and records a
// commit with message, without touching any working tree or index the
// user can see. It returns the new commit.
func (r *Repo) CommitChanges(ctx context.Context, parent string, changes []Change, message string) (string, error) {
	tree, err := treeWith(ctx, r, parent, changes)
	if err != nil {
		return "", err
	}
	return r.CommitTree(ctx, parent, tree, message)
}

// treeWith writes the tree changes give on top of parent's tree in r,
// without touching any working tree or index the user can see, and
// returns it.
func treeWith(ctx context.Context, r *Repo, parent string, changes []Change) (string, error) {
	idx, done, err := tempIndex()
	if err != nil {
		return "", err
	}
	defer done()
	env := []string{"GIT_INDEX_FILE=" + idx}
	if _, err := r.git(ctx, r.Root, env, "read-tree", parent+"^{tree}"); err != nil {
		return "", fmt.Errorf("loading parent tree: %w", err)
	}
	var info strings.Builder
	for _, c := range changes {
		if c.Mode == "000000" {
			fmt.Fprintf(&info, "0 %s\t%s\x00", r.format.Zero(), c.Path)
		} else {
			fmt.Fprintf(&info, "%s %s\t%s\x00", c.Mode, c.Blob, c.Path)
		}
	}
	if _, err := r.gitIn(ctx, r.Root, env, []byte(info.String()), "update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("applying task changes: %w", err)
	}
	out, err := r.git(ctx, r.Root, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("writing tree: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// CommitTree records tree as a commit on top of parent with message. A
// task snapshotted against parent commits its snapshot's tree this way:
// the same tree CommitChanges would build from parent and the snapshot's
// changes, without the three git processes that build it.
func (r *Repo) CommitTree(ctx context.Context, parent, tree, message string) (string, error) {
	out, err := r.gitIn(ctx, r.Root, nil, []byte(message), "commit-tree", tree, "-p", parent, "-F", "-")
	if err != nil {
		return "", fmt.Errorf("creating commit: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// TreeOf returns the tree of a commit, given as its full object id
// (ErrNotObjectID, ErrNotCommit): a name or a tag's id was read as
// whatever it leads to.
func (r *Repo) TreeOf(ctx context.Context, commit string) (string, error) {
	// The tree is the commit's first header; a long message is cut.
	out, _, err := readCommit(ctx, r, commit, 4<<10)
	if err != nil {
		return "", fmt.Errorf("reading the tree of commit %s: %w", abbrev.Truncate(commit, 80), err)
	}
	line, _, _ := strings.Cut(out, "\n")
	tree, ok := strings.CutPrefix(line, "tree ")
	if !ok || !r.format.IsID(tree) {
		return "", fmt.Errorf("reading the tree of commit %s: no tree header", commit)
	}
	return tree, nil
}

// ReadBlob returns the content of a blob.
func (r *Repo) ReadBlob(ctx context.Context, sha string) ([]byte, error) {
	out, err := r.Git(ctx, "", "cat-file", "blob", sha)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", sha, err)
	}
	return []byte(out), nil
}

// StreamBlobs hands each blob to fn as a reader of its content, read by
// one `git cat-file --batch`, without holding any blob in memory: what
// fn leaves unread is skipped. fn may not keep the reader.
func (r *Repo) StreamBlobs(ctx context.Context, shas []string, fn func(sha string, content io.Reader) error) error {
	if len(shas) == 0 {
		return nil
	}
	var in strings.Builder
	for _, sha := range shas {
		if !r.format.IsID(sha) {
			return fmt.Errorf("reading blobs: %q is not an object id (this repository's are %d hex digits)", sha, r.format.HexLen())
		}
		in.WriteString(sha + "\n")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd, done, err := command(ctx, call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config,
		stdin: []byte(in.String()), args: []string{"cat-file", "--batch"}, scans: r.scans})
	if err != nil {
		return fmt.Errorf("reading blobs: %w", err)
	}
	defer done()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("reading blobs: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("reading blobs: %w", err)
	}
	readErr := readBatch(bufio.NewReaderSize(out, 64<<10), shas, fn)
	if readErr != nil {
		cancel()
	}
	waitErr := cmd.Wait()
	switch {
	case readErr != nil:
		return readErr
	case waitErr != nil:
		return fmt.Errorf("reading blobs: git cat-file: %v: %s", waitErr, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// readBatch reads `git cat-file --batch` output for shas, in order.
func readBatch(br *bufio.Reader, shas []string, fn func(string, io.Reader) error) error {
	for _, want := range shas {
		header, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading blobs: truncated output")
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" || f[0] != want {
			return fmt.Errorf("reading blobs: not a blob: %q", strings.TrimSpace(header))
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("reading blobs: bad size in %q", strings.TrimSpace(header))
		}
		body := io.LimitReader(br, size)
		if err := fn(want, body); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, body); err != nil {
			return fmt.Errorf("reading blobs: %w", err)
		}
		if b, err := br.ReadByte(); err != nil || b != '\n' {
			return fmt.Errorf("reading blobs: truncated output")
		}
	}
	return nil
}
