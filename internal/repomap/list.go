package repomap

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// gitInfo describes the repository around root, when there is one.
type gitInfo struct {
	topLevel  string // absolute work-tree root
	prefix    string // root relative to topLevel ("" or "sub/dir/")
	commonDir string // absolute git common dir
	index     string // absolute path of the work tree's index file
}

// runGit runs git with planex's protections (gitrepo), so mapping a
// repository never runs a program its config or attributes name.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitrepo.Output(ctx, dir, args...)
}

// findGit returns nil (and no error) when root is not inside a work tree or
// git is not installed: the map then falls back to walking the directory.
func findGit(ctx context.Context, root string) *gitInfo {
	out, err := runGit(ctx, root, "rev-parse", "--show-toplevel", "--show-prefix", "--git-common-dir", "--git-path", "index")
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 4 || lines[0] == "" {
		return nil
	}
	g := &gitInfo{topLevel: lines[0], prefix: lines[1], commonDir: lines[2], index: lines[3]}
	for _, p := range []*string{&g.commonDir, &g.index} {
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
		*p = filepath.Clean(*p)
	}
	return g
}

// listGit lists tracked and untracked-but-not-ignored files under root,
// relative to root (tracked ones alone when trackedOnly). git already
// applies every .gitignore, info/exclude and the global excludes file,
// and reads the index instead of the disk.
func listGit(ctx context.Context, root string, trackedOnly bool) ([]string, error) {
	which := "-co"
	if trackedOnly {
		which = "-c"
	}
	var files []string
	budget := newListingBudget()
	err := listRecords(ctx, root, nil, []string{"-c", "core.quotepath=off", "ls-files", which, "--exclude-standard", "-z", "--deduplicate"}, func(p []byte) error {
		if len(p) == 0 {
			return nil
		}
		name := string(p)
		files = append(files, name)
		return budget.take(name)
	})
	if err != nil {
		return nil, fmt.Errorf("listing files: %w", err)
	}
	return files, nil
}

// listWalk walks root applying .gitignore files (nested ones scoped to their
// directory) and .git/info/exclude, for directories that are not work trees.
func listWalk(ctx context.Context, root string) ([]string, error) {
	ig := gitrepo.NewIgnorer(root, filepath.Join(root, ".git", "info", "exclude"))
	var files []string
	budget := newListingBudget()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			// Unreadable directories are skipped, not fatal.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (vendoredDir(d.Name()) || ig.Ignored(rel, true)) {
				return fs.SkipDir
			}
			return nil
		}
		if ig.Ignored(rel, false) {
			return nil
		}
		files = append(files, rel)
		return budget.take(rel)
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	return files, nil
}
