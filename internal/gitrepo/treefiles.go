package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrTreeFileNotRegular is returned for a work tree holding, under a
// name git reads rules from (.gitignore, .gitattributes, .gitmodules),
// something that is neither a regular file, a folder nor a link.
var ErrTreeFileNotRegular = errors.New("a file git reads rules from is not a regular file")

// treeRuleFiles are the names git opens in a work tree's folders to read
// rules. It opens them without following a link, but a FIFO it opens and
// waits on, and its clean leaves a FIFO in place.
var treeRuleFiles = map[string]bool{".gitignore": true, ".gitattributes": true, ".gitmodules": true}

// specialRuleFiles walks the work tree at dir (not into any .git) and
// lists each FIFO, socket or device under a name of treeRuleFiles, and
// each nested .git whose repository checkRepoAt refuses. A contained
// agent, which writes its worktree, left a FIFO named
// .gitignore: the snapshot's `git add` opened it and waited for a writer
// that never came, and the run hung; one named .gitattributes hung the
// reset's checkout for the next task; a sub/.git/HEAD FIFO hung the
// snapshot's `git add`, which reads the nested repository's head.
func specialRuleFiles(ctx context.Context, dir string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // git reports what it cannot read
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.Name() == ".git" && filepath.Dir(p) != dir {
			// A folder made a repository of its own: git reads its
			// HEAD, branch, config and commondir to record it as a
			// gitlink, and its clean to tell it is one.
			if checkRepoAt(ctx, filepath.Dir(p)) != nil {
				found = append(found, p)
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if treeRuleFiles[d.Name()] && d.Type()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0 {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checking the work tree %s: %w", dir, err)
	}
	return found, nil
}

// refuseSpecialRuleFiles fails (ErrTreeFileNotRegular, naming the first)
// when the work tree at dir holds a specialRuleFiles entry.
func refuseSpecialRuleFiles(ctx context.Context, dir string) error {
	found, err := specialRuleFiles(ctx, dir)
	if err != nil || len(found) == 0 {
		return err
	}
	rel, _ := filepath.Rel(dir, found[0])
	if filepath.Base(rel) == ".git" {
		return fmt.Errorf("%w: %s holds a git file that is not a regular file; remove it", ErrTreeFileNotRegular, filepath.ToSlash(rel))
	}
	return fmt.Errorf("%w: %s is not a regular file; remove it", ErrTreeFileNotRegular, filepath.ToSlash(rel))
}

// removeSpecialRuleFiles deletes every specialRuleFiles entry of the work
// tree at dir.
func removeSpecialRuleFiles(ctx context.Context, dir string) error {
	found, err := specialRuleFiles(ctx, dir)
	for _, p := range found {
		remove := os.Remove
		if filepath.Base(p) == ".git" {
			remove = os.RemoveAll // a nested repository's state
		}
		if rerr := remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", p, rerr)
		}
	}
	return err
}
