package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRedTeamRemoteRefMatchesNoTail: whoever can push a branch (but not
// to the protected main) pushes decoys whose names end in the refs planex
// asks the remote about: a/refs/heads/main, which git ls-remote lists for
// refs/heads/main (it matches a name's tail) and sorts before it, so
// planex planned on the decoy's commit as main's; x/refs/planex/state/9
// where no state 9 exists; x/refs/planex/state/7 beside a real state 7.
// Each lookup names the ref of exactly that name, or none.
func TestRedTeamRemoteRefMatchesNoTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	main := strings.TrimSpace(mustGit(t, origin, "rev-parse", "refs/heads/main"))
	mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "the pusher's")
	decoy := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	mustGit(t, r.Root, "push", "-q", origin,
		"HEAD:refs/heads/a/refs/heads/main",
		"HEAD:refs/heads/x/refs/planex/state/9",
		"HEAD:refs/heads/x/refs/planex/state/7",
		"HEAD~1:refs/planex/state/7")

	if got, err := c.RemoteRef(ctx, "origin", "refs/heads/main"); err != nil || got != main {
		t.Errorf("RemoteRef(refs/heads/main) = %q, %v; want main's %s (the decoy is %s)", got, err, main, decoy)
	}
	if got, err := c.RemoteRef(ctx, "origin", "refs/planex/state/9"); err != nil || got != "" {
		t.Errorf("RemoteRef of a missing ref = %q, %v; want none", got, err)
	}
	if found, err := c.FetchRef(ctx, "origin", "refs/planex/state/9"); err != nil || found {
		t.Errorf("FetchRef of a missing ref = %v, %v; want not found, no error", found, err)
	}
	if got, err := FetchRefTip(ctx, c, "origin", "refs/planex/state/7"); err != nil || got != main {
		t.Errorf("FetchRefTip(refs/planex/state/7) = %q, %v; want %s (the decoy is %s)", got, err, main, decoy)
	} else if local := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", "refs/planex/state/7")); local != main {
		t.Errorf("FetchRefTip fetched %s into refs/planex/state/7, want %s", local, main)
	}
	refs, err := c.ListRemoteRefs(ctx, "origin", "refs/planex/state/*")
	if err != nil || len(refs) != 1 || refs["refs/planex/state/7"] != main {
		t.Errorf("ListRemoteRefs(refs/planex/state/*) = %v, %v; want state 7 at %s alone", refs, err, main)
	}
	// Two patterns, one listing: each name matches one of them exactly or
	// under its folder, never by its tail.
	refs, err = c.ListRemoteRefs(ctx, "origin", "refs/heads/main", "refs/planex/state/*")
	if err != nil || len(refs) != 2 || refs["refs/heads/main"] != main || refs["refs/planex/state/7"] != main {
		t.Errorf("ListRemoteRefs(refs/heads/main, refs/planex/state/*) = %v, %v; want main and state 7 at %s alone", refs, err, main)
	}
}

// TestRedTeamResolveBranchMatchesNoFolder: a local planex/7-x/y (fetched
// or left by a clone's history) stands where planex/7-x does not exist;
// git for-each-ref lists it for refs/heads/planex/7-x, whose commit was
// taken for the run branch's.
func TestRedTeamResolveBranchMatchesNoFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	mustGit(t, r.Root, "branch", "planex/7-x/y")
	mustGit(t, r.Root, "branch", "planex/8-x")
	head := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	for _, tc := range []struct{ branch, want string }{
		{"planex/7-x", ""},
		{"planex/8-x", head},
		{"planex", ""},
	} {
		if got, err := r.ResolveBranch(ctx, tc.branch); err != nil || got != tc.want {
			t.Errorf("ResolveBranch(%s) = %q, %v; want %q", tc.branch, got, err, tc.want)
		}
	}
}

