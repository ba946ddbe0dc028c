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

// TestPlanJobListsTheRemoteOnce: a plan job reads the thread's state
// ref, the base branch and the planex/ branches from one listing of the
// remote (one git ls-remote), where it listed the state ref by a
// connection of its own first (two before).
func TestPlanJobListsTheRemoteOnce(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "only", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	ev := w.comment(n, "maintainer", "/planex add a file")
	calls := gittest.CountGit(t)
	if _, err := w.handle(ev); err != nil {
		t.Fatal(err)
	}
	var listings []string
	for _, c := range calls() {
		if strings.Contains(c, "ls-remote") {
			listings = append(listings, c)
		}
	}
	if len(listings) != 1 {
		t.Errorf("the plan job listed the remote %d times, want 1:\n%s", len(listings), strings.Join(listings, "\n"))
	}
	if got := run(t, w.origin, "for-each-ref", "--format=%(refname)", "refs/planex/state/"); !strings.Contains(got, "refs/planex/state/") {
		t.Errorf("no state ref pushed: %q", got)
	}
}

// TestApproveJobListsTheRemoteOnce: an approve job reads the thread's
// state ref, its run branch and its base branch from one listing of the
// remote (one git ls-remote), where it made three (the state, the run
// branch when restoring, the base when checking it had not moved); the
// plan runs.
func TestApproveJobListsTheRemoteOnce(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "only", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	ev := w.comment(n, "maintainer", "/planex approve "+w.planID(n))
	calls := gittest.CountGit(t)
	r, err := w.handle(ev)
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve: %v, outputs %+v", err, r.Outputs)
	}
	var listings []string
	for _, c := range calls() {
		if strings.Contains(c, "ls-remote") {
			listings = append(listings, c)
		}
	}
	if len(listings) != 1 {
		t.Errorf("the approve job listed the remote %d times, want 1:\n%s", len(listings), strings.Join(listings, "\n"))
	}
}

// TestRefListingTip: a listing tells a ref's commit, or its absence, only
// for a ref among the names or folders it asked for.
func TestRefListingTip(t *testing.T) {
	t.Parallel()
	l := refListing{patterns: []string{"refs/planex/state/7", "refs/heads/planex/*", "refs/heads/main"},
		refs: map[string]string{"refs/heads/main": "aa", "refs/heads/planex/7-x": "bb"}}
	for _, c := range []struct {
		ref, sha string
		asked    bool
	}{
		{"refs/heads/main", "aa", true},
		{"refs/heads/planex/7-x", "bb", true},
		{"refs/heads/planex/8-y", "", true},
		{"refs/planex/state/7", "", true},
		{"refs/heads/planex/", "", false},
		{"refs/heads/dev", "", false},
		{"refs/heads/x/refs/heads/main", "", false},
	} {
		if sha, asked := l.tip(c.ref); sha != c.sha || asked != c.asked {
			t.Errorf("tip(%s) = %q, %v; want %q, %v", c.ref, sha, asked, c.sha, c.asked)
		}
	}
}
