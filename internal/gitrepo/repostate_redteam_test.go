package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamReplaceRefsAndGraftsIgnored: whoever could write the
// repository before planex ran git (an earlier uncontained step, a
// prompt-injected shell) makes git read other objects for the ids planex
// asks about: refs/replace/<base> naming a commit of its own with
// `core.useReplaceRefs=true` in .git/config (git 2.39, Debian 12's, lets
// that setting switch back on what GIT_NO_REPLACE_OBJECTS turned off), and
// an info/grafts line giving a planex commit a parent of its choosing
// (grafts are honoured whatever GIT_NO_REPLACE_OBJECTS says). planex read
// the forged commit's message and tree for the base's id and took the
// forged commit for an ancestor. Each must read the objects themselves.
func TestRedTeamReplaceRefsAndGraftsIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	baseTree := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD^{tree}"))
	mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "tip")
	tip := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	// A commit of the attacker's, on no branch of planex's, with another tree.
	emptyTree := strings.TrimSpace(mustGitIn(t, r.Root, "", "mktree"))
	forged := strings.TrimSpace(mustGit(t, r.Root, "commit-tree", "-m", "forged", emptyTree))

	mustGit(t, r.Root, "replace", "-f", base, forged)
	mustGit(t, r.Root, "config", "core.useReplaceRefs", "true")
	grafts := filepath.Join(r.CommonDir, "info", "grafts")
	if err := os.MkdirAll(filepath.Dir(grafts), 0o755); err != nil {
		t.Fatal(err)
	}
	// tip's parent becomes forged (and the forged commit gains none).
	if err := os.WriteFile(grafts, []byte(tip+" "+forged+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The planted state is live for a git that honours it.
	if got := mustGit(t, r.Root, "cat-file", "commit", base); !strings.Contains(got, "forged") {
		t.Fatalf("the replace ref is not honoured by plain git here: %q", got)
	}

	if msg, err := r.CommitMessage(ctx, base); err != nil || msg != "initial\n" {
		t.Errorf("CommitMessage(base) = %q, %v; want the base's own message", msg, err)
	}
	if tree, err := r.TreeOf(ctx, base); err != nil || tree != baseTree {
		t.Errorf("TreeOf(base) = %s, %v; want the base's own tree %s", tree, err, baseTree)
	}
	if r.IsAncestor(ctx, forged, tip) {
		t.Error("IsAncestor took the grafted commit for an ancestor of the tip")
	}
	if !r.IsAncestor(ctx, base, tip) {
		t.Error("IsAncestor lost the tip's real parent to the graft")
	}
	if ps, err := r.Parents(ctx, tip); err != nil || !slices.Equal(ps, []string{base}) {
		t.Errorf("Parents(tip) = %v, %v; want [%s]", ps, err, base)
	}
}

// TestRedTeamCommitIDsThatAreAlsoRefNames: in a repository of each object
// format, whoever can push makes a branch and a tag named exactly like
// commit C's full id (and like its upper-case spelling) pointing at
// another commit D. CommitMessage, TreeOf, IsAncestor and Parents of C's
// id read C itself (git takes a full hex id as the object before any ref
// of that name); C's id in upper case, and an id of the other format's
// length, are refused.
func TestRedTeamCommitIDsThatAreAlsoRefNames(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newFormatRepo(t, format)
			base := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
			mustGit(t, r.Root, "commit", "-q", "--allow-empty", "-m", "C")
			c := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
			cTree := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD^{tree}"))
			emptyTree := strings.TrimSpace(mustGitIn(t, r.Root, "", "mktree"))
			d := strings.TrimSpace(mustGit(t, r.Root, "commit-tree", "-m", "D", emptyTree))
			for _, name := range []string{"refs/heads/" + c, "refs/tags/" + c, "refs/heads/" + strings.ToUpper(c)} {
				mustGit(t, r.Root, "update-ref", name, d)
			}
			if msg, err := r.CommitMessage(ctx, c); err != nil || msg != "C\n" {
				t.Errorf("CommitMessage(C) = %q, %v; want C's own", msg, err)
			}
			if tree, err := r.TreeOf(ctx, c); err != nil || tree != cTree {
				t.Errorf("TreeOf(C) = %s, %v; want %s", tree, err, cTree)
			}
			if !r.IsAncestor(ctx, base, c) || r.IsAncestor(ctx, c, d) {
				t.Error("IsAncestor read C's id as the ref named like it")
			}
			if ps, err := r.Parents(ctx, c); err != nil || !slices.Equal(ps, []string{base}) {
				t.Errorf("Parents(C) = %v, %v; want [%s]", ps, err, base)
			}
			other := strings.Repeat("a", 104-format.HexLen())
			for _, bad := range []string{strings.ToUpper(c), other} {
				if _, err := r.CommitMessage(ctx, bad); err == nil {
					t.Errorf("CommitMessage(%s) read something", bad)
				}
				if _, err := r.TreeOf(ctx, bad); err == nil {
					t.Errorf("TreeOf(%s) read something", bad)
				}
				if r.IsAncestor(ctx, base, bad) {
					t.Errorf("IsAncestor took %s", bad)
				}
			}
		})
	}
}

