package gitrepo

import (
	"fmt"
	"regexp"
	"strings"
)

// WorkflowPushError is GitHub refusing a push because it creates or
// changes a workflow file (.github/workflows/) and the token lacks the
// permission to: `workflows` for a GitHub App (GITHUB_TOKEN is one and
// can never have it), the `workflow` scope for a classic token.
type WorkflowPushError struct {
	Ref      string
	Workflow string // the file GitHub named
	Message  string // GitHub's words
}

func (e *WorkflowPushError) Error() string {
	return fmt.Sprintf("GitHub refused to push %s: the token may not create or update the workflow file %s (%s)", e.Ref, e.Workflow, e.Message)
}

// GitHub's words, e.g. "refusing to allow a GitHub App to create or
// update workflow `.github/workflows/ci.yml` without `workflows`
// permission" (an OAuth App or a Personal Access Token: "without
// `workflow` scope").
var workflowRefusalRe = regexp.MustCompile("refusing to allow an? [^\\n]*? to create or update workflow `([^`\\n]+)`[^\\n]*")

// workflowRefusal finds GitHub's refusal of a workflow change in the
// output of a push.
func workflowRefusal(ref, output string) *WorkflowPushError {
	m := workflowRefusalRe.FindStringSubmatch(output)
	if m == nil {
		return nil
	}
	msg := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[0]), ")"))
	return &WorkflowPushError{Ref: ref, Workflow: m[1], Message: msg}
}
