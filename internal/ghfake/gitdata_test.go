package ghfake

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
)

// gitFake is a fake whose Git Data API is backed by a fresh bare
// repository holding one commit on main.
func gitFake(t *testing.T) (*Fake, *github.Client, string, string) {
	t.Helper()
	f, c := newFake(t)
	work, bare := t.TempDir(), filepath.Join(t.TempDir(), "origin.git")
	run := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(work, "init", "-q", "-b", "main")
	run(work, "commit", "-q", "--allow-empty", "-m", "root")
	run(work, "clone", "-q", "--bare", work, bare)
	f.SetGitDir(repoName, bare)
	return f, c, bare, run(work, "rev-parse", "HEAD")
}

func TestGitDataVerifiesOnlyCommitsGitHubAuthors(t *testing.T) {
	ctx := context.Background()
	f, c, _, root := gitFake(t)
	tree, _, err := c.Git.CreateTree(ctx, "octo", "widgets", "", []*github.TreeEntry{
		{Path: github.String("dir/run.sh"), Mode: github.String("100755"), Type: github.String("blob"), Content: github.String("#!/bin/sh\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Entries) != 1 || tree.Entries[0].GetPath() != "dir" || tree.Entries[0].GetType() != "tree" {
		t.Errorf("tree entries = %+v", tree.Entries)
	}
	mine, _, err := c.Git.CreateCommit(ctx, "octo", "widgets", &github.Commit{Message: github.String("by GitHub"), Tree: tree, Parents: []*github.Commit{{SHA: github.String(root)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !mine.GetVerification().GetVerified() || mine.GetAuthor().GetName() != DefaultActor || mine.GetCommitter().GetName() != "GitHub" {
		t.Errorf("commit without author = %+v", mine)
	}
	theirs, _, err := c.Git.CreateCommit(ctx, "octo", "widgets", &github.Commit{Message: github.String("by someone"), Tree: tree,
		Author: &github.CommitAuthor{Name: github.String("Someone"), Email: github.String("s@example.com")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.Git.GetCommit(ctx, "octo", "widgets", theirs.GetSHA()); got.GetVerification().GetVerified() || got.GetVerification().GetReason() != "unsigned" {
		t.Errorf("commit with an author: verification %+v", got.GetVerification())
	}
	if v := f.Verification(repoName, root); v.Verified {
		t.Error("a pushed commit is verified")
	}
}

func TestGitDataRefsFastForwardOnly(t *testing.T) {
	ctx := context.Background()
	f, c, bare, root := gitFake(t)
	tree, _, _ := c.Git.CreateTree(ctx, "octo", "widgets", "", []*github.TreeEntry{{Path: github.String("a"), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String("a\n")}})
	next, _, err := c.Git.CreateCommit(ctx, "octo", "widgets", &github.Commit{Message: github.String("next"), Tree: tree, Parents: []*github.Commit{{SHA: github.String(root)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	side, _, _ := c.Git.CreateCommit(ctx, "octo", "widgets", &github.Commit{Message: github.String("side"), Tree: tree}, nil)
	ref := func(sha string) *github.Reference {
		return &github.Reference{Ref: github.String("refs/heads/planex/x"), Object: &github.GitObject{SHA: github.String(sha)}}
	}
	if _, _, err := c.Git.CreateRef(ctx, "octo", "widgets", ref(root)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Git.CreateRef(ctx, "octo", "widgets", ref(root)); !isStatus(err, http.StatusUnprocessableEntity) {
		t.Errorf("second create: %v", err)
	}
	if _, _, err := c.Git.UpdateRef(ctx, "octo", "widgets", ref(next.GetSHA()), false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Git.UpdateRef(ctx, "octo", "widgets", ref(side.GetSHA()), false); !isStatus(err, http.StatusUnprocessableEntity) {
		t.Errorf("non-fast-forward update: %v", err)
	}
	got, _, err := c.Git.GetRef(ctx, "octo", "widgets", "heads/planex/x")
	if err != nil || got.GetObject().GetSHA() != next.GetSHA() {
		t.Errorf("ref = %+v, %v", got, err)
	}
	if _, _, err := c.Git.GetRef(ctx, "octo", "widgets", "heads/nope"); !isStatus(err, http.StatusNotFound) {
		t.Errorf("missing ref: %v", err)
	}
	for prefix, want := range map[string]int{"heads/planex/": 1, "heads/planex/x": 1, "heads/plan": 1, "heads/nope": 0} {
		refs, _, err := c.Git.ListMatchingRefs(ctx, "octo", "widgets", &github.ReferenceListOptions{Ref: prefix})
		if err != nil || len(refs) != want {
			t.Errorf("matching %s: %d refs, %v; want %d", prefix, len(refs), err, want)
		}
	}
	log := f.RefLog(repoName, "refs/heads/planex/x")
	if len(log) != 2 || !log[0].API || !log[1].API || log[1].New != next.GetSHA() {
		t.Errorf("ref log = %+v", log)
	}
	out, _ := exec.Command("git", "--git-dir="+bare, "rev-parse", "planex/x").Output()
	if strings.TrimSpace(string(out)) != next.GetSHA() {
		t.Errorf("the bare repository has planex/x at %s", out)
	}
}
