package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/planexhq/planex/internal/abbrev"
)

// Trailer keys planex writes on every task commit.
const (
	TrailerSession = "Planex-Session"
	TrailerTask    = "Planex-Task"
)

// TaskCommit is a task commit found on a run branch.
type TaskCommit struct {
	SHA     string
	Session string
	Task    string
	Subject string
	Body    string
}

// TaskCommits walks branch from its tip back to (not including) base and
// returns the planex task commits, oldest first. The repository is read
// from the common git directory (where branches and objects live), not
// through the worktree's .git entry, which planex does not trust.
func (r *Repo) TaskCommits(ctx context.Context, branch, base string) ([]TaskCommit, error) {
	repo, err := git.Open(filesystem.NewStorage(osfs.New(r.CommonDir), cache.NewObjectLRUDefault()), nil)
	if err != nil {
		return nil, fmt.Errorf("opening repository: %w", err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading branch %s: %w", branch, err)
	}
	iter, err := repo.Log(&git.LogOptions{From: ref.Hash(), Order: git.LogOrderCommitterTime})
	if err != nil {
		return nil, fmt.Errorf("reading history of %s: %w", branch, err)
	}
	defer iter.Close()
	var out []TaskCommit
	err = iter.ForEach(func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.Hash.String() == base {
			return storer.ErrStop
		}
		tc := ParseTaskCommit(c.Hash.String(), c.Message)
		if tc.Task != "" {
			out = append(out, tc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", branch, err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// ParseTaskCommit reads planex's trailers from the last paragraph of a
// commit message (where TaskMessage puts them, and nowhere else).
func ParseTaskCommit(sha, msg string) TaskCommit {
	tc := TaskCommit{SHA: sha}
	subject, body, _ := strings.Cut(strings.TrimRight(msg, "\n"), "\n")
	tc.Subject = subject
	body = strings.TrimSpace(body)
	paras := strings.Split(body, "\n\n")
	last := paras[len(paras)-1]
	for _, line := range strings.Split(last, "\n") {
		k, v, ok := strings.Cut(line, ":")
		switch {
		case ok && k == TrailerSession:
			tc.Session = strings.TrimSpace(v)
		case ok && k == TrailerTask:
			tc.Task = strings.TrimSpace(v)
		}
	}
	if tc.Task != "" {
		paras = paras[:len(paras)-1]
	}
	tc.Body = strings.TrimSpace(strings.Join(paras, "\n\n"))
	return tc
}

// TaskMessage builds the commit message of a task: "T2: title", an
// optional body, and the trailers that let a resumed run recognise it.
func TaskMessage(session, task, title, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", task, abbrev.Truncate(abbrev.OneLine(title), 72))
	if body = strings.TrimSpace(body); body != "" {
		// Agent-written text must not be able to forge a trailer.
		body = strings.ReplaceAll(body, "\n\n", "\n")
		body = strings.ReplaceAll(body, "Planex-", "Planex‑")
		b.WriteString("\n" + body + "\n")
	}
	fmt.Fprintf(&b, "\n%s: %s\n%s: %s\n", TrailerSession, session, TrailerTask, task)
	return b.String()
}
