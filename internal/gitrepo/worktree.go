package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// WorktreeDir is where planex keeps a task's linked worktree: inside the
// git directory, never in the user's working tree.
func (r *Repo) WorktreeDir(session, task string) string {
	return filepath.Join(r.CommonDir, "planex", "worktrees", session, task)
}

// AddWorktree creates a detached linked worktree at dir checked out at
// commit, replacing a stale one left by an interrupted run.
func (r *Repo) AddWorktree(ctx context.Context, dir, commit string) error {
	if _, err := os.Stat(dir); err == nil {
		if err := r.RemoveWorktree(ctx, dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("creating worktree parent: %w", err)
	}
	if _, err := r.Git(ctx, "", "worktree", "add", "--detach", "--force", dir, commit); err != nil {
		return fmt.Errorf("creating worktree for %s: %w", filepath.Base(dir), err)
	}
	return nil
}

// RemoveWorktree deletes a linked worktree and its administrative files.
func (r *Repo) RemoveWorktree(ctx context.Context, dir string) error {
	if _, err := r.Git(ctx, "", "worktree", "remove", "--force", dir); err != nil {
		// Half-created worktrees are not known to git; remove by hand.
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			return fmt.Errorf("removing worktree %s: %w", dir, rmErr)
		}
		r.Git(ctx, "", "worktree", "prune")
	}
	return nil
}

// Change is one path a task changed, as git plumbing sees it.
type Change struct {
	Path string
	Mode string // "000000" for a deletion
	Blob string
}

// Snapshot stages everything in a worktree (respecting .gitignore) and
// returns the resulting tree and the paths that differ from base.
func (r *Repo) Snapshot(ctx context.Context, dir, base string) (tree string, changes []Change, err error) {
	if _, err := r.Git(ctx, dir, "add", "--all", "--", "."); err != nil {
		return "", nil, fmt.Errorf("staging task changes: %w", err)
	}
	out, err := r.Git(ctx, dir, "write-tree")
	if err != nil {
		return "", nil, fmt.Errorf("writing task tree: %w", err)
	}
	tree = strings.TrimSpace(out)
	changes, err = r.DiffTrees(ctx, base, tree)
	return tree, changes, err
}

// DiffTrees lists the paths that differ between two tree-ish objects.
func (r *Repo) DiffTrees(ctx context.Context, from, to string) ([]Change, error) {
	out, err := r.Git(ctx, "", "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", from, to)
	if err != nil {
		return nil, fmt.Errorf("comparing trees: %w", err)
	}
	// Records: ":oldmode newmode oldsha newsha status\0path\0".
	parts := strings.Split(out, "\x00")
	var changes []Change
	for i := 0; i+1 < len(parts); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(parts[i], ":"))
		if len(meta) < 5 {
			continue
		}
		changes = append(changes, Change{Path: parts[i+1], Mode: meta[1], Blob: meta[3]})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
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
	idx, err := os.CreateTemp(r.CommonDir, "planex-index-")
	if err != nil {
		return "", fmt.Errorf("creating temporary index: %w", err)
	}
	idx.Close()
	os.Remove(idx.Name()) // git wants to create it itself
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := r.git(ctx, r.Root, env, "read-tree", parent+"^{tree}"); err != nil {
		return "", fmt.Errorf("loading parent tree: %w", err)
	}
	var info strings.Builder
	for _, c := range changes {
		if c.Mode == "000000" {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), c.Path)
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
	tree := strings.TrimSpace(out)
	out, err = r.gitIn(ctx, r.Root, nil, []byte(message), "commit-tree", tree, "-p", parent, "-F", "-")
	if err != nil {
		return "", fmt.Errorf("creating commit: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// TreeOf returns the tree of a commit.
func (r *Repo) TreeOf(ctx context.Context, commit string) (string, error) {
	out, err := r.Git(ctx, "", "rev-parse", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