// TestRedTeamRevisionsAreNoOptions: a commit planex hands git may come
// from a record whoever can push wrote (a state ref's base). git reads
// options after the revisions: EnsureCommit's fetch took
// "--upload-pack=<command>" and ran the command (a file or ssh remote),
// DiffTrees' diff-tree took "--output=<file>" and wrote the file, and a
// short id named whichever object has that prefix. Each is refused before
// git runs, the files untouched.
func TestRedTeamRevisionsAreNoOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	_, c := cloneOf(t, r)
	head := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", "HEAD"))
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	victim := filepath.Join(dir, "victim")
	const keep = "kept\n"
	if err := os.WriteFile(victim, []byte(keep), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{"--upload-pack=touch " + ran + ";false", head[:12], head + "^"} {
		if err := c.EnsureCommit(ctx, "origin", sha); !errors.Is(err, ErrNotObjectID) {
			t.Errorf("EnsureCommit(%q) = %v, want ErrNotObjectID", sha, err)
		}
	}
	if err := c.EnsureCommit(ctx, "origin", head); err != nil {
		t.Errorf("EnsureCommit of a full id: %v", err)
	}
	if _, err := c.DiffTrees(ctx, "--output="+victim, head); !errors.Is(err, ErrOptionRevision) {
		t.Errorf("DiffTrees from an option = %v, want ErrOptionRevision", err)
	}
	if err := c.AddWorktree(ctx, filepath.Join(dir, "wt"), "-Bmain"); !errors.Is(err, ErrOptionRevision) {
		t.Errorf("AddWorktree at an option = %v, want ErrOptionRevision", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command a forged base named ran")
	}
	if b, _ := os.ReadFile(victim); string(b) != keep {
		t.Errorf("the file a forged base named was written: %q", b)
	}
}

// TestRedTeamRemoteRefListingBounded: whoever can push makes 250,000
// branches under planex/ with 200-byte names (50 MB of listing; a
// branch costs its name alone): planex, which lists the remote's
// planex/* branches to pick a free run branch, held git's whole answer,
// split it and kept a map of it. The listing is read up to 16 MiB and
// refused past it (ErrTooManyRefs); a lookup of main is unaffected.
// Not parallel: it measures the process's allocations.
func TestRedTeamRemoteRefListingBounded(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	main := strings.TrimSpace(mustGit(t, origin, "rev-parse", "refs/heads/main"))
	var packed strings.Builder
	packed.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	names := []string{"refs/heads/main"}
	long := strings.Repeat("x", 180)
	for i := range 250_000 {
		names = append(names, fmt.Sprintf("refs/heads/planex/%07d-%s", i, long))
	}
	sort.Strings(names)
	for _, n := range names {
		packed.WriteString(main + " " + n + "\n")
	}
	if err := os.WriteFile(filepath.Join(origin, "packed-refs"), []byte(packed.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(origin, "refs", "heads", "main"))
	var err error
	got := allocated(func() { _, err = c.ListRemoteRefs(ctx, "origin", "refs/heads/planex/*") })
	if !errors.Is(err, ErrTooManyRefs) {
		t.Errorf("listing 250,000 pushed branches = %v, want ErrTooManyRefs", err)
	}
	// The bounded read allocates about 50 MiB in all as its buffers grow
	// (64 MiB in one loaded full run: allocations are not the process's
	// alone); holding the whole answer allocated 238 MiB.
	t.Logf("listing the pushed branches allocated %d KiB", got>>10)
	if got > 128<<20 {
		t.Errorf("listing the pushed branches allocated %d MiB; want at most 128 MiB", got>>20)
	}
	if sha, err := c.RemoteRef(ctx, "origin", "refs/heads/main"); err != nil || sha != main {
		t.Errorf("RemoteRef(main) beside them = %q, %v; want %s", sha, err, main)
	}
}

// TestRedTeamFetchRefTakesNoGuess: git fetch reads a refspec's source the
// way it reads a name a person typed, so where refs/planex/state/9 is
// missing it fetched a pushed branch named refs/planex/state/9
// (refs/heads/refs/planex/state/9) into the state ref, and a tag or
// refs/remotes/ ref named like a run branch into that branch. Each
// missing ref is reported missing and left unwritten; a ref the remote
// holds is fetched as it is, not as the decoy beside it.
func TestRedTeamFetchRefTakesNoGuess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	real := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "the pusher's")
	// The real state first: git push also guesses a destination's name,
	// and would have updated the decoy branch pushed before it.
	mustGit(t, r.Root, "push", "-q", origin, "HEAD~1:refs/planex/state/7")
	mustGit(t, r.Root, "push", "-q", origin,
		"HEAD:refs/heads/refs/planex/state/9",
		"HEAD:refs/tags/refs/heads/planex/s2",
		"HEAD:refs/remotes/refs/heads/planex/s3",
		"HEAD:refs/refs/heads/planex/s4",
		"HEAD:refs/heads/refs/planex/state/7")
	for _, ref := range []string{"refs/planex/state/9", "refs/heads/planex/s2", "refs/heads/planex/s3", "refs/heads/planex/s4"} {
		if found, err := c.FetchRef(ctx, "origin", ref); err != nil || found {
			t.Errorf("FetchRef(%s) with only a decoy = %v, %v; want not found", ref, found, err)
		}
		if out, err := c.Git(ctx, "", "for-each-ref", ref); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("after FetchRef(%s) the local ref is %q, %v; want none", ref, out, err)
		}
	}
	if found, err := c.FetchRef(ctx, "origin", "refs/planex/state/7"); err != nil || !found {
		t.Fatalf("FetchRef(refs/planex/state/7) = %v, %v", found, err)
	}
	if got := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", "refs/planex/state/7")); got != real {
		t.Errorf("fetched state 7 = %s, want %s (not the decoy branch's)", got, real)
	}
}

