package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// HiddenWhy is why GitHub's diff of a pull request does not show a
// file's changes.
type HiddenWhy int

const (
	// HiddenBinary: the file's attributes unset diff (`-diff`, `binary`),
	// so GitHub shows "Binary file not shown" in place of its changes.
	HiddenBinary HiddenWhy = iota + 1
	// HiddenGenerated: the file is marked `linguist-generated`, so GitHub
	// collapses its changes until someone opens them.
	HiddenGenerated
)

// String is the attribute that hides the file, as a person writes it.
func (w HiddenWhy) String() string {
	switch w {
	case HiddenBinary:
		return "-diff"
	case HiddenGenerated:
		return "linguist-generated"
	}
	return "unknown"
}

// HiddenFile is a changed file whose changes GitHub's diff hides.
type HiddenFile struct {
	Path string
	Why  HiddenWhy
}

// MaxHiddenFiles is how many hidden files HiddenChanges names; it counts
// all of them.
const MaxHiddenFiles = 50

// HiddenChanges lists the files that differ between base and the tip of
// branch whose changes GitHub's diff of a pull request hides by the
// attributes of the tip's tree: marked binary (`-diff`) or generated
// (`linguist-generated`). A `.gitattributes` already in the repository
// (`docs/.gitattributes` holding `* -diff`, `*.lock binary`, a generated
// folder's `* linguist-generated`) hides a file a task adds under it
// without the task changing any attributes, so a reviewer on GitHub never
// sees what the agent wrote there. At most MaxHiddenFiles are named, in
// path order; n counts them all.
//
// The attributes are read from the tip's tree alone, through an index of
// planex's own (git check-attr --cached), never from a work tree (an
// agent's, or one a checkout left): GitHub reads the commit. The
// repository's info/attributes (in the git directory, which only what
// the user trusts writes) is read too, as git always reads it.
func HiddenChanges(ctx context.Context, r *Repo, branch, base string) (files []HiddenFile, n int, err error) {
	tip, err := r.ResolveBranch(ctx, branch)
	if err != nil || tip == "" {
		return nil, 0, fmt.Errorf("reading branch %s: %w", branch, orMissing(err, branch))
	}
	changes, err := r.DiffTrees(ctx, base, tip)
	if err != nil || len(changes) == 0 {
		return nil, 0, err
	}
	idx, done, err := tempIndex()
	if err != nil {
		return nil, 0, err
	}
	defer done()
	empty, err := os.MkdirTemp("", "planex-attr-")
	if err != nil {
		return nil, 0, fmt.Errorf("making an empty work tree to read attributes: %w", err)
	}
	defer os.Remove(empty)
	env := append(append(r.gitEnv(empty), r.env...), "GIT_INDEX_FILE="+idx)
	if _, err := run(ctx, call{dir: empty, env: env, config: r.config, args: []string{"read-tree", tip + "^{tree}"}, scans: r.scans}); err != nil {
		return nil, 0, fmt.Errorf("reading the attributes of %s: %w", branch, err)
	}
	var paths bytes.Buffer
	for _, c := range changes {
		paths.WriteString(c.Path + "\x00")
	}
	// core.attributesFile names a file outside the commit: GitHub never
	// reads it.
	cfg := append(append([]setting{}, r.config...), setting{"core.attributesFile", os.DevNull})
	c := call{dir: empty, env: env, config: cfg, stdin: paths.Bytes(), scans: r.scans,
		args: []string{"check-attr", "-z", "--stdin", "--cached", "diff", "linguist-generated"}}
	// A path's records come one after the other, in the order asked.
	last := "\x00"
	err = stream(ctx, c, func(out io.Reader) error {
		return eachAttr(out, func(path, attr, value string) {
			if why := hiddenBy(attr, value); why != 0 && path != last {
				last = path
				if n++; n <= MaxHiddenFiles {
					files = append(files, HiddenFile{Path: path, Why: why})
				}
			}
		})
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reading the attributes of %s: %w", branch, err)
	}
	return files, n, nil
}

// orMissing is err, or for a branch that does not exist an error saying so.
func orMissing(err error, branch string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("no branch %s", branch)
}

// hiddenBy is why an attribute's value hides a file's diff, or 0.
func hiddenBy(attr, value string) HiddenWhy {
	switch {
	case attr == "diff" && value == "unset":
		return HiddenBinary
	case attr == "linguist-generated" && (value == "set" || strings.EqualFold(value, "true")):
		return HiddenGenerated
	}
	return 0
}

// eachAttr reads git check-attr -z's answer, records of three
// NUL-terminated fields (path, attribute, value), one record at a time.
func eachAttr(out io.Reader, fn func(path, attr, value string)) error {
	var f []string
	return eachRecord(out, func(rec []byte) error {
		if f = append(f, string(rec)); len(f) == 3 {
			fn(f[0], f[1], f[2])
			f = f[:0]
		}
		return nil
	})
}
