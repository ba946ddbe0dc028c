package gitrepo

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestGitCancelledIsTold: a git call cut short by its context returns an
// error errors.Is can match to the context's (the CLI tells an
// interrupted run by it), naming the command; a plain failure does not
// match.
func TestGitCancelledIsTold(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.ResolveBranch(ctx, "main")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "git for-each-ref") {
		t.Errorf("cancelled call: %v; want context.Canceled, naming the command", err)
	}
	_, err = r.Git(context.Background(), "", "rev-parse", "--verify", "no-such-ref")
	if err == nil || errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "git rev-parse") {
		t.Errorf("failed call: %v; want a plain error naming the command", err)
	}
}
