package action

import (
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/authz"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/slash"
)

// What an event asks of the Action.
type stepKind int

const (
	stepIgnore      stepKind = iota // nothing; Reason says why
	stepReply                       // answer a comment (help text, a refused command)
	stepCommand                     // run a comment's command, if its author may
	stepLabel                       // plan a labelled issue, if the sender may
	stepDispatch                    // plan what workflow_dispatch names
	stepSchedule                    // plan labelled issues that have no plan
	stepWorkflowRun                 // a failed CI run: maybe plan its fix (cifix.go)
)

// step is the decision about an event, made from the event and the
// configuration alone, before anything is asked of GitHub.
type step struct {
	Kind   stepKind
	Reason string // stepIgnore
	// stepReply: the answer, and whether it turns a command down.
	Reply   string
	Refused bool
	// stepCommand: the command and what its author must be allowed.
	Command *slash.Command
	Need    authz.Action
}

// decide turns an event into what the Action does about it.
func decide(ev *event.Event, cfg Config) step {
	if ev.Ignored {
		return step{Kind: stepIgnore, Reason: ev.IgnoreReason}
	}
	switch ev.Name {
	case event.IssueComment, event.PullRequestReviewComment, event.PullRequestReview:
		return decideComment(ev.Comment, cfg.Trigger)
	case event.Issues:
		// GitHub compares label names without regard to case.
		if !strings.EqualFold(ev.Label, cfg.Label) {
			return step{Kind: stepIgnore, Reason: fmt.Sprintf("label %q was added; %q plans an issue", ev.Label, cfg.Label)}
		}
		return step{Kind: stepLabel, Need: authz.Trigger}
	case event.WorkflowDispatch:
		return step{Kind: stepDispatch}
	case event.Schedule:
		return step{Kind: stepSchedule}
	case event.WorkflowRun:
		return step{Kind: stepWorkflowRun}
	}
	return step{Kind: stepIgnore, Reason: "planex does not handle " + ev.Name + " events"}
}

// decideComment decides about a comment: planex's own and other bots'
// comments never trigger anything; a command needs its author to be
// allowed to trigger planex, or to approve plans.
func decideComment(c *event.Comment, trigger string) step {
	if c == nil {
		return step{Kind: stepIgnore, Reason: "the event carries no comment"}
	}
	if c.Author.IsBot() {
		return step{Kind: stepIgnore, Reason: "written by a bot"}
	}
	res := slash.Parse(c.Body, trigger)
	switch res.Kind {
	case slash.Ignore:
		return step{Kind: stepIgnore, Reason: res.Reason}
	case slash.Reply:
		return step{Kind: stepReply, Reply: res.Reply, Refused: res.Refused}
	}
	need := authz.Trigger
	if res.Command.Name == slash.Approve {
		need = authz.Approve
	}
	return step{Kind: stepCommand, Command: res.Command, Need: need}
}
