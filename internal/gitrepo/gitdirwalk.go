package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A git directory holds files git finds by listing a folder or writes as
// it goes, besides those it opens by a fixed name (checkGitDirFiles): a
// loose ref (listing refs opens each one), a ref log (appended to on
// every ref update), FETCH_HEAD and ORIG_HEAD (written by a fetch and a
// reset), a pack's index (every object read lists the packs), another
// worktree's gitdir file (worktree add reads them all). A FIFO in any of
// those places, or a link to one or to a device (/dev/zero is read
// without end), made the git planex ran wait for ever; so did one in a
// loose object's folder, in an alternate object store, or in a folder a
// link under refs/ leads to.

// gitDirTrees are the folders of a git directory whose whole tree is
// looked at; gitDirFolders those whose own entries are.
var (
	gitDirTrees   = []string{"refs", "logs"}
	gitDirFolders = []string{".", "info"}
)

// maxAlternateDepth is how deep git follows alternates of alternates
// (its own limit); maxAlternatesFile bounds what planex reads of one
// alternates file.
const (
	maxAlternateDepth = 5
	maxAlternatesFile = 64 << 10
)

// maxCleanFolders bounds the folders a Repo remembers as clean; when
// full, all are forgotten. It holds every folder one walk may reach
// (refs/ and logs/ up to maxTreeFolders each, and the few others): at
// 4,096, a refs tree of 5,000 folders, under the cap, was forgotten and
// listed whole again before every call (0.7 s a call at 9,000).
const maxCleanFolders = 2*maxTreeFolders + 2048

// maxTreeFolders bounds the folders of refs/ or logs/ walked, links
// followed: a link there to a huge tree (/usr, a data disk) was walked
// whole before every git planex ran. A repository's loose refs fill a
// few hundred folders; one holding more is refused, naming what to do.
const maxTreeFolders = 10000

// ErrGitDirTooLarge is returned for a git directory whose refs or logs
// reach more folders than maxTreeFolders.
var ErrGitDirTooLarge = errors.New("a git directory's refs reach too many folders")

// cleanFolder is a folder found to hold no FIFO, device or link, with
// the stamp it had then and its sub-folders.
type cleanFolder struct {
	stamp string
	subs  []string
}

