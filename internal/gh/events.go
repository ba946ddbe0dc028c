package gh

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// LabelEvent is one time a label was added to (Labeled) or removed from
// an issue, and by whom.
type LabelEvent struct {
	Labeled   bool
	Actor     string
	ActorType string // "User", "Bot", …
	At        time.Time
}

// maxLabelEvents bounds what LabelEvents keeps: the newest ones decide.
const maxLabelEvents = 100

// LabelEvents returns the newest (at most 100) additions and removals of
// label on an issue, oldest first, reading every page of its events.
func (c *Client) LabelEvents(ctx context.Context, owner, repo string, number int, label string) ([]LabelEvent, error) {
	var out []LabelEvent
	err := eachPage(c.bound, func(lo github.ListOptions) ([]*github.IssueEvent, *github.Response, error) {
		return c.gh.Issues.ListIssueEvents(ctx, owner, repo, number, &lo)
	}, func(ev *github.IssueEvent) bool {
		kind := ev.GetEvent()
		if (kind != "labeled" && kind != "unlabeled") || !strings.EqualFold(ev.GetLabel().GetName(), label) {
			return true
		}
		if len(out) == maxLabelEvents {
			out = append(out[:0], out[1:]...)
		}
		out = append(out, LabelEvent{Labeled: kind == "labeled", Actor: ev.GetActor().GetLogin(), ActorType: ev.GetActor().GetType(), At: ev.GetCreatedAt().Time})
		return true
	})
	if err != nil {
		return nil, classify(fmt.Sprintf("reading the events of %s/%s#%d", owner, repo, number), "issues: read", err)
	}
	return out, nil
}
