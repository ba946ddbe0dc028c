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
