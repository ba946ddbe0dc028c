package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamLocalRemoteRewritten: the remote is a local repository
// (planex reaches it with git's own receive and upload programs), and
// whoever could write the git directory adds `url.<own>.insteadOf` (or
// pushInsteadOf) for its path, or a prefix of it. planex's push went to
// the writer's repository and ran its hooks with planex's environment.
// planex refuses a local remote the configuration rewrites, also when the
// rewrite is written after a listing whose config scan planex remembers
// (the scan says whether any rewrite exists).
func TestRedTeamLocalRemoteRewritten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, base string
		listFirst bool
	}{{"insteadOf", "prefix", false}, {"pushInsteadOf", "prefix", false}, {"insteadOf", "", false}, {"pushInsteadOf", "prefix", true}} {
		key := tc.key
		t.Run(fmt.Sprintf("%s/%s/listed-first=%v", key, tc.base, tc.listFirst), func(t *testing.T) {
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
			mustGit(t, r.Root, "update-ref", "refs/heads/planex/s1", head)
			e := newEvil(t)
			own := filepath.Join(t.TempDir(), "own.git")
			cleanGit(t, r.Root, "init", "-q", "--bare", own)
			e.hooks(filepath.Join(own, "hooks"), "own-hook-")
			base := filepath.Dir(origin)
			if tc.base == "" {
				base = ""
			}
			if tc.listFirst {
				settle()
				if _, err := r.RemoteRef(ctx, "origin", "refs/heads/planex/s1"); err != nil {
					t.Fatal(err)
				}
			}
			mustGit(t, r.Root, "config", "url."+own+"/."+key, base)
			if tc.listFirst {
				settle()
			}

			err = r.PushRef(ctx, "origin", "refs/heads/planex/s1", false, "")
			if !errors.Is(err, ErrRemoteRewritten) {
				t.Errorf("PushRef = %v, want ErrRemoteRewritten", err)
			}
			if _, err := r.RemoteRef(ctx, "origin", "refs/heads/planex/s1"); key == "insteadOf" && !errors.Is(err, ErrRemoteRewritten) {
				t.Errorf("RemoteRef = %v, want ErrRemoteRewritten", err)
			}
			if got := cleanGit(t, own, "for-each-ref"); strings.TrimSpace(got) != "" {
				t.Errorf("the push reached the writer's repository: %s", got)
			}
			e.assertNothingRan()
		})
	}
}
