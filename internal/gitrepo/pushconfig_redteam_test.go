package gitrepo

import (
	"context"
	"strings"
	"testing"
)

// TestRedTeamPushTakesOnlyItsRef: whoever could write the git directory
// sets `push.followTags` and makes an annotated tag (a release's name) on
// the commit planex is about to push: planex's push of its branch took
// the tag along, and a workflow run on tag pushes (a release, with the
// repository's secrets) started on the writer's say. planex's pushes
// carry only the refs planex names.
func TestRedTeamPushTakesOnlyItsRef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, _ := cloneOf(t, r)
	mustGit(t, r.Root, "remote", "add", "origin", origin)
	r, err := Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head(ctx)
	sha, err := r.CommitChanges(ctx, head, nil, "planex's task\n")
	if err != nil {
		t.Fatal(err)
	}
	mustGit(t, r.Root, "update-ref", "refs/heads/planex/s1", sha)
	mustGit(t, r.Root, "tag", "-a", "-m", "release", "v9.9.9", sha)
	mustGit(t, r.Root, "config", "push.followTags", "true")
	mustGit(t, r.Root, "config", "push.pushOption", "ci.skip")
	if err := r.PushRef(ctx, "origin", "refs/heads/planex/s1", false, ""); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(cleanGit(t, origin, "tag", "--list")); got != "" {
		t.Errorf("planex's push took the writer's tags along: %s", got)
	}
	mustGit(t, r.Root, "update-ref", "refs/heads/planex/s2", sha)
	if err := r.PushRefs(ctx, "origin", []RefPush{{Ref: "refs/heads/planex/s2"}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(cleanGit(t, origin, "tag", "--list")); got != "" {
		t.Errorf("planex's atomic push took the writer's tags along: %s", got)
	}
}
