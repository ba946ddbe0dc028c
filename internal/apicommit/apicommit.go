// Package apicommit recreates planex's task commits on GitHub through the
// Git Data API (commit-signing: api). GitHub signs a commit it makes
// itself when the request names no author, committer or signature, so
// the commits show as Verified and pass "require signed commits" branch
// protection, which plain git pushes from a bot cannot.
//
// The commit is always built locally first, exactly as in git mode; only
// its changes travel (blobs, a tree on top of the parent's), and the tree
// GitHub makes is checked against the local one, so both modes give every
// task the same tree.
package apicommit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
)

// Modes of the commit-signing setting.
const (
	ModeGit = "git" // commits made by git and pushed (the default)
	ModeAPI = "api" // commits made by GitHub through the Git Data API
)

// ParseMode checks a commit-signing value ("" is git).
func ParseMode(s string) (string, error) {
	switch s {
	case "", ModeGit:
		return ModeGit, nil
	case ModeAPI:
		return ModeAPI, nil
	}
	return "", fmt.Errorf("commit-signing is %q; use git or api", s)
}

// MaxBlobSize is the largest blob GitHub's API accepts (100 MB).
const MaxBlobSize = 100 << 20

// Limits of one tree request: text files up to inlineMax bytes travel in
// the tree request itself (no blob request each), up to inlineBudget
// bytes and maxEntries entries per request; larger changes are split
// over several trees, each on top of the previous one.
const (
	inlineMax    = 64 << 10
	inlineBudget = 1 << 20
	maxEntries   = 500
)

// GitData is what publishing needs from GitHub; *gh.Client has it.
type GitData interface {
	CreateBlob(ctx context.Context, owner, repo string, content []byte) (string, error)
	CreateTree(ctx context.Context, owner, repo, base string, entries []gh.TreeEntry) (string, error)
	CreateCommit(ctx context.Context, owner, repo, message, tree string, parents ...string) (gh.GitCommit, error)
	BranchTip(ctx context.Context, owner, repo, branch string) (string, error)
	AdvanceBranch(ctx context.Context, owner, repo, branch, old, sha string) error
}

// Local is what publishing needs from the local repository; *gitrepo.Repo
// has it.
type Local interface {
	DiffTrees(ctx context.Context, from, to string) ([]gitrepo.Change, error)
	TreeOf(ctx context.Context, commit string) (string, error)
	CommitMessage(ctx context.Context, sha string) (string, error)
	BlobSize(ctx context.Context, sha string) (int64, error)
	ReadBlob(ctx context.Context, sha string) ([]byte, error)
	EnsureCommit(ctx context.Context, remote, sha string) error
	ResolveBranch(ctx context.Context, branch string) (string, error)
	UpdateBranch(ctx context.Context, branch, newSHA, oldSHA, reason string) error
	IsAncestor(ctx context.Context, a, b string) bool
	Parents(ctx context.Context, sha string) ([]string, error)
}

// Publisher makes task commits on GitHub. It implements the engine's
// execute.Publisher.
type Publisher struct {
	GH          GitData
	Local       Local
	Owner, Repo string
	Remote      string // the git remote that is this GitHub repository ("origin")
	Log         *slog.Logger
	// MaxBlob is the largest file sent (MaxBlobSize when zero).
	MaxBlob int64

	// entriesPerTree bounds the entries of one tree request (maxEntries
	// when zero); tests lower it.
	entriesPerTree int
	// inlinePerTree bounds the text bytes one tree request carries
	// (inlineBudget when zero); tests lower it.
	inlinePerTree int

	mu     sync.Mutex
	offers []string // commits GitHub made already (see Offer)
}

// ErrBlobTooLarge is a file larger than GitHub's API accepts.
var ErrBlobTooLarge = errors.New("too large for GitHub's API")

// Publish makes on GitHub the commit that local commit is (its tree and
// message) on top of parent, moves branch on GitHub from parent to it
// (creating the branch when GitHub has none), fetches it and returns it.
// A commit GitHub made already (see Offer) with that parent, tree and
// message is taken as it is. The branch is never forced: a branch GitHub
// has elsewhere is an error.
func (p *Publisher) Publish(ctx context.Context, branch, parent, commit string) (string, error) {
	remoteTip, err := p.GH.BranchTip(ctx, p.Owner, p.Repo, branch)
	if err != nil {
		return "", err
	}
	if remoteTip != "" && remoteTip != parent {
		return "", fmt.Errorf("%w: branch %s on GitHub is at %s, not at %s where this commit goes; planex does not overwrite it", gh.ErrBranchMoved, branch, short(remoteTip), short(parent))
	}
	made, err := p.offered(ctx, parent, commit)
	if err != nil {
		return "", err
	}
	if made == "" {
		if made, err = p.make(ctx, parent, commit, remoteTip == ""); err != nil {
			return "", err
		}
	}
	if err := p.GH.AdvanceBranch(ctx, p.Owner, p.Repo, branch, remoteTip, made); err != nil {
		return "", err
	}
	if err := p.fetch(ctx, made, commit); err != nil {
		return "", err
	}
	p.log().Info("branch moved on GitHub", "branch", branch, "commit", made)
	return made, nil
}

