package gitrepo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
)

// maxLinkHops bounds how many symlinks one resolution follows, as the
// kernel does (ELOOP), so a loop is refused instead of looping.
const maxLinkHops = 40

// SymlinkEscapes returns the symlinks among changes (as "path -> target")
// that resolve outside the repository or into a .git directory once tree
// is checked out: an absolute target, a relative one climbing out with
// "..", or one reaching out through another symlink of tree.
func (r *Repo) SymlinkEscapes(ctx context.Context, tree string, changes []Change) ([]string, error) {
	var added []string
	for _, c := range changes {
		if c.Mode == "120000" {
			added = append(added, c.Path)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	links, err := r.symlinks(ctx, tree)
	if err != nil {
		return nil, fmt.Errorf("reading the symlinks of %s: %w", abbrev.SHA(tree), err)
	}
	var bad []string
	for _, p := range added {
		if LinkEscapes(p, links) {
			bad = append(bad, p+" -> "+links[p])
		}
	}
	return bad, nil
}

// LinkEscapes reports whether the symlink at link (a slash-separated path
// relative to the repository root) leaves the repository or enters a .git
// directory when followed; links maps every symlink of the tree to its
// target. Only the tree decides: nothing on disk is consulted.
func LinkEscapes(link string, links map[string]string) bool {
	hops := 0
	_, ok := resolveLink(parentParts(link), links[link], links, &hops)
	return !ok
}

func parentParts(p string) []string {
	d := path.Dir(p)
	if d == "." || d == "/" {
		return nil
	}
	return strings.Split(d, "/")
}

// resolveLink follows target from the directory dir, through the tree's
// symlinks, and reports where it lands; false when it leaves the root,
// enters .git, or follows too many links.
func resolveLink(dir []string, target string, links map[string]string, hops *int) ([]string, bool) {
	if strings.HasPrefix(target, "/") {
		return nil, false
	}
	cur := append([]string(nil), dir...)
	for _, comp := range strings.Split(target, "/") {
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return nil, false
			}
			cur = cur[:len(cur)-1]
			continue
		}
		if strings.EqualFold(comp, ".git") {
			return nil, false
		}
		cur = append(cur, comp)
		if t, isLink := links[strings.Join(cur, "/")]; isLink {
			if *hops++; *hops > maxLinkHops {
				return nil, false
			}
			var ok bool
			if cur, ok = resolveLink(cur[:len(cur)-1], t, links, hops); !ok {
				return nil, false
			}
		}
	}
	return cur, true
}

// symlinks reads every symlink of tree: path → target.
func (r *Repo) symlinks(ctx context.Context, tree string) (map[string]string, error) {
	out, err := r.Git(ctx, "", "ls-tree", "-r", "-z", "--full-tree", tree)
	if err != nil {
		return nil, err
	}
	var paths, shas []string
	for _, rec := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if ok && len(f) == 3 && f[0] == "120000" {
			paths = append(paths, p)
			shas = append(shas, f[2])
		}
	}
	links := make(map[string]string, len(paths))
	if len(paths) == 0 {
		return links, nil
	}
	out, err = r.gitIn(ctx, r.Root, nil, []byte(strings.Join(shas, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(strings.NewReader(out))
	for i, p := range paths {
		header, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading link %s: %w", p, err)
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return nil, fmt.Errorf("reading link %s: unexpected header %q", p, header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("reading link %s: unexpected header %q", p, header)
		}
		body := make([]byte, size+1) // the content and its trailing newline
		if _, err := io.ReadFull(br, body); err != nil {
			return nil, fmt.Errorf("reading link %s (%s): %w", p, shas[i], err)
		}
		links[p] = string(body[:size])
	}
	return links, nil
}
