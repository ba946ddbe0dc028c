package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/safefile"
)

// errEnoughIgnored stops the listing once more than the caller's bound
// was read.
var errEnoughIgnored = errors.New("enough ignored entries")

// Ignored lists the git-ignored files and folders of r's checkout, as
// absolute paths, a folder whose whole content is ignored once (git's
// --directory). It reads at most max+1 entries; more reports that the
// checkout holds more than max, and paths then holds only the first max.
func Ignored(ctx context.Context, r *Repo, max int) (paths []string, more bool, err error) {
	return others(ctx, r, max, true)
}

// Untracked lists every file and folder of r's checkout that git does not
// track, ignored or not, like Ignored. In CI the checkout is fresh, so
// what is untracked there was put by the workflow's earlier steps (a
// cloud login's credentials file at the workspace's root, say), not by
// the user.
func Untracked(ctx context.Context, r *Repo, max int) (paths []string, more bool, err error) {
	return others(ctx, r, max, false)
}

// maxSubmoduleDepth bounds how deep submodules of submodules are
// listed.
const maxSubmoduleDepth = 8

func others(ctx context.Context, r *Repo, max int, ignoredOnly bool) (paths []string, more bool, err error) {
	env := append(r.gitEnv(r.Root), r.env...)
	config := r.config
	// planex's git reads no global config, where users name their own
	// excludes file (core.excludesFile): what it ignores is the user's
	// local files as much as what .gitignore names. It is read by a
	// `git config` that runs nothing, or remembered (userExcludesFile).
	excludes, err := userExcludesFile(ctx, r, env)
	own := []string{filepath.Join(r.CommonDir, "info", "exclude")}
	if err == nil {
		if file := regularExcludesFile(excludes, r.Root, os.Getenv); file != "" {
			config = append(append([]setting(nil), r.config...), setting{"core.excludesFile", file})
			own = append(own, file)
		}
	}
	top := level{c: call{dir: r.Root, env: env, config: config, scans: r.scans}, cache: r.listing, index: filepath.Join(r.gitDir, "index")}
	if ignoredOnly {
		top.patterns = ownPatterns(own)
	}
	paths, more, err = othersBelow(ctx, top, max, ignoredOnly, 0)
	if err != nil {
		return nil, false, fmt.Errorf("listing the checkout's untracked files: %w", err)
	}
	return paths, more, nil
}

// regularExcludesFile is the excludes file git would read for value (a
// core.excludesFile, "" for none set: git's default place,
// $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore), relative paths
// taken from root, or "" when that is not a regular file. planex's git
// is told to read no other (protections): git opens the file and waits,
// whatever it is, and a git-directory writer's FIFO there hung every
// listing, status and snapshot.
func regularExcludesFile(value, root string, getenv func(string) string) string {
	if value == "" {
		switch {
		case getenv("XDG_CONFIG_HOME") != "":
			value = filepath.Join(getenv("XDG_CONFIG_HOME"), "git", "ignore")
		case getenv("HOME") != "":
			value = filepath.Join(getenv("HOME"), ".config", "git", "ignore")
		default:
			return ""
		}
	}
	if !filepath.IsAbs(value) {
		value = filepath.Join(root, value)
	}
	if info, err := os.Stat(value); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	return value
}

// level is one repository of the listing: the checkout, or a submodule
// or nested repository in it.
type level struct {
	c call
	// cache and index (the index file c reads) keep c's gitlinks while
	// the index is unchanged; the checkout's only (nil and "" below it).
	cache *listingCache
	index string
	// patterns are the user's own ignore patterns (ownPatterns), given
	// to git above every .gitignore.
	patterns []string
}

// Bounds of the user's own patterns held above the repository's.
const (
	maxOwnPatternFile = 1 << 20
	maxOwnPatterns    = 1000
)

// ownPatterns are the patterns of the user's own ignore files (the
// git directory's info/exclude, the global excludes file) that ignore
// something, at most maxOwnPatterns. A .gitignore outranks those files
// in git's order, so a repository committing `!.env` or `!*.pem` made
// the user's ignored .env and keys untracked work, shown to contained
// agents; the same patterns given on the command line (`-x`) outrank
// every .gitignore. A pattern that un-ignores (`!…`) is left out: the
// user's own exceptions then hide a little more, never less. A file
// that cannot be read, or is larger than maxOwnPatternFile, gives none
// (git still reads it in its place).
func ownPatterns(files []string) []string {
	var out []string
	for _, f := range files {
		data, err := safefile.ReadRegular(f, maxOwnPatternFile)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = trimPatternSpaces(strings.TrimSuffix(line, "\r"))
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			if len(out) == maxOwnPatterns {
				return out
			}
			out = append(out, line)
		}
	}
	return out
}

// trimPatternSpaces drops a pattern's trailing spaces but one escaped
// with a backslash, as git does reading an ignore file (it does not for
// a pattern given with -x).
func trimPatternSpaces(p string) string {
	for strings.HasSuffix(p, " ") && !strings.HasSuffix(p, "\\ ") {
		p = p[:len(p)-1]
	}
	return p
}