// checkGitDirTree refuses (ErrGitDirFileNotRegular) the git directory dir
// when one of the places above holds a FIFO or a device, or a link to
// one. A socket is let be (git's fsmonitor daemon keeps one there, and
// opening one fails at once). The object store is looked at too, with
// those its alternates name (checkObjectStore): a loose object's folder
// is listed once and then remembered like any other.
//
// A folder found clean is remembered in s (when not nil) while it keeps
// its device, inode and times (configStamp): an entry is added, removed
// or renamed only by changing its folder's times. One holding a link is
// listed every time (what a link leads to changes without its folder).
//
// A link in refs or logs to a folder outside dir is refused: git would
// list refs through it, and planex walk it before every call, whatever
// it leads to (/, a large or slow file system), and what lies there
// changes with no stamp of dir changing. The walk ends when ctx does.
func checkGitDirTree(ctx context.Context, s *scanCache, dir string, common bool) error {
	for _, f := range gitDirFolders {
		if _, err := s.checkFolder(filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	if err := s.checkObjectStore(filepath.Join(dir, "objects"), 0, map[string]bool{}); err != nil {
		return err
	}
	inside := insideGitDir(dir)
	for _, t := range gitDirTrees {
		if err := s.checkTree(ctx, filepath.Join(dir, t), inside); err != nil {
			return err
		}
	}
	if !common {
		return nil
	}
	worktrees, err := s.checkFolder(filepath.Join(dir, "worktrees"))
	if err != nil {
		return err
	}
	for _, w := range worktrees {
		if _, err := s.checkFolder(w); err != nil {
			return err
		}
	}
	return nil
}

// checkTree checks the folder root and every folder below it, through
// links to folders that stay inside the git directory (inside); a link
// out, or root itself leading out, is refused.
func (s *scanCache) checkTree(ctx context.Context, root string, inside func(string) bool) error {
	if real, err := filepath.EvalSymlinks(root); err == nil && !inside(real) {
		return fmt.Errorf("%w: %s leads to %s, outside the git directory; remove it", ErrGitDirFileNotRegular, root, real)
	}
	// A folder reached twice (a link to a folder above it) is listed
	// once.
	seen := map[string]bool{}
	queue := []string{root}
	for walked := 0; len(queue) > 0; walked++ {
		if walked == maxTreeFolders {
			return fmt.Errorf("%w: %s reaches more than %d folders (%s); pack loose refs with git pack-refs --all",
				ErrGitDirTooLarge, root, maxTreeFolders, queue[0])
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("looking at %s: %w", root, err)
		}
		subs, err := s.checkFolder(queue[0])
		if err != nil {
			return err
		}
		for _, sub := range subs {
			if !inside(sub) {
				return fmt.Errorf("%w: %s holds a link to %s, outside the git directory; remove it", ErrGitDirFileNotRegular, queue[0], sub)
			}
			if !seen[sub] {
				seen[sub] = true
				queue = append(queue, sub)
			}
		}
		queue = queue[1:]
	}
	return nil
}

// insideGitDir returns whether a path is dir or below it, as named or
// with its links resolved (a link's folder is walked by its real path).
func insideGitDir(dir string) func(string) bool {
	roots := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		roots = append(roots, real)
	}
	return func(p string) bool {
		for _, root := range roots {
			if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
}

// checkObjectStore checks an object store's folders (its loose objects'
// folders, pack/, info/) and, to git's depth, those of every store its
// info/alternates names: git lists the packs of each alternate and opens
// a loose object in any of them by its id, so a FIFO there, or as an
// alternate's own alternates file, hung every object read. A store
// named again (seen) is not listed again.
func (s *scanCache) checkObjectStore(objects string, depth int, seen map[string]bool) error {
	if seen[objects] {
		return nil
	}
	seen[objects] = true
	subs, err := s.checkFolder(objects)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		if _, err := s.checkFolder(sub); err != nil {
			return err
		}
	}
	if depth >= maxAlternateDepth {
		return nil
	}
	for _, alt := range readAlternates(objects) {
		if err := s.checkObjectStore(alt, depth+1, seen); err != nil {
			return err
		}
	}
	return nil
}

// readAlternates returns the object stores objects/info/alternates
// names, as git reads them: a line each, a # line a comment, a quoted
// line unquoted, a relative one relative to objects. A file that is not
// regular was refused by the folder check; one unreadable names none.
func readAlternates(objects string) []string {
	f, err := openRegular(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAlternatesFile))
	if err != nil {
		return nil
	}
	var alts []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			if u, err := strconv.Unquote(line); err == nil {
				line = u
			}
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		alts = append(alts, filepath.Clean(line))
	}
	return alts
}

// checkFolder checks each entry of the folder dir (not below it), and
// returns its sub-folders: a link to a folder is returned as the folder
// it leads to (git lists refs through it).
func (s *scanCache) checkFolder(dir string) ([]string, error) {
	stamp, stable := configStamp([]string{dir}, time.Now())
	if s != nil && stable {
		s.mu.Lock()
		e, hit := s.clean[dir]
		s.mu.Unlock()
		if hit && e.stamp == stamp {
			return e.subs, nil
		}
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrGitDirFileNotRegular, dir, err)
	}
	var subs []string
	links := false
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			links = true
			info, err := os.Stat(p)
			if err != nil {
				continue // a dangling link: git finds nothing there
			}
			typ = info.Mode().Type()
			if typ.IsDir() {
				if real, err := filepath.EvalSymlinks(p); err == nil {
					subs = append(subs, real)
				}
			}
		} else if typ.IsDir() {
			subs = append(subs, p)
		}
		if typ&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0 {
			return nil, fmt.Errorf("%w: %s is a %v; remove it", ErrGitDirFileNotRegular, p, typ)
		}
	}
	if s != nil && stable && !links {
		s.mu.Lock()
		if s.clean == nil || len(s.clean) >= maxCleanFolders {
			s.clean = map[string]cleanFolder{}
		}
		s.clean[dir] = cleanFolder{stamp: stamp, subs: subs}
		s.mu.Unlock()
	}
	return subs, nil
}
