package gh

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/ghfake"
)

// Lists longer than a page come back whole and in order, one request a
// page of 100.
func TestListsFollowPages(t *testing.T) {
	ctx := context.Background()
	f, c := setup(t)
	issue := f.AddIssue(full, "maint", "long thread", "body")
	for i := range 250 {
		f.AddComment(full, issue, "maint", fmt.Sprintf("comment %d", i))
	}
	for i := range 130 {
		f.AddIssue(full, "maint", fmt.Sprintf("labelled %d", i), "body", "planex")
	}
	before := len(f.Requests())
	cs, err := c.ListComments(ctx, owner, name, issue, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 250 {
		t.Fatalf("got %d comments, want 250", len(cs))
	}
	for i, cm := range cs {
		if want := fmt.Sprintf("comment %d", i); cm.GetBody() != want {
			t.Fatalf("comment %d is %q, want %q", i, cm.GetBody(), want)
		}
	}
	if n := countGets(f.Requests()[before:], "/comments"); n != 3 {
		t.Errorf("listing 250 comments took %d requests, want 3", n)
	}

	is, err := c.ListIssuesByLabel(ctx, owner, name, "planex", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(is) != 130 || is[0].GetTitle() != "labelled 0" || is[129].GetTitle() != "labelled 129" {
		t.Errorf("got %d labelled issues (first %q), want 130 oldest first", len(is), is[0].GetTitle())
	}
}

// Looking for an issue whose answer was lost stops at the page that has
// it: the newest come first, so one page is read however many there are.
func TestLookupStopsAtTheFoundPage(t *testing.T) {
	f, _ := setup(t)
	c, _ := faultClient(t, f)
	for i := range 150 {
		f.AddIssue(full, "maint", fmt.Sprintf("older %d", i), "body")
	}
	f.InjectFault("POST /repos/{owner}/{repo}/issues", 1, ghfake.LostResponse(502))
	is, err := c.CreateIssue(context.Background(), owner, name, "planex: x", "do x")
	if err != nil || is.GetTitle() != "planex: x" {
		t.Fatalf("CreateIssue = %v, %v", is, err)
	}
	if n := countRoute(f, "POST /repos/{owner}/{repo}/issues"); n != 1 {
		t.Errorf("the issue was sent %d times", n)
	}
	if n := countRoute(f, "GET /repos/{owner}/{repo}/issues"); n != 1 {
		t.Errorf("the lookup read %d pages, want 1", n)
	}
}

// A failing page fails the whole list, naming what was being listed.
func TestListPageErrorNamesTheList(t *testing.T) {
	f, c := setup(t)
	issue := f.AddIssue(full, "maint", "thread", "body")
	f.InjectFault("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", 1, ghfake.NotFound())
	cs, err := c.ListComments(context.Background(), owner, name, issue, time.Time{})
	if err == nil || cs != nil {
		t.Fatalf("got %d comments and err %v, want no comments and an error", len(cs), err)
	}
	if want := fmt.Sprintf("listing comments of %s#%d", full, issue); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func countGets(reqs []ghfake.Request, suffix string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == "GET" && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}
