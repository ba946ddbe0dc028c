package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// A git directory holds files git finds by listing a folder or writes as
// it goes, besides those it opens by a fixed name (checkGitDirFiles): a
// loose ref (listing refs opens each one), a ref log (appended to on
// every ref update), FETCH_HEAD and ORIG_HEAD (written by a fetch and a
// reset), a pack's index (every object read lists the packs), another
// worktree's gitdir file (worktree add reads them all). A FIFO in any of
// those places, or a link to one or to a device (/dev/zero is read
// without end), made the git planex ran wait for ever.

// gitDirTrees are the folders of a git directory whose whole tree is
// looked at; gitDirFolders those whose own entries are.
var (
	gitDirTrees   = []string{"refs", "logs"}
	gitDirFolders = []string{".", "info", filepath.Join("objects", "pack"), filepath.Join("objects", "info")}
)

// maxCleanFolders bounds the folders a Repo remembers as clean; when
// full, all are forgotten.
const maxCleanFolders = 4096

// cleanFolder is a folder found to hold no FIFO, device or link, with
// the stamp it had then and its sub-folders.
type cleanFolder struct {
	stamp string
	subs  []string
}

// checkGitDirTree refuses (ErrGitDirFileNotRegular) the git directory dir
// when one of the places above holds a FIFO or a device, or a link to
// one. A socket is let be (git's fsmonitor daemon keeps one there, and
// opening one fails at once). Loose objects are not looked at: there are
// too many, and git opens one only by the id it reads.
//
// A folder found clean is remembered in s (when not nil) while it keeps
// its device, inode and times (configStamp): an entry is added, removed
// or renamed only by changing its folder's times. One holding a link is
// listed every time (what a link leads to changes without its folder).
func checkGitDirTree(s *scanCache, dir string, common bool) error {
	for _, f := range gitDirFolders {
		if _, err := s.checkFolder(filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	for _, t := range gitDirTrees {
		queue := []string{filepath.Join(dir, t)}
		for len(queue) > 0 {
			subs, err := s.checkFolder(queue[0])
			if err != nil {
				return err
			}
			queue = append(queue[1:], subs...)
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

// checkFolder checks each entry of the folder dir (not below it), and
// returns its sub-folders.
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
