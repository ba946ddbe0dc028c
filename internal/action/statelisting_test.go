package action

import (
	"context"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/session"
)

// TestLoadRecordListsStateOnce: loading a thread's state reads the
// record and restores the session folder from one listing of the state's
// tree, where it listed github.json alone and then the whole tree again
// (two ls-tree processes before, one now), and the folder is restored.
func TestLoadRecordListsStateOnce(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "only", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	r, _ := w.job()
	store := r.flows().store

	calls := gittest.CountGit(t)

	rec, found, err := store.loadRecord(context.Background(), n)
	if err != nil || !found {
		t.Fatalf("loadRecord = %v, %v", found, err)
	}
	listings, got := 0, calls()
	for _, c := range got {
		if strings.Contains(c, "ls-tree") {
			listings++
		}
	}
	if listings != 1 {
		t.Errorf("loading the state listed its tree %d times, want 1:\n%s", listings, strings.Join(got, "\n"))
	}
	dir, err := session.StoreFor(rec.repo.Root, rec.repo.CommonDir).Folder(rec.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, recordFile)); err != nil {
		t.Errorf("the session folder was not restored: %v", err)
	}
}