// othersBelow lists what c's work tree (c.dir, its top level) holds
// untracked (ignoredOnly: and ignored), then the same in each checked-out
// submodule and (ignoredOnly) each untracked nested repository, whose
// files git leaves out of the listing (their own .env), down to
// maxSubmoduleDepth.
func othersBelow(ctx context.Context, l level, max int, ignoredOnly bool, depth int) (paths []string, more bool, err error) {
	c := l.c
	args := []string{"ls-files", "-z", "--others", "--directory"}
	if ignoredOnly {
		args = append(args, "--ignored", "--exclude-standard")
		for _, p := range l.patterns {
			args = append(args, "-x", p)
		}
	}
	list := c
	list.args = args
	err = stream(ctx, list, func(out io.Reader) error {
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 0, 64<<10), 64<<10)
		s.Split(splitNUL)
		for s.Scan() {
			if len(paths) == max {
				more = true
				return errEnoughIgnored
			}
			rel := strings.TrimSuffix(s.Text(), "/")
			if rel == "" {
				continue
			}
			paths = append(paths, filepath.Join(c.dir, filepath.FromSlash(rel)))
		}
		return s.Err()
	})
	if err != nil && !errors.Is(err, errEnoughIgnored) {
		return nil, false, err
	}
	if more || depth == maxSubmoduleDepth {
		return paths, more, nil
	}
	subs, err := checkedOutSubmodules(ctx, l)
	if err != nil {
		return nil, false, err
	}
	if ignoredOnly {
		// A repository of its own in an untracked folder (a project
		// cloned inside the checkout) is listed whole as untracked work,
		// its ignored files with it; the Action's listing covers it whole.
		nested, err := nestedRepositories(ctx, c)
		if err != nil {
			return nil, false, err
		}
		subs = append(subs, nested...)
	}
	for _, sub := range subs {
		// The submodule's own repository, found from its folder (its .git
		// is git's, made by `git submodule update` in the user's checkout);
		// none of the superproject's GIT_DIR and the like. Its work tree
		// is its folder: a core.worktree in its configuration had git
		// list another folder's files in its place.
		inner := level{c: call{dir: sub, env: []string{"GIT_WORK_TREE=" + sub}, config: c.config}, patterns: l.patterns}
		found, subMore, err := othersBelow(ctx, inner, max-len(paths), ignoredOnly, depth+1)
		if err != nil {
			return nil, false, fmt.Errorf("submodule %s: %w", sub, err)
		}
		paths = append(paths, found...)
		if subMore {
			return paths, true, nil
		}
	}
	return paths, false, nil
}

// nestedRepositories are the untracked, not ignored, folders of c's work
// tree, at any depth, that hold a .git of their own (git lists them and
// does not descend into them).
func nestedRepositories(ctx context.Context, c call) ([]string, error) {
	list := c
	// Without --directory git names each untracked file, but stops at a
	// folder holding a repository: "clones/other/". Only those are kept.
	list.args = []string{"ls-files", "-z", "--others", "--exclude-standard"}
	var out []string
	err := stream(ctx, list, func(r io.Reader) error {
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 0, 64<<10), 64<<10)
		s.Split(splitNUL)
		for s.Scan() {
			rel, isDir := strings.CutSuffix(s.Text(), "/")
			if !isDir || rel == "" {
				continue
			}
			dir := filepath.Join(c.dir, filepath.FromSlash(rel))
			if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
				out = append(out, dir)
			}
		}
		return s.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing nested repositories: %w", err)
	}
	return out, nil
}

// checkedOutSubmodules are the folders of l's work tree where the index
// holds a submodule (a gitlink) that is checked out: a real folder with a
// .git of its own.
func checkedOutSubmodules(ctx context.Context, l level) ([]string, error) {
	links, err := gitlinkPaths(ctx, l.c, l.cache, l.index)
	if err != nil {
		return nil, err
	}
	var subs []string
	for _, rel := range links {
		dir := filepath.Join(l.c.dir, filepath.FromSlash(rel))
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
			continue // not checked out: nothing in it
		}
		subs = append(subs, dir)
	}
	return subs, nil
}

// listGitlinks reads the paths of c's index's gitlinks.
func listGitlinks(ctx context.Context, c call) ([]string, error) {
	stage := c
	stage.args = []string{"ls-files", "-z", "--stage"}
	var links []string
	err := stream(ctx, stage, func(out io.Reader) error {
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 0, 64<<10), 64<<10)
		s.Split(splitNUL)
		for s.Scan() {
			meta, rel, ok := strings.Cut(s.Text(), "\t")
			if ok && strings.HasPrefix(meta, "160000 ") {
				links = append(links, rel)
			}
		}
		return s.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing submodules: %w", err)
	}
	return links, nil
}

// splitNUL splits git's -z output at its NUL bytes.
func splitNUL(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
