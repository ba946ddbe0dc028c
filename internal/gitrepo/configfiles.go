package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrConfigNotAFile is returned for a call whose configuration names, as
// a config file git reads (the repository's own, its worktree's, or one
// they include), something that exists and is not a regular file.
var ErrConfigNotAFile = errors.New("a config file git reads is not a regular file")

// maxIncludeDepth is how deep includes are followed, as git does (it
// refuses more).
const maxIncludeDepth = 10

// maxConfigPeek is how much of a config file is read to see whether it
// may include another; a larger one is asked of git.
const maxConfigPeek = 1 << 20

// checkConfigFiles refuses (ErrConfigNotAFile) the config files git reads
// for a call, files (configFiles), when one exists and is not a regular
// file, nor is any file they include. git opens each and waits, whatever
// it is: a git-directory writer's include.path (or includeIf) naming a
// FIFO, or a FIFO in place of the config, hung every git planex ran. A
// file that holds no "include" (in any case) includes nothing and is
// read no further; one that does has its include paths listed by a `git
// config --file --no-includes`, which opens that file alone.
//
// It also returns the filter, diff and merge drivers the included files
// name, whatever the include's condition: a git the call starts may meet
// a condition the call itself does not (`git worktree add` checks the
// new worktree out in a child git whose git directory is the worktree's
// own, so an `includeIf "gitdir:**/worktrees/**"` hid a filter from the
// scan and the child ran it). Switching off a driver git does not use is
// harmless.
//
// What each file includes is remembered in scans (when not nil) while the
// file keeps its device, inode, size and times (configStamp): a
// repository with includes would otherwise run one more git on every
// call. Whether each file is regular is looked at every time.
func checkConfigFiles(ctx context.Context, scans *scanCache, files []string) (map[string][]string, error) {
	w := includeWalk{scans: scans, drivers: map[string][]string{}, depth: map[string]int{}}
	for _, f := range files {
		if err := w.check(ctx, f, 0); err != nil {
			return nil, err
		}
	}
	return w.drivers, nil
}

// includeWalk is one scan of the files a call's config includes: the
// drivers they name, and the least depth each file was reached at. A
// file is followed again only when reached less deep (its includes may
// then reach further before git's limit): an include cycle, which git
// follows only when its condition holds and refuses past the limit, made
// every file in it scanned once for each path to it, up to n^10 times
// for a file including itself n times.
type includeWalk struct {
	scans   *scanCache
	drivers map[string][]string
	depth   map[string]int
}

func (w *includeWalk) check(ctx context.Context, file string, depth int) error {
	if d, seen := w.depth[file]; seen && d <= depth {
		return nil
	}
	w.depth[file] = depth
	if err := ctx.Err(); err != nil && depth > 0 {
		// (A call's own files are left to it: its git names itself
		// cancelled.)
		return fmt.Errorf("checking %s: %w", file, err)
	}
	info, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%w: %s: %w", ErrConfigNotAFile, file, err)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%w: %s is a %v; remove it", ErrConfigNotAFile, file, info.Mode().Type())
	case depth >= maxIncludeDepth:
		return nil // git refuses the include itself
	}
	e, err := w.scans.includesOf(ctx, file, depth > 0)
	if err != nil {
		return err
	}
	for kind, names := range e.drivers {
		for _, n := range names {
			if !slices.Contains(w.drivers[kind], n) {
				w.drivers[kind] = append(w.drivers[kind], n)
			}
		}
	}
	for _, p := range e.paths {
		if err := w.check(ctx, p, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// includesOf is what the regular config file at file includes, and when
// it is itself included, the drivers it names; from s while the file is
// unchanged.
func (s *scanCache) includesOf(ctx context.Context, file string, included bool) (includeEntry, error) {
	stamp, stable := configStamp([]string{file}, time.Now())
	if s != nil && stable {
		s.mu.Lock()
		e, hit := s.includes[file]
		s.mu.Unlock()
		if hit && e.stamp == stamp && e.included == included {
			return e, nil
		}
	}
	e := includeEntry{stamp: stamp, included: included}
	words := [][]byte{[]byte("include")}
	if included {
		words = append(words, []byte("filter"), []byte("diff"), []byte("merge"))
	}
	may, err := mayInclude(file, words...)
	if err == nil && may {
		e.paths, e.drivers, err = includePaths(ctx, file)
	}
	if !included {
		e.drivers = nil // the call's own scan reads this file
	}
	if err != nil || s == nil || !stable {
		return e, err
	}
	s.mu.Lock()
	if s.includes == nil || len(s.includes) >= maxScans {
		s.includes = map[string]includeEntry{}
	}
	s.includes[file] = e
	s.mu.Unlock()
	return e, nil
}

// includeEntry is what a config file included, and the drivers it named,
// when it had stamp.
type includeEntry struct {
	stamp    string
	included bool
	paths    []string
	drivers  map[string][]string
}

// mayInclude says whether the regular file at path holds one of words
// (lower case) in any case (so may hold an include directive or name a
// driver), reading at most maxConfigPeek bytes (a longer file may).
func mayInclude(path string, words ...[]byte) (bool, error) {
	// Made a FIFO since it was looked at, it is not waited on.
	f, err := openRegular(path)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrConfigNotAFile, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigPeek+1))
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > maxConfigPeek {
		return true, nil
	}
	lower := bytes.ToLower(b)
	return slices.ContainsFunc(words, func(w []byte) bool { return bytes.Contains(lower, w) }), nil
}

