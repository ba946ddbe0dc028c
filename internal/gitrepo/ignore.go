package gitrepo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/planexhq/planex/internal/safefile"
)

// Bounds on what one Ignorer reads, whatever a repository ships or an
// agent leaves in a worktree: the tools that use it run in planex itself.
const (
	// maxIgnoreFile is how much of one ignore file is read; git's own
	// limit is larger (100 MB), but no hand-written file comes near this.
	maxIgnoreFile = 1 << 20
	// maxIgnorePatterns is how many patterns one Ignorer keeps in all,
	// and maxIgnoreText their text in all (a line may be 64 KiB long);
	// the files read after either budget is spent count as empty.
	maxIgnorePatterns = 1 << 16
	maxIgnoreText     = 8 << 20
)

// Ignorer answers whether paths of a tree are ignored, by git's rules,
// by the .gitignore files of their directory and the directories above
// it, and by any extra ignore files given for the whole tree. Each
// directory's file is read once, when a path below it is first asked
// about. An Ignorer is for one goroutine.
//
// It is for trees git does not list itself (a directory that is not a
// work tree, an agent's tool walking a worktree); where git can answer,
// ask git. Like git, it follows no link named .gitignore inside the
// tree; it reads only regular files (a FIFO there is not waited on), at
// most maxIgnoreFile bytes of each and maxIgnorePatterns patterns (of
// maxIgnoreText bytes) in all,
// and a directory's patterns are kept once, linked to its parent's, so
// that many folders under a long root file cost no copies of it.
type Ignorer struct {
	root string
	base *ignoreLevel
	dirs map[string]*ignoreLevel // in effect in a directory, by its slash path
	held int                     // patterns kept so far
	text int                     // and the bytes of their lines
}

// ignoreLevel is what one ignore file adds to the patterns in effect
// above it; the deeper level is asked first, as git lets the deeper file
// win.
type ignoreLevel struct {
	parent *ignoreLevel
	own    []gitignore.Pattern
}

// NewIgnorer returns an Ignorer for the tree at root. extra are ignore
// files that apply to the whole tree, lowest precedence first (such as
// .git/info/exclude; these may be links). A missing or unreadable file
// counts as empty.
func NewIgnorer(root string, extra ...string) *Ignorer {
	ig := &Ignorer{root: root, dirs: map[string]*ignoreLevel{}}
	for _, f := range extra {
		if own := ig.readPatterns(f, nil, true); len(own) > 0 {
			ig.base = &ignoreLevel{parent: ig.base, own: own}
		}
	}
	return ig
}

// Ignored reports whether rel, a slash path relative to the root, is
// ignored. Like git, it does not look below an ignored directory: ask
// about a directory before the paths in it.
func (ig *Ignorer) Ignored(rel string, isDir bool) bool {
	rel = path.Clean(rel)
	if rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for l := ig.level(path.Dir(rel)); l != nil; l = l.parent {
		for i := len(l.own) - 1; i >= 0; i-- {
			if m := l.own[i].Match(parts, isDir); m != gitignore.NoMatch {
				return m == gitignore.Exclude
			}
		}
	}
	return false
}

// level returns the patterns in effect in directory dir: its own file's
// over its parents' and the tree's.
func (ig *Ignorer) level(dir string) *ignoreLevel {
	if l, ok := ig.dirs[dir]; ok {
		return l
	}
	inherited, domain := ig.base, []string(nil)
	if dir != "." {
		inherited, domain = ig.level(path.Dir(dir)), strings.Split(dir, "/")
	}
	l := inherited
	if own := ig.readPatterns(filepath.Join(ig.root, filepath.FromSlash(dir), ".gitignore"), domain, false); len(own) > 0 {
		l = &ignoreLevel{parent: inherited, own: own}
	}
	ig.dirs[dir] = l
	return l
}

// readPatterns reads one ignore file's patterns, scoped to domain (the
// directory holding it, as path elements; nil for the root), within the
// Ignorer's budget. A link is followed only when follow is set (the extra
// files outside the tree).
func (ig *Ignorer) readPatterns(file string, domain []string, follow bool) []gitignore.Pattern {
	if ig.held >= maxIgnorePatterns || ig.text >= maxIgnoreText {
		return nil
	}
	var f *os.File
	var err error
	if follow {
		f, err = openRegular(file)
	} else {
		f, err = safefile.OpenNoFollow(file)
	}
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreFile))
	for sc.Scan() && ig.held < maxIgnorePatterns {
		raw := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(raw)) == 0 || raw[0] == '#' {
			continue
		}
		if ig.text += len(raw); ig.text > maxIgnoreText {
			break
		}
		ps = append(ps, gitignore.ParsePattern(string(raw), domain))
		ig.held++
	}
	return ps
}

// openRegular opens file, following a link, when it is a regular file;
// a FIFO is opened without waiting for a writer, then refused.
func openRegular(file string) (*os.File, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("reading %s: not a regular file", file)
	}
	return f, nil
}
