package gitrepo

import (
	"context"
	"fmt"
	"github.com/planexhq/planex/internal/abbrev"
	"strings"
)

// SetRef points ref at sha, whatever it pointed at before; an empty sha
// deletes the ref (a ref that does not exist is not an error then).
func (r *Repo) SetRef(ctx context.Context, ref, sha string) error {
	if sha == "" {
		if _, err := r.Git(ctx, "", "update-ref", "-d", ref); err != nil && refExists(ctx, r, ref) {
			return fmt.Errorf("deleting %s: %w", ref, err)
		}
		return nil
	}
	if _, err := r.Git(ctx, "", "update-ref", ref, sha); err != nil {
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
