package anthropic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/egress"
)

// TestRedirectKeepsKey: a model endpoint that answers with a redirect to
// another origin does not get the key sent there: Go's client carries
// x-api-key along to any host, so the provider follows no such
// redirect, and the target sees no request.
func TestRedirectKeepsKey(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Errorf("the redirect's target got %s %s with x-api-key %q", r.Method, r.URL, r.Header.Get("X-Api-Key"))
	}))
	defer target.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	p, err := New(Config{APIKey: "secret-model-key", BaseURL: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Send(context.Background(), builtin.Request{MaxOutputTokens: 10,
		Messages: []builtin.Message{{Role: builtin.RoleUser, Text: "hi"}}})
	if !errors.Is(err, egress.ErrCrossOrigin) {
		t.Errorf("err %v, want a refused redirect", err)
	}
	if hits.Load() != 0 {
		t.Errorf("the redirect's target got %d requests", hits.Load())
	}
}
