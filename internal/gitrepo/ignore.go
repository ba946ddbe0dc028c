package gitrepo

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Ignorer answers whether paths of a tree are ignored, by git's rules,
// by the .gitignore files of their directory and the directories above
// it, and by any extra ignore files given for the whole tree. Each
// directory's file is read once, when a path below it is first asked
// about. An Ignorer is for one goroutine.
//
// It is for trees git does not list itself (a directory that is not a
// work tree, an agent's tool walking a worktree); where git can answer,
// ask git.
type Ignorer struct {
	root string
	base []gitignore.Pattern
	dirs map[string][]gitignore.Pattern // in effect in a directory, by its slash path
}

// NewIgnorer returns an Ignorer for the tree at root. extra are ignore
// files that apply to the whole tree, lowest precedence first (such as
// .git/info/exclude). A missing or unreadable file counts as empty.
func NewIgnorer(root string, extra ...string) *Ignorer {
	ig := &Ignorer{root: root, dirs: map[string][]gitignore.Pattern{}}
	for _, f := range extra {
		ig.base = append(ig.base, readPatterns(f, nil)...)
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
	return gitignore.NewMatcher(ig.patterns(path.Dir(rel))).Match(strings.Split(rel, "/"), isDir)
}

// patterns returns the patterns in effect in directory dir: the tree's,
// its parents' and then its own, so that the deeper file wins.
func (ig *Ignorer) patterns(dir string) []gitignore.Pattern {
	if ps, ok := ig.dirs[dir]; ok {
		return ps
	}
	inherited, domain := ig.base, []string(nil)
	if dir != "." {
		inherited, domain = ig.patterns(path.Dir(dir)), strings.Split(dir, "/")
	}
	ps := inherited
	if own := readPatterns(filepath.Join(ig.root, filepath.FromSlash(dir), ".gitignore"), domain); len(own) > 0 {
		ps = append(append([]gitignore.Pattern(nil), inherited...), own...)
	}
	ig.dirs[dir] = ps
	return ps
}

// readPatterns reads one ignore file's patterns, scoped to domain (the
// directory holding it, as path elements; nil for the root).
func readPatterns(file string, domain []string) []gitignore.Pattern {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
