package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// upstreamRecorder is a model API that records what reached it.
type upstreamRecorder struct {
	mu   sync.Mutex
	seen []string // "METHOD path?query key-headers"
}

func (u *upstreamRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.seen = append(u.seen, fmt.Sprintf("%s %s?%s x-api-key=%s authorization=%s goog=%s", r.Method, r.URL.Path, r.URL.RawQuery,
		r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"), r.Header.Get("X-Goog-Api-Key")))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "data: ok\n\n")
}

func (u *upstreamRecorder) last() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) == 0 {
		return ""
	}
	return u.seen[len(u.seen)-1]
}

// serveGateway starts g on a Unix socket and returns a client for it.
func serveGateway(t testing.TB, g *Gateway) *http.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "gw.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); g.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

// TestGateway: what a CLI, or a command it runs, may ask of the gateway:
// only the provider's model calls with the placeholder pass, with the
// real key swapped in where the placeholder was and nothing else.
func TestGateway(t *testing.T) {
	t.Parallel()
	up := &upstreamRecorder{}
	hs := httptest.NewServer(up)
	defer hs.Close()
	const ph, key = "planex-placeholder-abc", "sk-real"
	type row struct {
		name, method, path string
		headers            map[string]string
		status             int
		upstream           string // what the upstream saw, when it was called
	}
	providers := []struct {
		p    Provider
		base string
		rows []row
	}{
		{ProviderAnthropic, "/", []row{
			{"messages", "POST", "/v1/messages", map[string]string{"X-Api-Key": ph}, 200, "POST /v1/messages? x-api-key=sk-real authorization= goog="},
			{"bearer token", "POST", "/v1/messages", map[string]string{"Authorization": "Bearer " + ph}, 200, "x-api-key= authorization=Bearer sk-real"},
			{"a key of the agent's own beside the placeholder", "POST", "/v1/messages", map[string]string{"X-Api-Key": ph, "Authorization": "Bearer attacker"}, 200, "x-api-key=sk-real authorization= goog="},
			{"wrong placeholder", "POST", "/v1/messages", map[string]string{"X-Api-Key": "guess"}, 401, ""},
			{"no key", "POST", "/v1/messages", nil, 401, ""},
			{"batches", "POST", "/v1/messages/batches", map[string]string{"X-Api-Key": ph}, 403, ""},
			{"files", "GET", "/v1/files", map[string]string{"X-Api-Key": ph}, 403, ""},
			{"organization keys", "GET", "/v1/organizations/api_keys", map[string]string{"X-Api-Key": ph}, 403, ""},
			{"path tricks", "POST", "/v1/messages/../files", map[string]string{"X-Api-Key": ph}, 403, ""},
		}},
		{ProviderOpenAI, "/v1", []row{
			{"responses", "POST", "/v1/responses", map[string]string{"Authorization": "Bearer " + ph}, 200, "POST /v1/responses? x-api-key= authorization=Bearer sk-real"},
			{"files", "POST", "/v1/files", map[string]string{"Authorization": "Bearer " + ph}, 403, ""},
			{"outside the base path", "POST", "/responses", map[string]string{"Authorization": "Bearer " + ph}, 403, ""},
		}},
		{ProviderGemini, "/", []row{
			{"stream", "POST", "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", map[string]string{"X-Goog-Api-Key": ph}, 200, "alt=sse x-api-key= authorization= goog=sk-real"},
			{"key in the query", "POST", "/v1beta/models/gemini-x:generateContent?key=" + ph, nil, 200, "POST /v1beta/models/gemini-x:generateContent? x-api-key= authorization= goog=sk-real"},
			{"tuned models", "POST", "/v1beta/tunedModels", map[string]string{"X-Goog-Api-Key": ph}, 403, ""},
			{"model listing", "GET", "/v1beta/models", map[string]string{"X-Goog-Api-Key": ph}, 403, ""},
		}},
	}
	for _, pr := range providers {
		u, _ := url.Parse(hs.URL + pr.base)
		client := serveGateway(t, &Gateway{Provider: pr.p, Upstream: u, Key: key, Placeholder: ph})
		for _, r := range pr.rows {
			before := up.last()
			req, _ := http.NewRequest(r.method, "http://gateway"+r.path, strings.NewReader("{}"))
			for k, v := range r.headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", pr.p, r.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != r.status {
				t.Errorf("%s %s: status %d (%s), want %d", pr.p, r.name, resp.StatusCode, body, r.status)
			}
			got := up.last()
			switch {
			case r.upstream == "" && len(up.seen) > 0 && got != before:
				t.Errorf("%s %s: refused, yet the upstream saw %q", pr.p, r.name, got)
			case r.upstream != "" && !strings.Contains(got, r.upstream):
				t.Errorf("%s %s: the upstream saw %q, want %q", pr.p, r.name, got, r.upstream)
			}
			if strings.Contains(got, ph) {
				t.Errorf("%s %s: the placeholder reached the upstream: %q", pr.p, r.name, got)
			}
		}
	}
}

// TestGatewayStreams: server-sent events reach the CLI as they are sent,
// not when the response ends.
func TestGatewayStreams(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: first\ndata: {}\n\n")
		http.NewResponseController(w).Flush()
		<-release
		io.WriteString(w, "event: last\ndata: {}\n\n")
	}))
	defer hs.Close()
	defer close(release)
	u, _ := url.Parse(hs.URL)
	client := serveGateway(t, &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "k", Placeholder: "p"})
	req, _ := http.NewRequest("POST", "http://gateway/v1/messages", strings.NewReader("{}"))
	req.Header.Set("X-Api-Key", "p")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if line != "event: first\n" {
		t.Fatalf("first event not passed on before the stream ended: %q, %v", line, err)
	}
}

// BenchmarkModelRequest measures one small model request straight to the
// API and through the gateway (Unix socket in, key swapped, forwarded), in
// the same run; docs/security.md states the difference.
func BenchmarkModelRequest(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"output_tokens":1}}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	body := strings.Repeat("x", 4096)
	run := func(b *testing.B, client *http.Client, base string) {
		for b.Loop() {
			req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(body))
			req.Header.Set("X-Api-Key", "p")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, hs.Client(), hs.URL) })
	b.Run("gateway", func(b *testing.B) {
		run(b, serveGateway(b, &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "k", Placeholder: "p"}), "http://gateway")
	})
}
