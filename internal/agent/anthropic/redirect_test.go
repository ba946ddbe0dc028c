package anthropic

import (
	"context"
	"testing"

	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/agent/builtin"
)

// TestRedirectKeepsKey: a model endpoint that answers with a redirect to
// another origin does not get the key sent there: Go's client carries
// x-api-key along to any host, so the provider follows no such
// redirect, and the target sees no request.
func TestRedirectKeepsKey(t *testing.T) {
	t.Parallel()
	agenttest.CheckRedirectRefused(t, "X-Api-Key", func(baseURL string) error {
		p, err := New(Config{APIKey: "secret-model-key", BaseURL: baseURL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Send(context.Background(), builtin.Request{MaxOutputTokens: 10,
			Messages: []builtin.Message{{Role: builtin.RoleUser, Text: "hi"}}})
		return err
	})
}