// TestRedTeamPushGoesNowhereElse: git push also guesses a destination's
// name. Someone pushes a branch named refs/planex/state/5 and one named
// refs/heads/planex/s5 (refs/heads/refs/heads/planex/s5) at an ancestor
// of planex's commits; planex's pushes of the missing state ref and run
// branch updated those branches instead and reported success, so the
// state was never saved. Each push is reported as gone astray.
func TestRedTeamPushGoesNowhereElse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	mustGit(t, r.Root, "push", "-q", origin,
		"HEAD:refs/heads/refs/planex/state/5", "HEAD:refs/heads/refs/heads/planex/s5")
	mustGit(t, c.Root, "commit", "-q", "--allow-empty", "-m", "planex's")
	mustGit(t, c.Root, "update-ref", "refs/planex/state/5", "HEAD")
	mustGit(t, c.Root, "update-ref", "refs/heads/planex/s5", "HEAD")
	if err := c.PushRef(ctx, "origin", "refs/planex/state/5", false, ""); !errors.Is(err, ErrPushedElsewhere) {
		t.Errorf("PushRef of state 5 beside a decoy branch = %v; want ErrPushedElsewhere", err)
	}
	err := c.PushRefs(ctx, "origin", []RefPush{{Ref: "refs/heads/planex/s5"}})
	if !errors.Is(err, ErrPushedElsewhere) {
		t.Errorf("PushRefs of planex/s5 beside a decoy branch = %v; want ErrPushedElsewhere", err)
	}
	// A push with no decoy is still reported as done.
	mustGit(t, c.Root, "update-ref", "refs/planex/state/6", "HEAD")
	if err := c.PushRef(ctx, "origin", "refs/planex/state/6", false, ""); err != nil {
		t.Errorf("PushRef of state 6 = %v", err)
	}
	if err := c.PushRefs(ctx, "origin", []RefPush{{Ref: "refs/planex/state/6"}}); err != nil {
		t.Errorf("PushRefs of state 6, up to date = %v", err)
	}
}

