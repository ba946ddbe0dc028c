package agenttest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/planexhq/planex/internal/egress"
)

// CheckRedirectRefused serves a model API that answers every request with
// a redirect to another origin, has send make one request of a provider
// built on that API's base URL, and fails t unless send returns
// egress.ErrCrossOrigin and the redirect's target saw no request. keyHeader
// names the header that carries the provider's key; the target reports
// its value if it is ever reached, since that is the leak being guarded.
func CheckRedirectRefused(t *testing.T, keyHeader string, send func(baseURL string) error) {
	t.Helper()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Errorf("the redirect's target got %s %s with %s %q", r.Method, r.URL, keyHeader, r.Header.Get(keyHeader))
	}))
	defer target.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	if err := send(api.URL); !errors.Is(err, egress.ErrCrossOrigin) {
		t.Errorf("err %v, want a refused redirect", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
}