// Make has GitHub make the commit that local commit is on top of parent,
// without moving any branch (a matrix task job, whose commit collect puts
// on the branch later), fetches it and returns it.
func (p *Publisher) Make(ctx context.Context, parent, commit string) (string, error) {
	made, err := p.make(ctx, parent, commit, false)
	if err != nil {
		return "", err
	}
	return made, p.fetch(ctx, made, commit)
}

// Offer makes a commit GitHub made earlier (a matrix task job's) a
// candidate for Publish, which takes it instead of making the same commit
// again when it has the parent, tree and message wanted.
func (p *Publisher) Offer(sha string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offers = append(p.offers, sha)
}

// offered finds an offered commit that is commit on parent.
func (p *Publisher) offered(ctx context.Context, parent, commit string) (string, error) {
	p.mu.Lock()
	offers := append([]string(nil), p.offers...)
	p.mu.Unlock()
	if len(offers) == 0 {
		return "", nil
	}
	tree, err := p.Local.TreeOf(ctx, commit)
	if err != nil {
		return "", err
	}
	msg, err := p.Local.CommitMessage(ctx, commit)
	if err != nil {
		return "", err
	}
	for _, o := range offers {
		if ot, err := p.Local.TreeOf(ctx, o); err != nil || ot != tree {
			continue
		}
		if om, err := p.Local.CommitMessage(ctx, o); err != nil || om != msg {
			continue
		}
		if ps, err := p.Local.Parents(ctx, o); err != nil || len(ps) != 1 || ps[0] != parent {
			continue
		}
		return o, nil
	}
	return "", nil
}

// make sends the changes from parent to commit and has GitHub make the
// commit; newBranch says the run branch is not on GitHub yet.
func (p *Publisher) make(ctx context.Context, parent, commit string, newBranch bool) (string, error) {
	changes, err := p.Local.DiffTrees(ctx, parent, commit)
	if err != nil {
		return "", err
	}
	if err := p.checkSizes(ctx, changes); err != nil {
		return "", err
	}
	baseTree, err := p.Local.TreeOf(ctx, parent)
	if err != nil {
		return "", err
	}
	wantTree, err := p.Local.TreeOf(ctx, commit)
	if err != nil {
		return "", err
	}
	msg, err := p.Local.CommitMessage(ctx, commit)
	if err != nil {
		return "", err
	}
	tree, err := p.tree(ctx, baseTree, changes)
	if err != nil {
		return "", err
	}
	if tree != wantTree {
		return "", fmt.Errorf("GitHub made tree %s for commit %s, not %s as git does; not publishing it", short(tree), short(commit), short(wantTree))
	}
	made, err := p.GH.CreateCommit(ctx, p.Owner, p.Repo, msg, tree, parent)
	if err != nil {
		if newBranch {
			return "", fmt.Errorf("%w (is %s on GitHub? push it first: the run starts from it)", err, short(parent))
		}
		return "", err
	}
	p.log().Info("commit made by GitHub", "commit", made.SHA, "verified", made.Verified)
	return made.SHA, nil
}

// fetch brings the commit GitHub made here and checks it is commit's tree.
func (p *Publisher) fetch(ctx context.Context, made, commit string) error {
	if err := p.Local.EnsureCommit(ctx, p.Remote, made); err != nil {
		return fmt.Errorf("fetching the commit GitHub made (%s): %w", short(made), err)
	}
	want, err := p.Local.TreeOf(ctx, commit)
	if err != nil {
		return err
	}
	if got, err := p.Local.TreeOf(ctx, made); err != nil || got != want {
		return fmt.Errorf("the commit GitHub made (%s) does not have tree %s: %v", short(made), short(want), err)
	}
	return nil
}

