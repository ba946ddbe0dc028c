package egress

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestRedTeamGatewayParserGamesHeld: bodies a lenient reader upstream
// might read otherwise than the gateway's check (a byte-order mark, a
// comment, data after the object, NaN, single quotes, a second object,
// a gzip body, a form or multipart type, nesting past the bound), and
// endpoints of Gemini's that bill outside generateContent (embeddings,
// predictions, long-running video): each is refused and none reaches
// the provider. Output limits spelt as numbers the cap's integer reader
// does not take (1e400, 128000.0, past int64, -1) reach it lowered to
// the bound.
func TestRedTeamGatewayParserGamesHeld(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+string(b))
		mu.Unlock()
		io.WriteString(w, `{}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	anth := serveGateway(t, &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real", Placeholder: "ph",
		Cap: func(string) (int64, func()) { return 500, nil }})
	gem := serveGateway(t, &Gateway{Provider: ProviderGemini, Upstream: u, Key: "sk-real", Placeholder: "ph",
		Cap: func(string) (int64, func()) { return 500, nil }})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, `{"model":"m","max_tokens":10,"mcp_servers":[{"url":"https://attacker.example"}]}`)
	zw.Close()
	const ok = `{"model":"m","max_tokens":10,"messages":[]}`
	for _, c := range []struct {
		name, body string
		header     map[string]string
	}{
		{"a byte-order mark", "\ufeff" + ok, nil},
		{"a comment", `{"model":"m",/*"mcp_servers":[]*/"max_tokens":10}`, nil},
		{"data after the object", ok + `{"mcp_servers":[{"url":"https://attacker.example"}]}`, nil},
		{"NaN", `{"model":"m","max_tokens":NaN}`, nil},
		{"single quotes", `{'model':'m','max_tokens':10}`, nil},
		{"an array of two calls", `[` + ok + `,` + ok + `]`, nil},
		{"gzip", gz.String(), map[string]string{"Content-Encoding": "gzip"}},
		{"a form", "model=m&max_tokens=10", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"multipart", "--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--b--\r\n", map[string]string{"Content-Type": "multipart/form-data; boundary=b"}},
		{"JSON in another type", ok, map[string]string{"Content-Type": "text/plain"}},
		{"nesting past the bound", `{"metadata":` + strings.Repeat(`[`, 600) + strings.Repeat(`]`, 600) + `}`, nil},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(c.body))
		req.Header.Set("X-Api-Key", "ph")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		if status, _ := statusOf(t, anth, req); status == http.StatusOK {
			t.Errorf("%s: passed", c.name)
		}
	}
	for _, path := range []string{"/v1beta/models/gemini-x:embedContent", "/v1beta/models/gemini-x:batchEmbedContents",
		"/v1beta/models/imagen-x:predict", "/v1beta/models/veo-x:predictLongRunning", "/v1beta/models/gemini-x:generateAnswer",
		"/v1beta/models/gemini-x:generateContent:predict", "/v1beta/models/gemini-x%3ApredictLongRunning"} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+path, strings.NewReader(`{"contents":[]}`))
		req.Header.Set("X-Goog-Api-Key", "ph")
		if status, _ := statusOf(t, gem, req); status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", path, status)
		}
	}
	mu.Lock()
	if len(got) > 0 {
		t.Errorf("the provider got %q", got)
	}
	got = nil
	mu.Unlock()
	for _, limit := range []string{"1e400", "128000.0", "99999999999999999999999", "-1", "1E5"} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages",
			strings.NewReader(`{"model":"m","max_tokens":`+limit+`,"messages":[]}`))
		req.Header.Set("X-Api-Key", "ph")
		if status, msg := statusOf(t, anth, req); status != http.StatusOK {
			t.Fatalf("max_tokens %s: status %d (%s)", limit, status, msg)
		}
		mu.Lock()
		if want := `/v1/messages {"model":"m","max_tokens":500,"messages":[]}`; got[len(got)-1] != want {
			t.Errorf("max_tokens %s reached the provider as %s, want %s", limit, got[len(got)-1], want)
		}
		mu.Unlock()
	}
}
