package openai

import (
	"context"
	"testing"

	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/agent/builtin"
)

// TestRedirectKeepsKey: a model endpoint that answers with a redirect to
// another origin does not get the key sent there (Azure's api-key header
// is one Go's client carries along to any host): the provider follows
// no such redirect, and the target sees no request.
func TestRedirectKeepsKey(t *testing.T) {
	t.Parallel()
	agenttest.CheckRedirectRefused(t, "Api-Key", func(baseURL string) error {
		p, err := New(Config{APIKey: "secret-model-key", BaseURL: baseURL + "/v1", Model: "gpt-4.1"})
		if err != nil {
			t.Fatal(err)
		}
		// The header Azure's endpoint takes, as New sets it for that host.
		p.header.Set("api-key", "secret-model-key")
		_, err = p.Send(context.Background(), builtin.Request{MaxOutputTokens: 10,
			Messages: []builtin.Message{{Role: builtin.RoleUser, Text: "hi"}}})
		return err
	})
}