// Sync moves the local branch to GitHub's when GitHub's is ahead: a run
// killed after GitHub took a commit and before planex recorded it finds
// that commit (and its task) when it resumes.
func (p *Publisher) Sync(ctx context.Context, branch string) error {
	remoteTip, err := p.GH.BranchTip(ctx, p.Owner, p.Repo, branch)
	if err != nil || remoteTip == "" {
		return err
	}
	local, err := p.Local.ResolveBranch(ctx, branch)
	if err != nil || local == remoteTip {
		return err
	}
	if err := p.Local.EnsureCommit(ctx, p.Remote, remoteTip); err != nil {
		return fmt.Errorf("fetching branch %s from GitHub: %w", branch, err)
	}
	if local != "" && !p.Local.IsAncestor(ctx, local, remoteTip) {
		if p.Local.IsAncestor(ctx, remoteTip, local) {
			return fmt.Errorf("branch %s here (%s) is ahead of GitHub's (%s), which commit-signing: api never leaves it; were its commits made in git mode? Push them or start a new run", branch, short(local), short(remoteTip))
		}
		return fmt.Errorf("branch %s here (%s) and on GitHub (%s) have diverged; planex does not overwrite either", branch, short(local), short(remoteTip))
	}
	return p.Local.UpdateBranch(ctx, branch, remoteTip, local, "planex: "+branch+" as on GitHub")
}

// checkSizes refuses, before anything is sent, a change with a file GitHub
// would not take.
func (p *Publisher) checkSizes(ctx context.Context, changes []gitrepo.Change) error {
	for _, c := range changes {
		if !isBlob(c) {
			continue
		}
		n, err := p.Local.BlobSize(ctx, c.Blob)
		if err != nil {
			return err
		}
		limit := p.MaxBlob
		if limit <= 0 {
			limit = MaxBlobSize
		}
		if n > limit {
			return fmt.Errorf("%s is %s, %w (at most %s per file); keep it out of the task or use commit-signing: git", c.Path, size(n), ErrBlobTooLarge, size(limit))
		}
	}
	return nil
}

func isBlob(c gitrepo.Change) bool { return c.Mode != "000000" && c.Mode != "160000" }

// tree builds the new tree on GitHub from base with changes applied, in as
// few requests as the limits allow, reusing every unchanged entry of base.
func (p *Publisher) tree(ctx context.Context, base string, changes []gitrepo.Change) (string, error) {
	perTree := p.entriesPerTree
	if perTree <= 0 {
		perTree = maxEntries
	}
	budget := p.inlinePerTree
	if budget <= 0 {
		budget = inlineBudget
	}
	uploaded := map[string]bool{} // blobs sent already (the same content at two paths)
	var batch []gh.TreeEntry
	inlined := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		t, err := p.GH.CreateTree(ctx, p.Owner, p.Repo, base, batch)
		if err != nil {
			return err
		}
		base, batch, inlined = t, nil, 0
		return nil
	}
	for _, c := range changes {
		e := gh.TreeEntry{Path: c.Path, Mode: c.Mode, SHA: c.Blob}
		switch {
		case c.Mode == "000000":
			e = gh.TreeEntry{Path: c.Path, Mode: "100644", Delete: true}
		case c.Mode == "160000":
			// A submodule entry names a commit; there is nothing to send.
		case uploaded[c.Blob]:
		default:
			content, err := p.Local.ReadBlob(ctx, c.Blob)
			if err != nil {
				return "", err
			}
			if len(content) <= inlineMax && inlineText(content) {
				// A request whose inline budget is spent goes first, and
				// the text travels in the next (not as a blob request).
				if inlined+len(content) > budget {
					if err := flush(); err != nil {
						return "", err
					}
				}
				s := string(content)
				e.SHA, e.Content = "", &s
				inlined += len(content)
				break
			}
			sha, err := p.GH.CreateBlob(ctx, p.Owner, p.Repo, content)
			if err != nil {
				return "", fmt.Errorf("sending %s: %w", c.Path, err)
			}
			if sha != c.Blob {
				return "", fmt.Errorf("sending %s: GitHub stored blob %s, not %s", c.Path, short(sha), short(c.Blob))
			}
			uploaded[c.Blob] = true
		}
		batch = append(batch, e)
		if len(batch) >= perTree || inlined >= budget {
			if err := flush(); err != nil {
				return "", err
			}
		}
	}
	if err := flush(); err != nil {
		return "", err
	}
	return base, nil
}

// inlineText says whether content can travel as a tree entry's content:
// that field is a UTF-8 string, so binary content goes as a base64 blob.
func inlineText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c == 0 {
			return false
		}
	}
	return true
}

func (p *Publisher) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}

// size says a byte count in the unit GitHub's limit is stated in.
func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}
