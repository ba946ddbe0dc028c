//go:build linux

package gitrepo

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamWorkTreeMailmapIsAFIFO: a `.mailmap` at the top of the work
// tree is read by every log and show (log.mailmap is on by default),
// whatever mailmap.file says; one left as a FIFO (by an agent without the
// sandbox, or an earlier step of the job) made the history planex reads
// and the commit it shows wait until their context ended. planex's git
// runs with log.mailmap off: it shows names as commits hold them.
func TestRedTeamWorkTreeMailmapIsAFIFO(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	head, err := r.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(r.Root, ".mailmap"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, logErr := r.Git(ctx, "", "log", "-1", "--format=%H %an")
	_, showErr := r.Git(ctx, "", "show", "--stat", head)
	if ctx.Err() != nil {
		t.Fatalf("git waited on the work tree's .mailmap: %v, %v", logErr, showErr)
	}
	if logErr != nil || showErr != nil {
		t.Errorf("log: %v; show: %v", logErr, showErr)
	}
}
