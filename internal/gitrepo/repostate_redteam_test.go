package gitrepo

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
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

// TestRedTeamForgedCommitGraphIgnored: the commit-graph file
// (objects/info/commit-graph) caches each commit's tree and parents, and
// git reads them from it instead of the commit. Whoever could write the
// git directory before planex ran git rewrites the cached entry of a
// task's commit T: its parent becomes a commit of the writer's, its tree
// the base's. planex read T's parent from the file and saw no change
// between the base and T, where T really changes src/old.txt; it must
// read the commits themselves.
func TestRedTeamForgedCommitGraphIgnored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	baseTree := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD^{tree}"))
	if err := os.WriteFile(filepath.Join(r.Root, "src", "old.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, r.Root, "commit", "-qam", "T")
	task := strings.TrimSpace(mustGit(t, r.Root, "rev-parse", "HEAD"))
	emptyTree := strings.TrimSpace(mustGitIn(t, r.Root, "", "mktree"))
	forged := strings.TrimSpace(mustGit(t, r.Root, "commit-tree", "-m", "forged", emptyTree))
	mustGit(t, r.Root, "update-ref", "refs/heads/forged", forged)
	mustGit(t, r.Root, "commit-graph", "write", "--reachable")
	forgeCommitGraph(t, filepath.Join(r.CommonDir, "objects", "info", "commit-graph"), task, forged, baseTree)
	// The forged file is live for a git that reads it.
	if got := mustGit(t, r.Root, "rev-list", "--parents", "-1", task); !strings.Contains(got, forged) {
		t.Fatalf("plain git does not read the forged graph here: %q", got)
	}

	if ps, err := r.Parents(ctx, task); err != nil || !slices.Equal(ps, []string{base}) {
		t.Errorf("Parents(T) = %v, %v; want [%s]", ps, err, base)
	}
	if !r.IsAncestor(ctx, base, task) || r.IsAncestor(ctx, forged, task) {
		t.Error("IsAncestor read T's parent from the forged graph")
	}
	if paths, err := r.ChangedPaths(ctx, base, task); err != nil || !slices.Equal(paths, []string{"src/old.txt"}) {
		t.Errorf("ChangedPaths(base, T) = %v, %v; want [src/old.txt]", paths, err)
	}
}

// forgeCommitGraph rewrites, in a SHA-1 commit-graph file, the cached
// entry of commit: its first parent becomes parent (which the file must
// hold) and its tree tree.
func forgeCommitGraph(t *testing.T, file, commit, parent, tree string) {
	t.Helper()
	d, err := os.ReadFile(file)
	if err != nil || len(d) < 8 || string(d[:4]) != "CGPH" || d[5] != 1 {
		t.Fatalf("not a SHA-1 commit-graph file: %v", err)
	}
	chunks := map[string]int{}
	for i := 0; i <= int(d[6]); i++ {
		o := 8 + 12*i
		chunks[string(d[o:o+4])] = int(binary.BigEndian.Uint64(d[o+4 : o+12]))
	}
	n := int(binary.BigEndian.Uint32(d[chunks["OIDF"]+255*4:]))
	index := map[string]int{}
	for i := 0; i < n; i++ {
		o := chunks["OIDL"] + 20*i
		index[hex.EncodeToString(d[o:o+20])] = i
	}
	ci, ok1 := index[commit]
	pi, ok2 := index[parent]
	tr, err := hex.DecodeString(tree)
	if !ok1 || !ok2 || err != nil {
		t.Fatalf("the graph holds %s: %v, %s: %v (%v)", commit, ok1, parent, ok2, err)
	}
	o := chunks["CDAT"] + 36*ci
	copy(d[o:o+20], tr)
	binary.BigEndian.PutUint32(d[o+20:], uint32(pi))
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, d, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRedTeamLazyFetchRunsNoUploadPack: whoever could write the
// repository's config before planex ran git (the same writer as above)
// makes it a partial clone whose promisor remote is a local path, with
// remote.<name>.uploadpack a command of theirs. Any git that meets a
// missing object fetches it from the promisor remote, and a local one is
// reached by running its uploadpack command: planex reading a commit id
// from a state ref (CommitMessage, TreeOf, Parents, IsAncestor, a tree
// comparison) ran the command with planex's environment, token included.
// Only planex's own fetches, listings and pushes may reach a local
// repository now (they name the upload program); every other git is
// refused the file transport, and the reads fail without running it.
func TestRedTeamLazyFetchRunsNoUploadPack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	other := newRepo(t)
	mustGit(t, other.Root, "commit", "-q", "--allow-empty", "-m", "not in r")
	missing := strings.TrimSpace(mustGit(t, other.Root, "rev-parse", "HEAD"))
	pwned := filepath.Join(t.TempDir(), "pwned")
	for _, kv := range [][2]string{
		{"core.repositoryformatversion", "1"}, {"extensions.partialClone", "evil"}, {"remote.evil.url", other.Root},
		{"remote.evil.promisor", "true"}, {"remote.evil.uploadpack", "touch " + pwned + "; git-upload-pack"},
	} {
		mustGit(t, r.Root, "config", kv[0], kv[1])
	}
	// Plain git runs the command.
	mustGit(t, r.Root, "cat-file", "-t", missing)
	if err := os.Remove(pwned); err != nil {
		t.Fatalf("plain git fetched no missing object lazily here: %v", err)
	}
	mustGit(t, other.Root, "commit", "-q", "--allow-empty", "-m", "not in r either")
	missing = strings.TrimSpace(mustGit(t, other.Root, "rev-parse", "HEAD"))

	base, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]func() error{
		"CommitMessage": func() error { _, err := r.CommitMessage(ctx, missing); return err },
		"TreeOf":        func() error { _, err := r.TreeOf(ctx, missing); return err },
		"Parents":       func() error { _, err := r.Parents(ctx, missing); return err },
		"DiffTrees":     func() error { _, err := r.DiffTrees(ctx, base, missing); return err },
		"IsAncestor": func() error {
			if r.IsAncestor(ctx, base, missing) {
				return nil
			}
			return errors.New("not an ancestor")
		},
	}
	for name, read := range reads {
		if err := read(); err == nil {
			t.Errorf("%s of a missing commit succeeded", name)
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("%s ran the promisor remote's uploadpack", name)
		}
	}
}
