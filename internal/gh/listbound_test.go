package gh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/ghfake"
)

// A reader of a public repository floods a thread planex works on: more
// comments than a listing reads, or comments of GitHub's largest size
// (65,536 characters, here emoji of 4 bytes each), or the same as inline
// review comments on planex's pull request, or issues an issue form
// labels for anyone (whose bodies the schedule's list now leaves out: it
// reads the one it plans). Before, every listing kept all of it (a thousand
// such comments are 256 MiB, read again before every decision); now a
// listing stops reading where it passes its bound and says so, and
// decides nothing on the part it read.
func TestRedTeamFloodedThreadListingBounded(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("😀", 65536) // 256 KiB
	type lister func(ctx context.Context, c *Client, number int) (int, error)
	comments := func(ctx context.Context, c *Client, n int) (int, error) {
		cs, err := c.ListComments(ctx, owner, name, n, time.Time{})
		return len(cs), err
	}
	cutComments := func(ctx context.Context, c *Client, n int) (int, error) {
		cs, err := c.ListComments(ctx, owner, name, n, time.Time{})
		for _, cm := range cs {
			if len(cm.GetBody()) > maxReadersText || !strings.HasPrefix(huge, cm.GetBody()) {
				return 0, fmt.Errorf("a reader's comment of %d bytes was kept", len(cm.GetBody()))
			}
		}
		return len(cs), err
	}
	reviewComments := func(ctx context.Context, c *Client, n int) (int, error) {
		cs, err := c.ListReviewComments(ctx, owner, name, n)
		return len(cs), err
	}
	firstTwoPages := func(ctx context.Context, c *Client, n int) (int, error) {
		cs, err := c.ListCommentsUpTo(ctx, owner, name, n, 200)
		return len(cs), err
	}
	labelled := func(ctx context.Context, c *Client, _ int) (int, error) {
		is, err := c.ListIssuesByLabel(ctx, owner, name, "planex:auto", "")
		for _, i := range is {
			if i.Body != nil {
				return 0, fmt.Errorf("issue #%d's body was kept", i.GetNumber())
			}
		}
		return len(is), err
	}
	tests := []struct {
		name     string
		count    int
		body     string
		list     lister
		add      func(f *ghfake.Fake, number, count int, body string)
		refused  bool
		maxPages int
	}{
		{"many comments", 450, "/planex do it", comments, addComments, true, 4},
		{"comments at the bound", 300, "/planex do it", comments, addComments, false, 3},
		// A listing told a next page once at its bound asks for no more.
		{"many comments: no page past the bound", 450, "/planex do it", comments, addComments, true, 3},
		{"comments up to a smaller bound", 250, "/planex do it", firstTwoPages, addComments, true, 2},
		{"comments at a smaller bound", 200, "/planex do it", firstTwoPages, addComments, false, 2},
		// A reader's comment is kept to its first 4 KiB: their flood
		// of the largest comments no longer stops planex reading the
		// thread for everyone.
		{"a reader's huge comments, cut", 12, huge, cutComments, addComments, false, 1},
		{"a reader's huge review comments, cut", 12, huge, reviewComments, addReviewComments, false, 1},
		{"a collaborator's huge comments", 12, huge, comments, addCollaboratorComments, true, 1},
		{"many review comments", 450, "nit", reviewComments, addReviewComments, true, 4},
		{"huge labelled issues: no body kept", 12, huge, labelled, addLabelled, false, 1},
		{"many labelled issues", 450, "x", labelled, addLabelled, true, 4},
		{"a few huge comments", 3, huge, comments, addComments, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, c := setup(t)
			c.bound = listBound{items: 300, text: 1 << 20}
			pr := f.AddPullRequest(full, ghfake.PullRequest{Title: "planex: x", Head: "planex/x"})
			tc.add(f, pr, tc.count, tc.body)
			before := len(f.Requests())
			got, err := tc.list(context.Background(), c, pr)
			pages := 0
			for _, r := range f.Requests()[before:] {
				if r.Method == "GET" {
					pages++
				}
			}
			if tc.refused {
				if !errors.Is(err, ErrListTooLong) || got != 0 {
					t.Fatalf("got %d entries and err %v, want none and ErrListTooLong", got, err)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("#%d", pr)) && !strings.Contains(err.Error(), "labelled") {
					t.Errorf("the error does not name the list: %v", err)
				}
			} else if err != nil || got != tc.count {
				t.Fatalf("got %d entries and err %v, want %d", got, err, tc.count)
			}
			if pages > tc.maxPages {
				t.Errorf("read %d pages, want at most %d: the listing went on past its bound", pages, tc.maxPages)
			}
		})
	}
}

func addComments(f *ghfake.Fake, number, count int, body string) {
	for range count {
		f.AddComment(full, number, "reader", body)
	}
}

func addCollaboratorComments(f *ghfake.Fake, number, count int, body string) {
	for range count {
		f.AddComment(full, number, "maint", body)
	}
}

func addReviewComments(f *ghfake.Fake, number, count int, body string) {
	for i := range count {
		f.AddReviewComment(full, number, "reader", "main.go", i+1, body)
	}
}

func addLabelled(f *ghfake.Fake, _, count int, body string) {
	for i := range count {
		f.AddIssue(full, "reader", fmt.Sprintf("form %d", i), body, "planex:auto")
	}
}

// The bound every client has is the one the docs state.
func TestDefaultListBound(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	if c.bound.items != 5000 || c.bound.text != 64<<20 {
		t.Errorf("a client's list bound is %+v, want 5000 entries and 64 MiB", c.bound)
	}
}
