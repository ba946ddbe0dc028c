package execute

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
)

// counting is a Repo that counts the trees built from changes
// (CommitChanges: three git processes besides the commit's own).
type counting struct {
	Repo
	mu    sync.Mutex
	built int
}

func (c *counting) CommitChanges(ctx context.Context, parent string, changes []gitrepo.Change, message string) (string, error) {
	c.mu.Lock()
	c.built++
	c.mu.Unlock()
	return c.Repo.CommitChanges(ctx, parent, changes, message)
}

// TestRecheckedTreeCommitted: two tasks of a wave start on one base and
// T1 commits first; T2's changes are judged again on T1's tip
// (Recheck), which builds the tree they make there, and Commit commits
// that tree instead of building it again (before, every task committed
// on a newer tip built the same tree twice: six git processes where
// three do). A tree is reused only for the tip and the changes it was
// built from.
func TestRecheckedTreeCommitted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// other commits T2 on another tip than the one it was
		// rechecked on (a third task committed between them).
		other bool
		// changed commits other changes than those rechecked.
		changed   bool
		wantBuilt int
	}{
		{name: "rechecked tip", wantBuilt: 1},
		{name: "another tip", other: true, wantBuilt: 2},
		{name: "other changes", changed: true, wantBuilt: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo, base := testRepo(t)
			if err := repo.UpdateBranch(ctx, "run", base, "", "start"); err != nil {
				t.Fatal(err)
			}
			c := &counting{Repo: repo}
			r1 := &Runner{Repo: repo, Agent: step{files: map[string]string{"a.txt": "a"}}.agent()}
			defer r1.Close(ctx)
			r2 := &Runner{Repo: c, Agent: step{files: map[string]string{"b.txt": "b"}}.agent()}
			defer r2.Close(ctx)
			t1 := plan.Task{ID: "T1", Title: "add a", Scope: "**"}
			t2 := plan.Task{ID: "T2", Title: "add b", Scope: "**"}
			o1 := r1.Run(ctx, Job{Task: t1, Base: base, Session: "s"})
			o2 := r2.Run(ctx, Job{Task: t2, Base: base, Session: "s2"})
			if o1.Status != plan.StatusCompleted || o2.Status != plan.StatusCompleted {
				t.Fatalf("T1 %s %q, T2 %s %q", o1.Status, o1.Error, o2.Status, o2.Error)
			}
			tip, err := r1.Commit(ctx, "run", base, "s", t1, o1)
			if err != nil {
				t.Fatal(err)
			}
			if why := r2.Recheck(ctx, t2.Scope, tip, o2); why != "" {
				t.Fatalf("recheck on T1's tip: %q", why)
			}
			onto := tip
			if tc.other {
				out, err := repo.Git(ctx, "", "commit-tree", tip+"^{tree}", "-p", tip, "-m", "T3")
				if err != nil {
					t.Fatal(err)
				}
				onto = strings.TrimSpace(out)
				if err := repo.UpdateBranch(ctx, "run", onto, tip, "T3"); err != nil {
					t.Fatal(err)
				}
			}
			if tc.changed {
				o2.Changes = o2.Changes[:len(o2.Changes):len(o2.Changes)]
				o2.Changes = append(o2.Changes, gitrepo.Change{Path: "a.txt", Mode: "000000"})
			}
			sha, err := r2.Commit(ctx, "run", onto, "s2", t2, o2)
			if err != nil {
				t.Fatal(err)
			}
			if c.built != tc.wantBuilt {
				t.Errorf("trees built from T2's changes: %d, want %d", c.built, tc.wantBuilt)
			}
			// The commit holds what it would have held had its tree
			// been built anew: T2's file, and T1's unless T2's changes
			// removed it.
			files, err := repo.Git(ctx, "", "ls-tree", "--name-only", sha)
			if err != nil {
				t.Fatal(err)
			}
			want := "a.txt\nb.txt"
			if tc.changed {
				want = "b.txt"
			}
			if got := strings.TrimSpace(files); got != want {
				t.Errorf("T2's commit holds %q, want %q", got, want)
			}
			if parent, err := repo.Git(ctx, "", "rev-parse", sha+"^"); err != nil || strings.TrimSpace(parent) != onto {
				t.Errorf("T2's commit's parent is %q (%v), want %s", parent, err, onto)
			}
		})
	}
}
