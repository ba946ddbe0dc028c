package action

import (
	"fmt"
	"strings"
	"testing"
)

// TestRedTeamReaderSpendsTheRESTBudget: a reader's /planex on a long
// thread is refused once, and planex looks through the thread's comments
// for its earlier refusal before saying so again. It read the whole
// thread, a page of 100 comments per request up to 50 pages, for every
// such comment: a reader spent the job token's hourly REST budget (1,000
// requests a repository) with a few dozen comments, and planex then
// failed for everyone. A refusal looks at the thread's first few pages
// only; past them it says nothing, as on a thread too long to read.
func TestRedTeamReaderSpendsTheRESTBudget(t *testing.T) {
	w := newParallelWorld(t)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	for i := range 2000 {
		w.fake.AddComment(wRepo, n, "someone", fmt.Sprintf("comment %d", i))
	}
	for range 2 {
		before := len(w.fake.Requests())
		r, err := w.handle(w.comment(n, "reader", "/planex add a file"))
		if err != nil || r.Outputs.Status != StatusRefused {
			t.Fatalf("reader: %v %+v", err, r.Outputs)
		}
		lists := 0
		for _, q := range w.fake.Requests()[before:] {
			if q.Method == "GET" && strings.HasSuffix(q.Path, fmt.Sprintf("/issues/%d/comments", n)) {
				lists++
			}
		}
		if lists > maxRefusalPages {
			t.Errorf("one reader's comment made planex read %d pages of the thread, want at most %d", lists, maxRefusalPages)
		}
	}
}
