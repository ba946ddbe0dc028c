package action

import (
	"context"
	"fmt"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/apicommit"
)

// apiCommits says whether GitHub makes the task commits (commit-signing:
// api): the engine's Publisher creates each one through the Git Data API
// and moves the run branch on GitHub, so planex never pushes it.
func (r *env) apiCommits() bool { return r.Cfg.CommitSigning == apicommit.ModeAPI }

// checkBranchOnGitHub makes sure that the run branch on GitHub is the
// local one (or that there is nothing to publish yet), where git mode
// would push it.
func (r *stateStore) checkBranchOnGitHub(ctx context.Context, rec *Record) error {
	local, err := rec.repo.ResolveBranch(ctx, rec.Branch)
	if err != nil {
		return err
	}
	remote, err := r.Repo.RemoteRef(ctx, r.Cfg.Remote, "refs/heads/"+rec.Branch)
	if err != nil {
		return err
	}
	if local == remote || (remote == "" && (local == "" || local == rec.Base)) {
		return nil
	}
	return fmt.Errorf("run branch %s is at %s here but at %s on GitHub; with commit-signing: api planex only moves it through GitHub's API and does not push it", rec.Branch, abbrev.SHA(local), orNothing(abbrev.SHA(remote)))
}

func orNothing(s string) string {
	if s == "" {
		return "nothing (no branch)"
	}
	return s
}

// commitMaker has GitHub make a commit without moving a branch, and takes
// such commits as candidates when publishing; *apicommit.Publisher is one.
type commitMaker interface {
	Make(ctx context.Context, parent, commit string) (string, error)
	Offer(sha string)
}

// makeOnGitHub has GitHub make a matrix task job's commit (on the wave's
// base, no branch moved) when commit-signing is api; otherwise it returns
// the local commit.
func (r *engines) makeOnGitHub(ctx context.Context, parent, commit string) (string, error) {
	if !r.apiCommits() {
		return commit, nil
	}
	m, ok := r.Engine.Publisher.(commitMaker)
	if !ok {
		return "", fmt.Errorf("commit-signing: api, but no way to make commits on GitHub was configured")
	}
	return m.Make(ctx, parent, commit)
}

// offerToPublisher lets collect put a task job's commit, which GitHub
// made, on the run branch as it is when it sits on the branch's tip.
func (r *engines) offerToPublisher(sha string) {
	if m, ok := r.Engine.Publisher.(commitMaker); ok && r.apiCommits() {
		m.Offer(sha)
	}
}
