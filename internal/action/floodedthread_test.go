package action

import (
	"fmt"
	"strings"
	"testing"
)

// TestRedTeamFloodedThread: a reader floods an issue with more comments
// than planex reads (gh bounds each listing: 5,000 entries, 64 MiB of
// text) after planex posted its plan. Their own `/planex` comments must not make planex reply to each
// one (refusing, or saying it could not read the thread): that would
// answer the flood with a flood. A maintainer's approval there is not
// judged on part of the thread (a cancel or a newer plan may lie past
// what was read): nothing runs, and the maintainer is told plainly why,
// as a condition to act on, not an internal error. Before the bound, every listing read all of it.
func TestRedTeamFloodedThread(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n, id := w.plannedOne("Add a file")
	for i := range 5001 {
		w.fake.AddComment(wRepo, n, "reader", fmt.Sprintf("spam %d", i))
	}
	before := len(w.fake.Comments(wRepo, n))
	for range 2 {
		r, err := w.handle(w.comment(n, "reader", "/planex add a file"))
		if err != nil || r.Outputs.Status != StatusRefused {
			t.Fatalf("reader: %v %+v", err, r.Outputs)
		}
	}
	if after := len(w.fake.Comments(wRepo, n)); after != before+2 {
		t.Errorf("planex posted %d comments answering the reader's two on the flooded thread, want none", after-before-2)
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id))
	if err != nil {
		t.Fatalf("maintainer: the job failed: %v", err)
	}
	if r.Outputs.Status != StatusFailed || !strings.Contains(r.Outputs.Failure, "too long") {
		t.Errorf("maintainer: outputs %+v, want failed saying the thread is too long", r.Outputs)
	}
	if last := w.lastComment(n); !strings.Contains(last, "planex could not act") || strings.Contains(last, "internal error") {
		t.Errorf("the maintainer was not told why; last comment:\n%s", last)
	}
	if r.Outputs.SessionID == "" || len(w.fake.PullRequests(wRepo)) != 0 || w.branchExists("planex/"+r.Outputs.SessionID) {
		t.Errorf("the plan ran on a thread planex could not read whole")
	}
}