// TestRedTeamParentsOfAnIDOnly: a matrix task's result names its commit
// in a message whoever can push wrote; a name or an expression there
// (HEAD, a branch, main's commit reached by its message) was resolved by
// git and passed the check that the commit sits on the wave's base, to
// be offered to the publisher as the commit. Only a full id is read.
func TestRedTeamParentsOfAnIDOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "second")
	head := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	for _, name := range []string{"HEAD", "main", "HEAD^{/second}", head[:12], "--all", head + "^0"} {
		if ps, err := r.Parents(ctx, name); !errors.Is(err, ErrNotObjectID) {
			t.Errorf("Parents(%q) = %v, %v; want ErrNotObjectID", name, ps, err)
		}
	}
	if ps, err := r.Parents(ctx, head); err != nil || len(ps) != 1 {
		t.Errorf("Parents(%s) = %v, %v; want its one parent", head, ps, err)
	}
}

// TestRedTeamParentsOfACommitOnly: the id a matrix task's result names
// may be an annotated tag's (whoever can push pushes one): git read it as
// the commit it tags, so a tag of a commit on the wave's base passed the
// check that the result sits on the base, and the tag's id, not a
// commit's, was offered to the publisher as the task's commit.
func TestRedTeamParentsOfACommitOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "task")
	mustGit(t, r.Root, "tag", "-a", "-m", "looks like the task's commit", "decoy")
	tag := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "decoy"))
	if ps, err := r.Parents(ctx, tag); !errors.Is(err, ErrNotCommit) {
		t.Errorf("Parents(tag %s) = %v, %v; want ErrNotCommit (the tagged commit's parent is %s)", tag, ps, err, base)
	}
	tree := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD^{tree}"))
	if ps, err := r.Parents(ctx, tree); err == nil {
		t.Errorf("Parents(tree %s) = %v; want an error", tree, ps)
	}
	head := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	if ps, err := r.Parents(ctx, head); err != nil || len(ps) != 1 || ps[0] != base {
		t.Errorf("Parents(%s) = %v, %v; want [%s]", head, ps, err, base)
	}
	if ps, err := r.Parents(ctx, base); err != nil || len(ps) != 0 {
		t.Errorf("Parents(root %s) = %v, %v; want none", base, ps, err)
	}
}

// TestRedTeamCommitReadersTakeCommitIDsOnly: CommitMessage, TreeOf and
// IsAncestor handed what they were given to git, which reads a branch, a
// tag, `HEAD~1`, an option-like name or an annotated tag's id as whatever
// it leads to; whoever can push a tag (or a branch named like planex's
// ref) had another commit's message, tree or history read in place of the
// one asked for. Each must take only a commit's full object id.
func TestRedTeamCommitReadersTakeCommitIDsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "forged message")
	forged := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	mustGit(t, r.Root, "tag", "-a", "-m", "decoy", "decoy")
	tag := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "decoy"))
	mustGit(t, r.Root, "update-ref", "refs/heads/-x", forged)
	names := []string{"HEAD", "HEAD~1", "decoy", "main", "master", "-x", tag, forged[:12], strings.ToUpper(forged[:3]) + "x"}
	for _, n := range names {
		if msg, err := r.CommitMessage(ctx, n); err == nil {
			t.Errorf("CommitMessage(%q) read %q; want it refused", n, msg)
		}
		if tree, err := r.TreeOf(ctx, n); err == nil {
			t.Errorf("TreeOf(%q) read %s; want it refused", n, tree)
		}
		if r.IsAncestor(ctx, base, n) || r.IsAncestor(ctx, n, forged) {
			t.Errorf("IsAncestor took %q as a commit", n)
		}
	}
	if msg, err := r.CommitMessage(ctx, tag); !errors.Is(err, ErrNotCommit) {
		t.Errorf("CommitMessage(tag) = %q, %v; want ErrNotCommit", msg, err)
	}
	if _, err := r.CommitMessage(ctx, "HEAD"); !errors.Is(err, ErrNotObjectID) {
		t.Errorf("CommitMessage(HEAD): %v; want ErrNotObjectID", err)
	}
	// Ids of commits are read as before.
	if msg, err := r.CommitMessage(ctx, forged); err != nil || msg != "forged message\n" {
		t.Errorf("CommitMessage(%s) = %q, %v", forged, msg, err)
	}
	want := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", forged+"^{tree}"))
	if tree, err := r.TreeOf(ctx, forged); err != nil || tree != want {
		t.Errorf("TreeOf(%s) = %s, %v; want %s", forged, tree, err, want)
	}
	if !r.IsAncestor(ctx, base, forged) || r.IsAncestor(ctx, forged, base) {
		t.Error("IsAncestor of two commits' ids answered wrong")
	}
}