// includePaths lists the files the config file at path includes
// (include.path and includeIf.<condition>.path, whatever the condition),
// as git resolves them: ~ expanded, a relative path taken from path's
// folder; and the filter, diff and merge drivers it names.
func includePaths(ctx context.Context, path string) ([]string, map[string][]string, error) {
	c := call{dir: string(filepath.Separator), args: []string{"config", "--file", path, "--no-includes", "-z", "--type=path",
		"--get-regexp", `^(include(if\..*)?\.path|(filter|diff|merge)\..+\.[^.]+)$`}}
	out, err := run(ctx, c)
	if err != nil {
		if strings.TrimSpace(out) == "" && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			// No such key (exit 1) or a file git cannot parse: git's own
			// call reports the latter.
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("listing the includes of %s: %w", path, err)
	}
	var paths []string
	drivers := map[string][]string{}
	for _, entry := range strings.Split(out, "\x00") {
		key, value, ok := strings.Cut(entry, "\n")
		if m := driverKey.FindStringSubmatch(key); m != nil {
			if !slices.Contains(drivers[m[1]], m[2]) {
				drivers[m[1]] = append(drivers[m[1]], m[2])
			}
			continue
		}
		if !ok || value == "" {
			continue
		}
		if !filepath.IsAbs(value) {
			value = filepath.Join(filepath.Dir(path), value)
		}
		paths = append(paths, value)
	}
	return paths, drivers, nil
}

// ErrGitDirFileNotRegular is returned for a call whose git directory
// holds, where git reads a file of its own (packed-refs, HEAD, the
// index, info/exclude, shallow, objects/info/alternates, …), something
// that exists and is not a regular file.
var ErrGitDirFileNotRegular = errors.New("a file of the git directory is not a regular file")

// commonDirFiles and gitDirFiles are the files git opens by name in the
// common and the worktree's git directory: each one a FIFO made git wait
// for ever (packed-refs: every ref read; shallow, alternates: every log;
// info/exclude: every status).
var (
	commonDirFiles = []string{"packed-refs", "shallow", "info/exclude", "info/attributes", "info/sparse-checkout", filepath.Join("objects", "info", "alternates"), filepath.Join("objects", "info", "http-alternates")}
	gitDirFiles    = []string{"HEAD", "index", "commondir", "info/sparse-checkout", "config.worktree"}
)

// checkGitDirFiles refuses (ErrGitDirFileNotRegular) a call whose git
// directories (GIT_DIR, GIT_COMMON_DIR in c's environment) or index
// (GIT_INDEX_FILE) hold a file git opens by name that exists and is not
// a regular file: whoever could write the git directory made it a FIFO,
// and every git planex ran waited on it. Only what c names is looked at.
func checkGitDirFiles(ctx context.Context, c call) error {
	var gitDir, commonDir, index string
	for _, kv := range c.env {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR":
			gitDir = value
		case "GIT_COMMON_DIR":
			commonDir = value
		case "GIT_INDEX_FILE":
			index = value
		}
	}
	var files []string
	if commonDir != "" {
		for _, f := range commonDirFiles {
			files = append(files, filepath.Join(commonDir, filepath.FromSlash(f)))
		}
	}
	if gitDir != "" {
		for _, f := range gitDirFiles {
			if f != "index" || index == "" {
				files = append(files, filepath.Join(gitDir, filepath.FromSlash(f)))
			}
		}
	}
	if index != "" {
		files = append(files, index)
	}
	for _, f := range files {
		if info, err := os.Stat(f); err == nil && !info.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is a %v; remove it", ErrGitDirFileNotRegular, f, info.Mode().Type())
		}
	}
	err := checkGitDirTrees(ctx, c.scans, gitDir, commonDir)
	if err != nil && ctx.Err() != nil {
		// Cut short by ctx: named as the git it was for.
		err = fmt.Errorf("git %s: %w", strings.Join(c.args, " "), err)
	}
	return err
}

// checkGitDirTrees walks the common git directory and, when another,
// the worktree's (checkGitDirTree).
func checkGitDirTrees(ctx context.Context, s *scanCache, gitDir, commonDir string) error {
	if commonDir != "" {
		if err := checkGitDirTree(ctx, s, commonDir, true); err != nil {
			return err
		}
	}
	if gitDir != "" && filepath.Clean(gitDir) != filepath.Clean(commonDir) {
		return checkGitDirTree(ctx, s, gitDir, false)
	}
	return nil
}
