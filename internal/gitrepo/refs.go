package gitrepo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/safefile"
)

// SetRef points ref at sha, whatever it pointed at before; an empty sha
// deletes the ref (a ref that does not exist is not an error then). A
// symbolic ref of that name is replaced or deleted itself, never written
// through to the ref it names (whoever wrote the git directory could make
// refs/planex/… name the user's branch).
func (r *Repo) SetRef(ctx context.Context, ref, sha string) error {
	if sha == "" {
		if _, err := r.Git(ctx, "", "update-ref", "--no-deref", "-d", ref); err != nil && refExists(ctx, r, ref) {
			return fmt.Errorf("deleting %s: %w", ref, err)
		}
		return nil
	}
	if _, err := r.Git(ctx, "", "update-ref", "--no-deref", ref, sha); err != nil {
		return fmt.Errorf("setting %s: %w", ref, err)
	}
	return nil
}

func refExists(ctx context.Context, r *Repo, ref string) bool {
	_, err := r.Git(ctx, "", "rev-parse", "--verify", "--quiet", ref)
	return err == nil
}

// NoteCommit makes a commit on top of parent with parent's tree: it
// changes no file and carries only message. It moves no ref.
func (r *Repo) NoteCommit(ctx context.Context, parent, message string) (string, error) {
	tree, err := r.TreeOf(ctx, parent)
	if err != nil {
		return "", err
	}
	out, err := r.gitIn(ctx, r.Root, nil, []byte(message), "commit-tree", tree, "-p", parent, "-F", "-")
	if err != nil {
		return "", fmt.Errorf("committing on top of %s: %w", abbrev.SHA(parent), err)
	}
	return strings.TrimSpace(out), nil
}

// DiffText is the unified diff of head against its merge base with base,
// as a pull request from head into base shows it, cut at the last line
// within MaxPatchBytes (what agents committed may be far larger).
func (r *Repo) DiffText(ctx context.Context, base, head string) (string, error) {
	out, _, err := gitCapped(ctx, r, MaxPatchBytes, "diff", "--no-color", "--no-ext-diff", base+"..."+head, "--")
	if err != nil {
		return "", fmt.Errorf("diffing %s...%s: %w", abbrev.SHA(base), abbrev.SHA(head), err)
	}
	return out, nil
}

// refuseSymbolicRef fails with ErrSymbolicRef when ref is a symbolic ref
// in r's git directory, for a write git cannot be told not to follow one
// with (fast-import's, a fetch's). git keeps a symbolic ref as a loose file holding
// "ref: <name>", or as a link (a link whose text starts with refs/ is
// read as such a name, any other is followed), never in packed-refs; the
// file is looked at directly, with no git started. A repository keeping
// its refs in a reftable is asked with one git.
func refuseSymbolicRef(ctx context.Context, r *Repo, ref string) error {
	if fi, err := os.Lstat(filepath.Join(r.CommonDir, "reftable")); err == nil && fi.IsDir() {
		return refuseListedSymbolicRef(ctx, r, ref)
	}
	p := filepath.Join(r.CommonDir, filepath.FromSlash(ref))
	fi, err := os.Lstat(p)
	if err != nil || !(fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0) {
		return nil // none, or what git itself refuses to read as a ref
	}
	symbolic := fi.Mode()&os.ModeSymlink != 0
	if !symbolic {
		f, err := safefile.OpenNoFollow(p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", ref, err)
		}
		head := make([]byte, 4)
		n, _ := io.ReadFull(f, head)
		f.Close()
		symbolic = string(head[:n]) == "ref:"
	}
	if symbolic {
		return symbolicRefError(ref)
	}
	return nil
}

// refuseListedSymbolicRef is refuseSymbolicRef asking git.
func refuseListedSymbolicRef(ctx context.Context, r *Repo, ref string) error {
	out, err := r.Git(ctx, "", "for-each-ref", "--format=%(refname) %(symref)", ref)
	if err != nil {
		return fmt.Errorf("reading %s: %w", ref, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if name, target, _ := strings.Cut(line, " "); name == ref && target != "" {
			return symbolicRefError(ref)
		}
	}
	return nil
}

func symbolicRefError(ref string) error {
	return fmt.Errorf("%s names another ref (remove it: git update-ref --no-deref -d %s): %w", ref, ref, ErrSymbolicRef)
}
