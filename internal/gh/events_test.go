package gh

import (
	"context"
	"fmt"
	"testing"
)

// TestLabelEvents: only the named label's additions and removals come
// back, oldest first, across pages (more than 100 events), and at most
// the newest 100 of them.
func TestLabelEvents(t *testing.T) {
	f, c := setup(t)
	ctx := context.Background()
	n := f.AddIssue(full, "reader", "a", "")
	f.LabelIssue(full, n, "helper", "bug")
	for i := 0; i < 60; i++ {
		f.LabelIssue(full, n, fmt.Sprintf("u%d", i), "planex:auto")
		f.UnlabelIssue(full, n, fmt.Sprintf("u%d", i), "Planex:Auto")
	}
	f.LabelIssue(full, n, "last", "planex:auto")
	evs, err := c.LabelEvents(ctx, owner, name, n, "planex:auto")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 100 {
		t.Fatalf("%d events, want the newest 100", len(evs))
	}
	last := evs[len(evs)-1]
	if !last.Labeled || last.Actor != "last" || evs[len(evs)-2].Labeled || evs[len(evs)-2].Actor != "u59" {
		t.Fatalf("newest events = %+v, %+v", evs[len(evs)-2], last)
	}
	for _, ev := range evs {
		if ev.Actor == "helper" {
			t.Fatalf("another label's event came back: %+v", ev)
		}
	}
}
