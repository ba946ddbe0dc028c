package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxIgnoredMasks bounds the masks planex mounts over a checkout's
// ignored files for one step; a checkout holding more is refused
// (ErrTooManyIgnored) rather than shown.
const MaxIgnoredMasks = 4096

// ErrTooManyIgnored is returned when a checkout's ignored files and
// folders need more masks than MaxIgnoredMasks.
var ErrTooManyIgnored = errors.New("too many ignored files to hide from agents")

// Ignored are the git-ignored files and folders of the user's checkout
// (in the Action, every untracked one), which contained processes must
// not read (a local .env, an .npmrc with
// a token, keys): each is covered by an empty, read-only one, except
// what planex must show.
type Ignored struct {
	// Root is the checkout's top level.
	Root string
	// Paths are the ignored entries, absolute, a wholly ignored folder
	// once.
	Paths []string
	// Keep lists paths contained processes must still reach although
	// ignored or below an ignored folder: what the user granted
	// (--sandbox-read, --sandbox-write).
	Keep []string
	// Named lists the paths the words of the agent command and of the
	// MCP servers name (their programs and file arguments). A word is no
	// grant: a repository can commit a file or a link under any name, so
	// a named path is kept only where it is itself an ignored entry or
	// lies below one (named with its last element unresolved), and a link
	// there keeps what it leads to only when that is ignored too.
	Named []string
	// Relist, when set, lists the ignored entries again for each step,
	// in place of Paths: a file the user's tools create in the checkout
	// while the run goes on (a build's credentials, a new .env) is
	// hidden from the steps that start after it.
	Relist func(context.Context) ([]string, error)
}

// current is ig with its entries listed again where it can.
func (ig Ignored) current(ctx context.Context) (Ignored, error) {
	if ig.Relist == nil {
		return ig, nil
	}
	paths, err := ig.Relist(ctx)
	if err != nil {
		return ig, err
	}
	ig.Paths = paths
	return ig, nil
}

// masks returns the paths to cover for a step that may write writable
// and read readable. Every path of Keep and writable, and the readable
// ones that lie in an ignored place, stay visible: an ignored entry at or
// below one is left alone, and an ignored folder above one is opened:
// its other entries are covered one by one.
func (ig Ignored) masks(writable, readable []string) ([]string, error) {
	if len(ig.Paths) == 0 {
		return nil, nil
	}
	root := realPath(ig.Root)
	var keep []string
	add := func(p string, onlyIgnored bool) {
		p = realPath(p)
		if within(root, p) {
			return // the checkout itself, or a folder above it
		}
		if !within(p, root) {
			// Outside: it keeps visible a file an ignored link leads to.
			keep = append(keep, p)
			return
		}
		if onlyIgnored && !ig.inIgnored(root, p) {
			return // the step's own folder: its ignored files stay hidden
		}
		keep = append(keep, p)
	}
	for _, p := range append(append([]string(nil), ig.Keep...), writable...) {
		add(p, false)
	}
	for _, p := range readable {
		add(p, true)
	}
	for _, p := range ig.Named {
		keep = append(keep, ig.named(root, p)...)
	}
	m := masker{root: root, keep: keep, limit: MaxIgnoredMasks}
	for _, p := range ig.Paths {
		if err := m.cover(realIn(root, ig.Root, p), true); err != nil {
			return nil, err
		}
	}
	return m.out, nil
}

// named returns what of p, a path the agent command or an MCP server
// names, stays visible: p where it is an ignored entry or below one, and
// where it is a link, its target where that is ignored as well.
func (ig Ignored) named(root, p string) []string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if named := realIn(root, ig.Root, p); within(named, root) {
		p = named
	} else {
		p = filepath.Join(realPath(filepath.Dir(p)), filepath.Base(p))
	}
	// A link on the way inside the checkout (one a repository commits)
	// could lead the name anywhere in it.
	if realPath(filepath.Dir(p)) != filepath.Dir(p) {
		return nil
	}
	if p == root || !within(p, root) || !ig.inIgnored(root, p) {
		return nil
	}
	out := []string{p}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if t := realPath(p); t != root && within(t, root) && ig.inIgnored(root, t) {
			out = append(out, t)
		}
	}
	return out
}

// inIgnored reports whether p is an ignored entry or lies below one.
func (ig Ignored) inIgnored(root, p string) bool {
	for _, e := range ig.Paths {
		if within(p, realIn(root, ig.Root, e)) {
			return true
		}
	}
	return false
}

// masker collects the covers of ignored entries around the kept paths.
type masker struct {
	root  string
	keep  []string
	limit int
	out   []string
}

// cover covers p, opens it when a kept path lies below it, or leaves it
// when it lies at or below a kept path.
func (m *masker) cover(p string, listed bool) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil // gone
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		// A link: what it leads to in the checkout is shown or hidden
		// where it is; a file outside it (a .env linked to a secrets
		// folder) is covered, as the link's name gives it away.
		// Only a link git listed itself: one inside an opened folder (a
		// virtualenv's bin/python) leads to a program steps run, and
		// never one leading into the system's folders.
		t := realPath(p)
		if ti, err := os.Stat(t); !listed || err != nil || !ti.Mode().IsRegular() || within(t, m.root) || inSystemDir(t) {
			return nil
		}
		p = t
	}
	if n := len(m.out); n > 0 && within(p, m.out[n-1]) {
		// Already covered: git lists a folder holding only ignored files,
		// then those files.
		return nil
	}
	below := false
	for _, k := range m.keep {
		if within(p, k) {
			return nil
		}
		if within(k, p) {
			below = true
		}
	}
	if !below {
		if len(m.out) == m.limit {
			return fmt.Errorf("%w: more than %d below %s", ErrTooManyIgnored, m.limit, filepath.Dir(p))
		}
		m.out = append(m.out, p)
		return nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return fmt.Errorf("reading ignored folder %s: %w", p, err)
	}
	for _, e := range entries {
		if err := m.cover(filepath.Join(p, e.Name()), false); err != nil {
			return err
		}
	}
	return nil
}

// inSystemDir reports whether p lies in one of the system's folders.
func inSystemDir(p string) bool {
	for _, d := range systemDirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or lies below it (both clean).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// realPath is p absolute, clean and, where it exists, with its links
// resolved.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// realIn is p, a path under root as named (rootNamed), moved under the
// resolved root without resolving p's own last element (a link there
// is left to cover()).
func realIn(root, rootNamed, p string) string {
	rel, err := filepath.Rel(filepath.Clean(rootNamed), filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Clean(p)
	}
	return filepath.Join(root, rel)
}
