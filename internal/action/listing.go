package action

import (
	"context"
	"slices"
	"strings"
)

// refListing is one listing of the remote (one git ls-remote): the refs
// it named for the patterns asked, each a ref's full name or a folder
// ending in "/*".
type refListing struct {
	patterns []string
	refs     map[string]string
}

// tip is what the listing says of ref: its commit ("" when the remote has
// no such ref) and whether ref was among what was asked; when it was
// not, the listing says nothing of it and the caller asks the remote.
func (l refListing) tip(ref string) (string, bool) {
	asked := slices.ContainsFunc(l.patterns, func(p string) bool {
		if dir, ok := strings.CutSuffix(p, "*"); ok && strings.HasSuffix(dir, "/") {
			return strings.HasPrefix(ref, dir) && len(ref) > len(dir)
		}
		return p == ref
	})
	if !asked {
		return "", false
	}
	return l.refs[ref], true
}

// listForApproval lists, by one connection, the refs an approve job
// reads: the thread's state, the run branches (planex/…) and the base
// branches this job knows without asking GitHub (the configured base,
// the default branch). Before, the state, the run branch and the base
// were three listings.
func (r *executor) listForApproval(ctx context.Context, th thread) (refListing, error) {
	patterns := []string{stateRef(th.Number), runBranches}
	for _, b := range []string{r.Cfg.BaseBranch, r.defaultBranchName, r.Cfg.DefaultBranch} {
		if b != "" && !slices.Contains(patterns, "refs/heads/"+b) {
			patterns = append(patterns, "refs/heads/"+b)
		}
	}
	refs, err := r.Repo.ListRemoteRefs(ctx, r.Cfg.Remote, patterns...)
	if err != nil {
		return refListing{}, err
	}
	return refListing{patterns: patterns, refs: refs}, nil
}
