package gitrepo

import (
	"context"
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
)

// ShowCommit returns a commit as a reviewer reads it: "commit <sha>", its
// message, then its patch as a plain unified diff (no colour, no external
// diff program). sha comes from a plan file, so one that git could read
// as an option is refused before git sees it.
func (r *Repo) ShowCommit(ctx context.Context, sha string) (string, error) {
	if sha == "" || strings.HasPrefix(sha, "-") {
		return "", fmt.Errorf("showing commit %q: not a commit id", sha)
	}
	out, err := r.Git(ctx, "", "show", "--no-color", "--no-ext-diff", "--format=commit %H%n%n%B", sha, "--")
	if err != nil {
		return "", fmt.Errorf("showing commit %s: %w", abbrev.SHA(sha), err)
	}
	return out, nil
}
