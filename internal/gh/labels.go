package gh

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v60/github"
)

// AddLabel adds one label to an issue or pull request and returns every
// label it has afterwards, as GitHub's answer lists them: a caller that
// keeps one label of a set learns which others to remove without reading
// the issue first.
func (c *Client) AddLabel(ctx context.Context, owner, repo string, number int, label string) ([]string, error) {
	op := fmt.Sprintf("adding label %q to %s/%s#%d", label, owner, repo, number)
	// The documented {"labels": [...]} object, not go-github's bare array.
	req, err := c.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/issues/%d/labels", owner, repo, number),
		map[string][]string{"labels": {label}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var got []*github.Label
	err = c.write(func() error {
		got = nil
		// Adding a label that is there already changes nothing.
		_, err := c.gh.Do(replayable(ctx), req, &got)
		return err
	})
	if err != nil {
		return nil, classify(op, "issues: write (pull-requests: write on a pull request)", err)
	}
	names := make([]string, 0, len(got))
	for _, l := range got {
		names = append(names, l.GetName())
	}
	return names, nil
}
