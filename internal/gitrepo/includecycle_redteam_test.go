package gitrepo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRedTeamIncludeCycleUnderAFalseCondition: whoever could write the
// git directory makes the config include itself, many times over, under
// a condition no git meets (a git directory that does not exist): git
// never follows the include and works as before, but planex's scan of
// the included files follows every include whatever its condition, each
// to git's depth of ten, and so read the config 8^10 times, in a loop
// that no cancel ended, before every git it ran. Each file is now
// scanned once (again only when reached less deep).
func TestRedTeamIncludeCycleUnderAFalseCondition(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	include := strings.Repeat("[includeIf \"gitdir:/nowhere/\"]\n\tpath = config\n", 4) +
		strings.Repeat("[includeIf \"gitdir:/nowhere/\"]\n\tpath = "+filepath.Join(r.CommonDir, "config")+"\n", 4)
	appendFile(t, filepath.Join(r.CommonDir, "config"), include)
	// The config's includes are remembered once it has settled: the loop
	// then ran on remembered answers, no git and no context in it.
	settle()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 2 {
		if _, err := r.Head(ctx); err != nil {
			t.Fatalf("Head: %v", err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the scan of the config's includes ran until the context ended")
	}
}