// TestRedTeamPushMovesNoDecoy: whoever can push makes, where planex's ref
// R is missing on the remote, a ref git push takes for R (refs/heads/R,
// refs/tags/R, refs/R, refs/remotes/R) at an ancestor of planex's commit.
// planex's push (with or without a lease, alone or atomic) updated that
// ref before planex noticed; now git refuses it before anything moves:
// every decoy keeps its commit, R is not made, and the error says so.
func TestRedTeamPushMovesNoDecoy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	mustGit(t, c.Root, "commit", "-q", "--allow-empty", "-m", "planex's")
	mustGit(t, c.Root, "update-ref", "refs/planex/state/99", "HEAD")
	type push func(ref string) error
	pushes := map[string]push{
		"PushRef":            func(ref string) error { return c.PushRef(ctx, "origin", ref, false, "") },
		"PushRef with lease": func(ref string) error { return c.PushRef(ctx, "origin", ref, true, "") },
		"PushRefs":           func(ref string) error { return c.PushRefs(ctx, "origin", []RefPush{{Ref: ref}}) },
		"PushRefs with lease": func(ref string) error {
			return c.PushRefs(ctx, "origin", []RefPush{{Ref: "refs/planex/state/99"}, {Ref: ref, Lease: true}})
		},
	}
	n := 0
	for _, form := range []string{"refs/heads/%s", "refs/tags/%s", "refs/%s", "refs/remotes/%s"} {
		for name, p := range pushes {
			n++
			ref := fmt.Sprintf("refs/planex/state/%d", n)
			decoy := fmt.Sprintf(form, ref)
			mustGit(t, r.Root, "push", "-q", origin, "HEAD:"+decoy)
			before := mustGit(t, origin, "rev-parse", decoy)
			mustGit(t, c.Root, "update-ref", ref, "HEAD")
			if err := p(ref); !errors.Is(err, ErrPushedElsewhere) {
				t.Errorf("%s of %s beside %s: %v; want ErrPushedElsewhere", name, ref, decoy, err)
			}
			if after := mustGit(t, origin, "rev-parse", decoy); after != before {
				t.Errorf("%s of %s moved the decoy %s from %s to %s", name, ref, decoy, strings.TrimSpace(before), strings.TrimSpace(after))
			}
			if got := mustGit(t, origin, "for-each-ref", ref, "refs/planex/state/99"); got != "" {
				t.Errorf("%s beside %s pushed %s", name, decoy, got)
			}
		}
	}
	// Without a decoy the pushes are as before: made, leased, fast-forward.
	mustGit(t, c.Root, "update-ref", "refs/planex/state/100", "HEAD")
	if err := c.PushRef(ctx, "origin", "refs/planex/state/100", true, ""); err != nil {
		t.Errorf("PushRef of a new ref: %v", err)
	}
	mustGit(t, c.Root, "update-ref", "refs/heads/planex/b", "HEAD")
	if err := c.PushRefs(ctx, "origin", []RefPush{{Ref: "refs/heads/planex/b"}, {Ref: "refs/planex/state/100"}}); err != nil {
		t.Errorf("PushRefs of a new branch and an up-to-date ref: %v", err)
	}
	mustGit(t, c.Root, "update-ref", "refs/heads/planex/b", "HEAD~1")
	if err := c.PushRef(ctx, "origin", "refs/heads/planex/b", false, ""); err == nil {
		t.Error("PushRef of a non-fast-forward without a lease went through")
	}
}