// TestRedTeamPushDecoyRemoteHEADAndFastForward: the one decoy spelling
// TestRedTeamPushMovesNoDecoy leaves out, refs/remotes/R/HEAD (git push
// takes it for R too), kept only in the remote's packed-refs, is refused
// before anything moves; and against the same real bare repository a
// first push, a fast-forward and a leased update of planex's own branch
// still go through.
func TestRedTeamPushDecoyRemoteHEADAndFastForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	const ref = "refs/heads/planex/s1"
	decoy := "refs/remotes/" + ref + "/HEAD"
	mustGit(t, r.Root, "push", "-q", origin, "HEAD:"+decoy)
	mustGit(t, origin, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(origin, strings.ReplaceAll(decoy, "/", string(filepath.Separator)))); err == nil {
		t.Fatal("the decoy is still a loose ref")
	}
	before := mustGit(t, origin, "rev-parse", decoy)
	mustGit(t, c.Root, "commit", "-q", "--allow-empty", "-m", "planex's")
	mustGit(t, c.Root, "update-ref", ref, "HEAD")
	if err := c.PushRef(ctx, "origin", ref, false, ""); err == nil {
		t.Error("a push beside the refs/remotes/R/HEAD decoy went through")
	}
	if after := mustGit(t, origin, "rev-parse", decoy); after != before {
		t.Errorf("the decoy moved from %s to %s", strings.TrimSpace(before), strings.TrimSpace(after))
	}
	if got := mustGit(t, origin, "for-each-ref", ref); got != "" {
		t.Errorf("R was made beside the decoy: %s", got)
	}

	// Without the decoy: a first push, a fast-forward, a leased update.
	mustGit(t, origin, "update-ref", "-d", decoy)
	if err := c.PushRef(ctx, "origin", ref, true, ""); err != nil {
		t.Fatalf("first push: %v", err)
	}
	first := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", ref))
	mustGit(t, c.Root, "commit", "-q", "--allow-empty", "-m", "next")
	mustGit(t, c.Root, "update-ref", ref, "HEAD")
	if err := c.PushRef(ctx, "origin", ref, false, ""); err != nil {
		t.Fatalf("fast-forward push: %v", err)
	}
	second := strings.TrimSpace(mustGit(t, c.Root, "rev-parse", ref))
	mustGit(t, c.Root, "commit", "-q", "--allow-empty", "-m", "third")
	mustGit(t, c.Root, "update-ref", ref, "HEAD")
	if err := c.PushRef(ctx, "origin", ref, true, second); err != nil {
		t.Fatalf("leased push: %v", err)
	}
	if got, want := strings.TrimSpace(mustGit(t, origin, "rev-parse", ref)), strings.TrimSpace(mustGit(t, c.Root, "rev-parse", "HEAD")); got != want || first == second {
		t.Errorf("the remote's %s is %s, want %s", ref, got, want)
	}
}
