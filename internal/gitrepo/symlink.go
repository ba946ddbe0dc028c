package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/plural"
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
	links, err := r.Tree(tree).symlinks(ctx)
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
	_, ok := resolveLink(parentParts(link), links[link], mapLinks(links), &hops)
	return !ok
}

// mapLinks looks a path up in a map of a tree's links.
func mapLinks(links map[string]string) func(string) (string, bool) {
	return func(p string) (string, bool) {
		t, ok := links[p]
		return t, ok
	}
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
func resolveLink(dir []string, target string, link func(string) (string, bool), hops *int) ([]string, bool) {
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
		if t, isLink := link(strings.Join(cur, "/")); isLink {
			if *hops++; *hops > maxLinkHops {
				return nil, false
			}
			var ok bool
			if cur, ok = resolveLink(cur[:len(cur)-1], t, link, hops); !ok {
				return nil, false
			}
		}
	}
	return cur, true
}

// maxLinkTarget bounds the target read of one symlink: a path longer
// than the system's PATH_MAX leads nowhere a checkout can follow.
const maxLinkTarget = 4096

// TreeView reads what one tree of the repository holds, as a checkout of
// it would lay it out: where its links lead, which folders hold a file.
type TreeView struct {
	r    *Repo
	tree string // a tree or commit id
}

// Tree is a view of tree (a tree or commit id) of r.
func (r *Repo) Tree(tree string) TreeView { return TreeView{r: r, tree: tree} }

// ResolveFolders says where each of folders (paths of tree) leads once
// tree is checked out, for those a symbolic link along the way leads
// elsewhere in the repository ("" for its root): a committed .github ->
// ci makes .github/workflows ci/workflows. A folder whose links leave the
// repository, enter .git or loop is left out, as is one without a link.
// Every path on the way to the folders is read by one git and each
// link's target by one more; a path a link leads to is read when the walk
// reaches it.
func (v TreeView) ResolveFolders(ctx context.Context, folders []string) (map[string]string, error) {
	w := linkWalk{v: v, ctx: ctx, seen: map[string]*string{}}
	if err := w.readAhead(wayTo(folders)); err != nil {
		return nil, fmt.Errorf("reading the links on the way to %s in %s: %w", strings.Join(folders, ", "), abbrev.SHA(v.tree), err)
	}
	out := map[string]string{}
	for _, f := range folders {
		hops := 0
		to, ok := resolveLink(nil, f, w.link, &hops)
		if w.err != nil {
			return nil, fmt.Errorf("reading the links on the way to %s in %s: %w", f, abbrev.SHA(v.tree), w.err)
		}
		if real := strings.Join(to, "/"); ok && real != f {
			out[f] = real
		}
	}
	return out, nil
}

