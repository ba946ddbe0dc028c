// Package agenttest holds test helpers shared by the model providers'
// tests: a scripted HTTP API that answers in order and records requests.
package agenttest

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
)

// Reply is one scripted HTTP answer.
type Reply struct {
	Status int // 200 when zero
	Header map[string]string
	Body   string
}

// API serves Replies in order on Path and records each request's JSON body
// and the value of AuthHeader.
type API struct {
	T          *testing.T
	Path       string
	AuthHeader string

	mu      sync.Mutex
	Replies []Reply
	Reqs    []map[string]any
	Auth    []string
}

func (f *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != f.Path {
		f.T.Errorf("unexpected path %s, want %s", r.URL.Path, f.Path)
	}
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		f.T.Errorf("request is not JSON: %v", err)
	}
	f.Reqs = append(f.Reqs, m)
	f.Auth = append(f.Auth, r.Header.Get(f.AuthHeader))
	if len(f.Replies) == 0 {
		f.T.Errorf("more requests than scripted replies")
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	rep := f.Replies[0]
	f.Replies = f.Replies[1:]
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status == 0 {
		rep.Status = http.StatusOK
	}
	w.WriteHeader(rep.Status)
	io.WriteString(w, rep.Body)
}
