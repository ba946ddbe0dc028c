package gh

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// ---- Git Data API (commits GitHub signs) ----

// The scope a token needs for every call here.
const contentsWrite = "contents: write"

// TreeEntry is one change to a tree: a path set to a blob (by SHA, or by
// UTF-8 Content GitHub stores as a blob), a submodule commit, or deleted.
type TreeEntry struct {
	Path    string
	Mode    string // 100644, 100755, 120000, 160000
	SHA     string // blob or commit; empty with Content, or for a deletion
	Content *string
	Delete  bool
}

// CreateBlob stores content as a blob and returns its SHA. Content is sent
// as UTF-8 when it is valid UTF-8 text and as base64 otherwise. Sending it
// twice is harmless: a blob is named by its content.
func (c *Client) CreateBlob(ctx context.Context, owner, repo string, content []byte) (string, error) {
	b := &github.Blob{Content: github.String(string(content)), Encoding: github.String("utf-8")}
	if !utf8.Valid(content) {
		b.Content, b.Encoding = github.String(base64.StdEncoding.EncodeToString(content)), github.String("base64")
	}
	var sha string
	err := c.createOnce(ctx, "blob", func() error {
		out, _, err := c.gh.Git.CreateBlob(ctx, owner, repo, b)
		sha = out.GetSHA()
		return err
	}, func() (bool, error) { return false, nil })
	return sha, classify(fmt.Sprintf("creating a blob in %s/%s", owner, repo), contentsWrite, err)
}

// CreateTree makes a tree from base (reusing every entry not named) with
// entries changed, and returns its SHA.
func (c *Client) CreateTree(ctx context.Context, owner, repo, base string, entries []TreeEntry) (string, error) {
	list := make([]*github.TreeEntry, len(entries))
	for i, e := range entries {
		te := &github.TreeEntry{Path: github.String(e.Path), Mode: github.String(e.Mode), Type: github.String("blob")}
		if e.Mode == "160000" {
			te.Type = github.String("commit")
		}
		switch {
		case e.Delete:
			// SHA and Content nil: go-github sends "sha": null.
		case e.Content != nil:
			te.Content = e.Content
		default:
			te.SHA = github.String(e.SHA)
		}
		list[i] = te
	}
	var sha string
	err := c.createOnce(ctx, "tree", func() error {
		out, _, err := c.gh.Git.CreateTree(ctx, owner, repo, base, list)
		sha = out.GetSHA()
		return err
	}, func() (bool, error) { return false, nil })
	return sha, classify(fmt.Sprintf("creating a tree in %s/%s", owner, repo), contentsWrite, err)
}

// GitCommit is a commit as the Git Data API describes it.
type GitCommit struct {
	SHA, Tree, Message string
	Parents            []string
	Verified           bool
	VerifiedReason     string
}

func gitCommit(c *github.Commit) GitCommit {
	out := GitCommit{SHA: c.GetSHA(), Tree: c.GetTree().GetSHA(), Message: c.GetMessage(),
		Verified: c.GetVerification().GetVerified(), VerifiedReason: c.GetVerification().GetReason()}
	for _, p := range c.Parents {
		out.Parents = append(out.Parents, p.GetSHA())
	}
	return out
}

// CreateCommit records a commit of tree with message on parents. It sets
// no author, committer or signature: GitHub then authors the commit as the
// token's account and signs it, so it shows as Verified.
func (c *Client) CreateCommit(ctx context.Context, owner, repo, message, tree string, parents ...string) (GitCommit, error) {
	in := &github.Commit{Message: github.String(message), Tree: &github.Tree{SHA: github.String(tree)}}
	for _, p := range parents {
		in.Parents = append(in.Parents, &github.Commit{SHA: github.String(p)})
	}
	var out GitCommit
	// Sent again after a lost answer, it only leaves an unused commit.
	err := c.createOnce(ctx, "commit", func() error {
		got, _, err := c.gh.Git.CreateCommit(ctx, owner, repo, in, nil)
		if err == nil {
			out = gitCommit(got)
		}
		return err
	}, func() (bool, error) { return false, nil })
	return out, classify(fmt.Sprintf("creating a commit in %s/%s", owner, repo), contentsWrite, err)
}

// GetCommit returns a commit with GitHub's verdict on its signature.
func (c *Client) GetCommit(ctx context.Context, owner, repo, sha string) (GitCommit, error) {
	got, _, err := c.gh.Git.GetCommit(ctx, owner, repo, sha)
	if err != nil {
		return GitCommit{}, classify(fmt.Sprintf("reading commit %s in %s/%s", sha, owner, repo), "contents: read", err)
	}
	return gitCommit(got), nil
}

// BranchTip returns the commit branch points at, or "" when there is no
// such branch. It lists matching refs rather than reading the one ref: a
// missing ref is then an empty list, not a 404 the client would retry
// for a while after its own creates.
func (c *Client) BranchTip(ctx context.Context, owner, repo, branch string) (string, error) {
	refs, _, err := c.gh.Git.ListMatchingRefs(ctx, owner, repo, &github.ReferenceListOptions{Ref: "heads/" + branch})
	if err != nil {
		return "", classify(fmt.Sprintf("reading branch %s of %s/%s", branch, owner, repo), "contents: read", err)
	}
	for _, r := range refs {
		if r.GetRef() == "refs/heads/"+branch {
			return r.GetObject().GetSHA(), nil
		}
	}
	return "", nil
}

// ErrBranchMoved means a branch was not where a fast-forward expected it.
var ErrBranchMoved = errors.New("the branch moved")

// AdvanceBranch moves branch from old to sha, which must descend from it
// (never forced); with old empty it creates the branch at sha. A branch
// found elsewhere gives an error matching ErrBranchMoved.
func (c *Client) AdvanceBranch(ctx context.Context, owner, repo, branch, old, sha string) error {
	op := fmt.Sprintf("moving branch %s of %s/%s to %s", branch, owner, repo, sha)
	find := func() (bool, error) {
		tip, err := c.BranchTip(ctx, owner, repo, branch)
		return tip == sha, err
	}
	var err error
	if old == "" {
		err = c.createOnce(ctx, op, func() error {
			_, _, err := c.gh.Git.CreateRef(ctx, owner, repo, &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: github.String(sha)}})
			return err
		}, find)
	} else {
		err = c.createOnce(ctx, op, func() error {
			_, _, err := c.gh.Git.UpdateRef(ctx, owner, repo, &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: github.String(sha)}}, false)
			return err
		}, find)
	}
	if err == nil {
		return nil
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity {
		// The branch exists already, is gone, or is not an ancestor: say
		// where it is now (a retry whose first answer was lost finds sha).
		tip, terr := c.BranchTip(ctx, owner, repo, branch)
		if terr == nil && tip == sha {
			return nil
		}
		if terr == nil {
			where := "does not exist"
			if tip != "" {
				where = "is at " + tip
			}
			return fmt.Errorf("%s: %w: expected it at %s, but it %s (%s)", op, ErrBranchMoved, orNone(old), where, strings.TrimSpace(er.Message))
		}
	}
	return classify(op, contentsWrite, err)
}

func orNone(s string) string {
	if s == "" {
		return "nothing (a new branch)"
	}
	return s
}
