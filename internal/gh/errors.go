package gh

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v60/github"
)

// ErrNotFound is matched (errors.Is) by errors for missing resources.
var ErrNotFound = errors.New("not found")

// PermissionError is GitHub refusing an operation for lack of permission.
// Its message says what to change: a `permissions:` scope of the workflow
// or a repository setting.
type PermissionError struct {
	Op      string // what was being done, e.g. "creating pull request"
	Status  int    // HTTP status GitHub answered with
	Message string // GitHub's message
	// Need is the missing grant in the words a maintainer acts on, e.g.
	// "pull-requests: write" or the name of a repository setting.
	Need string
	Err  error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("%s: GitHub refused with %d (%s); %s", e.Op, e.Status, e.Message, e.Need)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// Messages GitHub answers with when a token lacks a grant.
const (
	msgActionsCannotCreatePR = "GitHub Actions is not permitted to create or approve pull requests"
	msgActionsCannotApprove  = "GitHub Actions is not permitted to approve pull requests"
	msgNotAccessible         = "Resource not accessible by integration"
	msgNotAccessiblePAT      = "Resource not accessible by personal access token"
)

// classify wraps err from GitHub with what was being done (op) and, for
// permission failures, with the grant that is likely missing. scope is the
// workflow permission the operation needs, e.g. "issues: write".
func classify(op, scope string, err error) error {
	if err == nil {
		return nil
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		msg := er.Message
		all := msg
		for _, e := range er.Errors {
			all += " " + e.Message
		}
		switch {
		case strings.Contains(all, msgActionsCannotCreatePR) || strings.Contains(all, msgActionsCannotApprove):
			return &PermissionError{Op: op, Status: er.Response.StatusCode, Message: strings.TrimSpace(all), Err: err,
				Need: "enable the repository (or organization) setting Settings → Actions → General → Workflow permissions → " +
					"\"Allow GitHub Actions to create and approve pull requests\", or give planex a token that may open pull requests"}
		case strings.Contains(all, msgNotAccessible) || strings.Contains(all, msgNotAccessiblePAT):
			return &PermissionError{Op: op, Status: er.Response.StatusCode, Message: msg, Err: err,
				Need: fmt.Sprintf("the token lacks a permission; add `%s` to the workflow's `permissions:` block (or grant it to the token)", scope)}
		case er.Response.StatusCode == http.StatusForbidden && strings.Contains(strings.ToLower(all), "must have"):
			return &PermissionError{Op: op, Status: er.Response.StatusCode, Message: msg, Err: err,
				Need: fmt.Sprintf("the token's account lacks access; it needs `%s`", scope)}
		case er.Response.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%s: %w (%w)", op, ErrNotFound, err)
		case er.Response.StatusCode == http.StatusUnauthorized:
			return fmt.Errorf("%s: GitHub rejected the token (check the github-token input): %w", op, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// IsNotFound reports whether err means the resource does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