// wayTo lists every path on the way to each of folders, the folders
// included (a, a/b and a/b/c for a/b/c), each once; a path through .git
// is left out (a walk stops there).
func wayTo(folders []string) []string {
	var out []string
	had := map[string]bool{}
	for _, f := range folders {
		var cur []string
		for _, comp := range strings.Split(f, "/") {
			if comp == "" || comp == "." || comp == ".." || strings.EqualFold(comp, ".git") {
				break
			}
			cur = append(cur, comp)
			if p := strings.Join(cur, "/"); !had[p] {
				had[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// linkWalk reads the entries of one tree that a resolution passes
// through, each at most once: seen maps a path read to its link's target,
// nil when it is not a link. The first error stops every later read.
type linkWalk struct {
	v    TreeView
	ctx  context.Context
	seen map[string]*string
	err  error
}

// readAhead reads the entries at paths with one listing, and the target
// of each link among them. A folder asked for beside a path inside it is
// listed by its content, not its own entry (FilesAt lists it apart for
// that); a link has no content, so git lists its own entry either way,
// and a path whose entry is not listed is no link.
func (w *linkWalk) readAhead(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	files := map[string]TreeFile{}
	if err := listTree(w.ctx, w.v.r, w.v.tree, paths, false, files); err != nil {
		return err
	}
	for _, p := range paths {
		if err := w.note(p, files); err != nil {
			return err
		}
	}
	return nil
}

// note records what the listing files says of p.
func (w *linkWalk) note(p string, files map[string]TreeFile) error {
	w.seen[p] = nil
	f, ok := files[p]
	if !ok || f.Mode != "120000" {
		return nil
	}
	// The listing read no sizes: one byte past the bound tells a target
	// too long to lead anywhere in the repository.
	data, err := w.v.r.ReadBlobPrefix(w.ctx, f.Object, maxLinkTarget+1)
	if err != nil {
		return err
	}
	t := string(data)
	if len(data) > maxLinkTarget {
		t = "/"
	}
	w.seen[p] = &t
	return nil
}

// link says whether p is a link of the tree and where it leads, reading
// p when no earlier read did (a path a link led to).
func (w *linkWalk) link(p string) (string, bool) {
	if t, ok := w.seen[p]; ok {
		return deref(t)
	}
	w.seen[p] = nil
	if w.err != nil {
		return "", false
	}
	if w.err = w.readAhead([]string{p}); w.err != nil {
		return "", false
	}
	return deref(w.seen[p])
}

func deref(t *string) (string, bool) {
	if t == nil {
		return "", false
	}
	return *t, true
}

// symlinks reads every symlink of tree: path → target. A link whose
// target is longer than maxLinkTarget (a tree anyone can push may hold
// one of any size, many times over) is not read and leads to "/", out of
// the repository; past maxLinkBytes of links, each counted with what
// planex keeps for it besides its name and target (linkCost), it stops
// with ErrTooManyChanges. git's answer is read as it comes.
func (v TreeView) symlinks(ctx context.Context) (map[string]string, error) {
	r, tree := v.r, v.tree
	links := map[string]string{}
	var paths []string
	var shas bytes.Buffer
	held := 0
	err := streamRecords(ctx, r, "", nil, []string{"ls-tree", "-r", "-z", "-l", "--full-tree", tree}, func(rec []byte) error {
		// "<mode> <type> <object> <size>\t<path>", the size padded: only
		// a link's record is turned into strings.
		if !bytes.HasPrefix(rec, []byte("120000 ")) {
			return nil
		}
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return nil
		}
		size, err := strconv.Atoi(f[3])
		if err != nil || size > maxLinkTarget {
			// Too long to lead anywhere in the repository, as linkWalk
			// reads it: not read at all.
			links[p] = "/"
			size = 1
		} else {
			paths = append(paths, p)
			shas.WriteString(f[2] + "\n")
		}
		if held += len(p) + size + linkCost; held > maxLinkBytes {
			return fmt.Errorf("more than %d MiB of symlinks: %w", maxLinkBytes>>20, ErrTooManyChanges)
		}
		return nil
	})
	if err != nil || len(paths) == 0 {
		return links, err
	}
	env := append(r.gitEnv(r.Root), r.env...)
	c := call{dir: r.Root, env: env, config: r.config, stdin: shas.Bytes(), args: []string{"cat-file", "--batch"}, scans: r.scans}
	err = stream(ctx, c, func(out io.Reader) error {
		br := bufio.NewReader(out)
		for _, p := range paths {
			target, err := readLinkBlob(br)
			if err != nil {
				return fmt.Errorf("reading link %s: %w", p, err)
			}
			links[p] = target
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return links, nil
}

// readLinkBlob reads one link's answer from git cat-file --batch: its
// header and at most maxLinkTarget bytes of content.
func readLinkBlob(br *bufio.Reader) (string, error) {
	header, err := br.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(header))
	if len(f) != 3 {
		return "", fmt.Errorf("unexpected header %q", header)
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size > maxLinkTarget {
		return "", fmt.Errorf("unexpected header %q", header)
	}
	body := make([]byte, size+1) // the content and its trailing newline
	if _, err := io.ReadFull(br, body); err != nil {
		return "", fmt.Errorf("object %s: %w", f[0], err)
	}
	return string(body[:size]), nil
}

// linkCost is what planex holds for one symlink besides its name and
// target while it checks where links lead: the object name it asks git
// for, the entry of the path list and that of the map. A tree of short
// links counts for what it costs.
const linkCost = 128

// maxLinkBytes bounds the names and targets of the symlinks of one tree
// that planex holds to check where they lead.
const maxLinkBytes = 16 << 20

// FoldersHolding lists the folders of tree, among those that hold one of
// paths (their ancestors, the root left out), that hold an entry whose
// name keep accepts (a local action's definition, in any case): the
// folders are listed by git as it writes, maxListedFolders to a call,
// keeping only what keep accepts.
func (v TreeView) FoldersHolding(ctx context.Context, paths []string, keep func(name string) bool) (map[string]bool, error) {
	r, tree := v.r, v.tree
	var asked []string
	seen := map[string]bool{}
	for _, p := range paths {
		for d := path.Dir(p); d != "." && d != "/" && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			asked = append(asked, d)
		}
	}
	out := map[string]bool{}
	for len(asked) > 0 {
		n := min(len(asked), maxListedFolders)
		args := []string{"ls-tree", "-z", tree, "--"}
		for _, d := range asked[:n] {
			args = append(args, d+"/")
		}
		asked = asked[n:]
		err := streamRecords(ctx, r, "", nil, args, func(rec []byte) error {
			meta, name, ok := strings.Cut(string(rec), "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" && keep(path.Base(name)) && seen[path.Dir(name)] {
				out[path.Dir(name)] = true
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("looking for local actions in the folders of %s: %w", abbrev.SHA(tree), err)
		}
	}
	return out, nil
}

// maxListedFolders is how many folders one git lists for FoldersHolding,
// whose names are its arguments.
const maxListedFolders = 256

// FolderFiles reads the files directly in folder dir of tree (not its
// sub-folders, links or submodules), in git's order: the first maxBytes
// of each, so that a repository's content bounds neither the time nor the
// memory it takes. A folder of more than maxFiles files, or whose files
// hold more than maxFolderText, is refused (ErrTooManyFiles): a check
// reading only the first would let the later ones through unread.
func (v TreeView) FolderFiles(ctx context.Context, dir string, maxFiles int, maxBytes int64) (map[string][]byte, error) {
	r, tree := v.r, v.tree
	// The listing is read as it comes and left past maxFiles: a tree
	// anyone can push may hold a folder of a million entries.
	var names, objects []string
	err := streamRecords(ctx, r, "", nil, []string{"ls-tree", "-z", tree, "--", strings.TrimSuffix(dir, "/") + "/"}, func(rec []byte) error {
		meta, name, found := strings.Cut(string(rec), "\t")
		fields := strings.Fields(meta)
		if !found || len(fields) != 3 || fields[1] != "blob" || fields[0] == "120000" {
			return nil
		}
		if len(names) == maxFiles {
			return fmt.Errorf("more than %s in %s: %w", plural.Count(maxFiles, "file", "files"), dir, ErrTooManyFiles)
		}
		names, objects = append(names, name), append(objects, fields[2])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s at %s: %w", dir, abbrev.SHA(tree), err)
	}
	files := map[string][]byte{}
	held := int64(0)
	for i, name := range names {
		body, err := r.ReadBlobPrefix(ctx, objects[i], min(maxBytes, maxFolderText-held+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", name, abbrev.SHA(tree), err)
		}
		if held += int64(len(body)); held > maxFolderText {
			return nil, fmt.Errorf("more than %d MiB in the files of %s: %w", maxFolderText>>20, dir, ErrTooManyFiles)
		}
		files[name] = body
	}
	return files, nil
}

// maxFolderText bounds what FolderFiles reads of one folder's files in
// all (each is read up to its own bound too).
const maxFolderText = 16 << 20

// NamedFiles reads the entries directly in folder dir of tree ("." for
// the root) whose names keep accepts: the first maxBytes of each regular
// file, by its path, and the paths of those that are symbolic links
// (where they lead is the caller's to resolve). The listing is read as
// git writes it; a folder holding more than maxNamed such entries is
// refused (ErrTooManyNamed): leaving out the later ones would leave out
// the very one a runner reads (action.yml sorts after Action.yml).
func (v TreeView) NamedFiles(ctx context.Context, dir string, keep func(name string) bool, maxBytes int64) (files map[string][]byte, links []string, err error) {
	r, tree := v.r, v.tree
	args := []string{"ls-tree", "-z", tree}
	if dir != "." && dir != "" {
		args = append(args, "--", strings.TrimSuffix(dir, "/")+"/")
	}
	var names, objects []string
	err = streamRecords(ctx, r, "", nil, args, func(rec []byte) error {
		meta, name, found := strings.Cut(string(rec), "\t")
		fields := strings.Fields(meta)
		if !found || len(fields) != 3 || fields[1] != "blob" || !keep(path.Base(name)) {
			return nil
		}
		if len(names)+len(links) == maxNamed {
			return fmt.Errorf("%w (more than %d) in %s", ErrTooManyNamed, maxNamed, dir)
		}
		if fields[0] == "120000" {
			links = append(links, name)
		} else {
			names, objects = append(names, name), append(objects, fields[2])
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s at %s: %w", dir, abbrev.SHA(tree), err)
	}
	files = map[string][]byte{}
	for i, name := range names {
		body, err := r.ReadBlobPrefix(ctx, objects[i], maxBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s at %s: %w", name, abbrev.SHA(tree), err)
		}
		files[name] = body
	}
	return files, links, nil
}

// maxNamed bounds the entries NamedFiles takes from one folder.
const maxNamed = 16

// ErrTooManyFiles refuses a folder holding more files than planex reads
// of it (FolderFiles).
var ErrTooManyFiles = errors.New("too many files in a folder")

// ErrTooManyNamed refuses a folder holding more entries of the names
// looked for (an action's definition in every case) than planex reads.
var ErrTooManyNamed = errors.New("too many files named alike")

// ReadFiles reads the files of tree at paths (each a path of the
// repository; a missing one, a folder or a submodule is left out, and a
// path holding a line break is not looked at): the first maxBytes of
// each, with one git call to find them.
func (v TreeView) ReadFiles(ctx context.Context, paths []string, maxBytes int64) (map[string][]byte, error) {
	r, tree := v.r, v.tree
	files := map[string][]byte{}
	var asked []string
	var in strings.Builder
	for _, p := range paths {
		if !strings.Contains(p, "\n") {
			asked = append(asked, p)
			in.WriteString(tree + ":" + p + "\n")
		}
	}
	if len(asked) == 0 {
		return files, nil
	}
	res, err := r.gitIn(ctx, r.Root, nil, []byte(in.String()), "cat-file", "--batch-check")
	if err != nil {
		return nil, fmt.Errorf("looking for %s in %s: %w", strings.Join(asked, ", "), abbrev.SHA(tree), err)
	}
	lines := strings.Split(strings.TrimSuffix(res, "\n"), "\n")
	if len(lines) != len(asked) {
		return nil, fmt.Errorf("looking for %s in %s: git cat-file answered %d lines for %d", strings.Join(asked, ", "), abbrev.SHA(tree), len(lines), len(asked))
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 || !r.format.IsID(f[0]) || f[1] != "blob" {
			continue
		}
		body, err := r.ReadBlobPrefix(ctx, f[0], maxBytes)
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", asked[i], abbrev.SHA(tree), err)
		}
		files[asked[i]] = body
	}
	return files, nil
}
