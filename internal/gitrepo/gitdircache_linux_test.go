//go:build linux

package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestRedTeamRefsTreeUnderTheCapStaysCached: whoever can write the git
// directory makes 5,000 empty folders under refs/, half the walk's cap
// (ErrGitDirTooLarge), so every call goes on. The walk remembered 4,096
// clean folders and forgot them all past that, so it listed every folder
// again before every git planex ran: 0.7 s a call at 9,000 folders, where
// one remembered costs a stat. Every folder the walk may reach is
// remembered: after one call, all 5,000 are.
func TestRedTeamRefsTreeUnderTheCapStaysCached(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	const folders = 5000
	for i := 0; i < folders; i++ {
		if err := os.MkdirAll(filepath.Join(r.CommonDir, "refs", "x", fmt.Sprint(i/100), fmt.Sprint(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	settle() // a folder is remembered once its times are past the racy window
	if _, err := r.Git(ctx, "", "rev-parse", "HEAD"); err != nil {
		t.Fatal(err)
	}
	r.scans.mu.Lock()
	kept := len(r.scans.clean)
	r.scans.mu.Unlock()
	if kept < folders {
		t.Errorf("after a call the walk remembers %d clean folders, fewer than the %d under refs/: each call lists them all again", kept, folders)
	}
}
