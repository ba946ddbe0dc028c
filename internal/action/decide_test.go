package action

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/authz"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/slash"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	cfg := Config{Trigger: "/planex", Label: "planex"}
	person := event.User{Login: "maintainer", Type: "User"}
	comment := func(body string, author event.User) *event.Event {
		return &event.Event{Name: event.IssueComment, Owner: "o", Repo: "r", Number: 1,
			Comment: &event.Comment{Kind: event.KindIssueComment, ID: 9, Body: body, Author: author}}
	}
	cases := []struct {
		name    string
		ev      *event.Event
		kind    stepKind
		command slash.Name
		need    authz.Action
		text    string // in Reason or Reply
		refused bool
	}{
		{"ignored by the loader", &event.Event{Name: event.IssueComment, Ignored: true, IgnoreReason: "edited"}, stepIgnore, "", "", "edited", false},
		{"plain comment", comment("looks good", person), stepIgnore, "", "", "", false},
		{"planex's own comment", comment("/planex approve abc", event.User{Login: "planex[bot]", Type: "Bot"}), stepIgnore, "", "", "bot", false},
		{"no comment", &event.Event{Name: event.PullRequestReview}, stepIgnore, "", "", "no comment", false},
		{"help", comment("/planex help", person), stepReply, "", "", "approve", false},
		{"unknown command", comment("/planex approv", person), stepReply, "", "", "", true},
		{"plan", comment("/planex add a cache", person), stepCommand, slash.Plan, authz.Trigger, "", false},
		{"approve needs approval rights", comment("/planex approve 0123456789", person), stepCommand, slash.Approve, authz.Approve, "", false},
		{"retry", comment("/planex retry", person), stepCommand, slash.Retry, authz.Trigger, "", false},
		{"review comment", &event.Event{Name: event.PullRequestReviewComment, Comment: &event.Comment{Kind: event.KindReviewComment, Body: "/planex fix", Author: person}},
			stepCommand, slash.Fix, authz.Trigger, "", false},
		{"the planex label", &event.Event{Name: event.Issues, Label: "PlanEx"}, stepLabel, "", authz.Trigger, "", false},
		{"another label", &event.Event{Name: event.Issues, Label: "bug"}, stepIgnore, "", "", `label "bug" was added`, false},
		// Red team: labels that only look like planex's.
		{"a Cyrillic lookalike label", &event.Event{Name: event.Issues, Label: "plаnex"}, stepIgnore, "", "", `label "plаnex" was added`, false},
		{"a label with a zero-width space", &event.Event{Name: event.Issues, Label: "planex\u200b"}, stepIgnore, "", "", "was added", false},
		{"a fullwidth label", &event.Event{Name: event.Issues, Label: "ｐｌａｎｅｘ"}, stepIgnore, "", "", "was added", false},
		{"dispatch", &event.Event{Name: event.WorkflowDispatch}, stepDispatch, "", "", "", false},
		{"schedule", &event.Event{Name: event.Schedule}, stepSchedule, "", "", "", false},
		{"push", &event.Event{Name: "push"}, stepIgnore, "", "", "does not handle push", false},
	}
	for _, c := range cases {
		s := decide(c.ev, cfg)
		if s.Kind != c.kind || s.Need != c.need || s.Refused != c.refused {
			t.Errorf("%s: %+v, want kind %d need %q refused %v", c.name, s, c.kind, c.need, c.refused)
			continue
		}
		if c.command != "" && (s.Command == nil || s.Command.Name != c.command) {
			t.Errorf("%s: command %+v, want %s", c.name, s.Command, c.command)
		}
		if !strings.Contains(s.Reason+s.Reply, c.text) {
			t.Errorf("%s: %q lacks %q", c.name, s.Reason+s.Reply, c.text)
		}
	}
}
