package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/safefile"
)

// maxGitFile bounds what is read of a .git file or a commondir file: one
// path.
const maxGitFile = 64 << 10

// checkDiscovered looks, before the first git Open runs in dir, at the
// files git reads to find the repository there: the .git folder, or the
// folder a .git file names, its commondir file, and the config files and
// named files of both (checkConfigFiles, checkGitDirFiles). That git
// names no git directory, so the checks every later call makes do not
// apply to it: a FIFO as the repository's config or commondir, or a
// commondir linked to /dev/zero, made it wait (or read) until its context
// ended. What cannot be made out is left to git, which reports it.
func checkDiscovered(ctx context.Context, dir string) error {
	root := discoverRoot(dir)
	if root == "" {
		return nil
	}
	return checkRepoAt(ctx, root)
}

// checkRepoAt makes checkDiscovered's checks on the repository whose
// work tree is root, found by its .git folder or file.
func checkRepoAt(ctx context.Context, root string) error {
	gitDir := filepath.Join(root, ".git")
	info, err := os.Stat(gitDir)
	if err != nil {
		return nil
	}
	if info.Mode().IsRegular() {
		b, err := safefile.ReadRegular(gitDir, maxGitFile)
		if err != nil {
			return nil // git refuses it itself
		}
		named, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return nil
		}
		gitDir = strings.TrimSpace(named)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(root, gitDir)
		}
	}
	commonDir := gitDir
	common := filepath.Join(gitDir, "commondir")
	if _, err := os.Stat(common); !errors.Is(err, fs.ErrNotExist) {
		b, err := safefile.ReadRegular(common, maxGitFile)
		if err != nil {
			return errors.Join(ErrGitDirFileNotRegular, err)
		}
		commonDir = strings.TrimSpace(string(b))
		if !filepath.IsAbs(commonDir) {
			commonDir = filepath.Join(gitDir, commonDir)
		}
	}
	if _, err := checkConfigFiles(ctx, nil, []string{filepath.Join(commonDir, "config"), filepath.Join(gitDir, "config.worktree")}); err != nil {
		return err
	}
	return checkGitDirFiles(ctx, call{env: []string{"GIT_DIR=" + gitDir, "GIT_COMMON_DIR=" + commonDir}})
}

// checkWorkTree refuses a work tree git reports (top) that is not the
// folder holding the .git git found from dir: core.worktree in the
// configuration moves it to any folder, and planex would take that folder
// for the checkout (the ignored files it hides from agents, the changes
// it reports) while its tasks start from the checkout's commits. A git directory kept apart (git init
// --separate-git-dir, a submodule's) names the folder of its .git file,
// which passes. Where no .git is found, git's answer stands.
func checkWorkTree(dir, top string) error {
	found := discoverRoot(dir)
	if found == "" {
		return nil
	}
	a, err := os.Stat(found)
	if err != nil {
		return nil // git found the repository some other way
	}
	if b, err := os.Stat(top); err == nil && os.SameFile(a, b) {
		return nil
	}
	return fmt.Errorf("git works on %s, not on %s where it found .git (core.worktree in the repository's configuration; remove it: git config --unset core.worktree): %w", top, found, ErrWorkTreeElsewhere)
}
