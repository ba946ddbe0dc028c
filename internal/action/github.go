package action

import (
	"github.com/planexhq/planex/internal/authz"
	"github.com/planexhq/planex/internal/gh"
)

// GitHub is how the Action reaches GitHub: one small interface per part
// of the Action, each declared beside the code that uses it, so a reader
// sees what each part needs and a test fakes only that part. A field left
// nil is a part the caller does not expect to run.
//
// A new GitHub call goes into the interface of the part that makes it
// (at most 10 methods each), or into a new interface and field here when
// it starts a new part; NewGitHub fills every field from one client.
type GitHub struct {
	Thread    threadAPI              // talk.go: replies, reactions, plan and status comments
	Labels    labelAPI               // talk.go: planex's state label on a thread
	Access    authz.PermissionGetter // who may trigger and approve
	Intake    intakeAPI              // action.go: the issues a plan starts from
	Approvals approvalAPI            // approval.go: the plan comment and approving command
	Pulls     pullAPI                // run.go: the run's pull request
	Reviews   reviewAPI              // review.go: pull request reviews
	Repo      repoAPI                // settings.go: the default branch and its files
	Workflows workflowAPI            // matrix.go, owner.go: dispatches and run states
	CI        ciAPI                  // cifix.go: failed runs, their jobs and logs
}

// NewGitHub gives every part of the Action the same client.
func NewGitHub(c *gh.Client) GitHub {
	return GitHub{Thread: c, Labels: c, Access: c, Intake: c, Approvals: c, Pulls: c, Reviews: c, Repo: c, Workflows: c, CI: c}
}
