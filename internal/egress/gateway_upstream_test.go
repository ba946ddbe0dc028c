package egress

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRedTeamGatewayKeyEchoedByUpstream: the step's --base-url server (a
// LiteLLM or vLLM front, or a proxy in a corporate network) answers an
// error that repeats the key it was sent, in its body (split across two
// writes, as a stream cuts it) and in a header. The program that made
// the call read planex's real key from the answer before; the gateway
// now masks it wherever it stands, and passes the rest unchanged.
func TestRedTeamGatewayKeyEchoedByUpstream(t *testing.T) {
	t.Parallel()
	const key = "sk-real-0123456789abcdef"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Api-Key")
		w.Header().Set("X-Debug-Key", "got "+got)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"error\":\"invalid key "+got[:10])
		w.(http.Flusher).Flush()
		io.WriteString(w, got[10:]+", again: "+got+"\"}\n\n")
	}))
	defer hs.Close()
	resp, body := answerVia(t, hs.URL, key)
	mask := strings.Repeat("*", len(key))
	if strings.Contains(string(body), key) || strings.Contains(resp.Header.Get("X-Debug-Key"), key) {
		t.Fatalf("the answer carries the real key: header %q, body %q", resp.Header.Get("X-Debug-Key"), body)
	}
	if want := "data: {\"error\":\"invalid key " + mask + ", again: " + mask + "\"}\n\n"; string(body) != want || resp.Header.Get("X-Debug-Key") != "got "+mask {
		t.Errorf("got header %q, body %q; want the key masked and nothing else changed", resp.Header.Get("X-Debug-Key"), body)
	}
}

// TestRedactorAcrossChunks: the key is masked wherever the stream is
// cut, what only begins like the key passes whole, and a stream ending
// in a line break is held back by nothing.
func TestRedactorAcrossChunks(t *testing.T) {
	t.Parallel()
	const key = "sk-abcdefgh"
	mask := strings.Repeat("*", len(key))
	for _, c := range []struct{ in, want string }{
		{"a sk-abcdefgh b sk-abcdefghsk-abcdefgh c", "a " + mask + " b " + mask + mask + " c"},
		{"sk-abc sk-abcdefg", "sk-abc sk-abcdefg"},
		{"ssk-abcdefgh", "s" + mask},
	} {
		for cut := 0; cut <= len(c.in); cut++ {
			for cut2 := cut; cut2 <= len(c.in); cut2++ {
				r := newRedactor(key)
				var out []byte
				for _, part := range []string{c.in[:cut], c.in[cut:cut2], c.in[cut2:]} {
					out = append(out, r.filter([]byte(part))...)
				}
				out = append(out, r.carry...)
				if string(out) != c.want {
					t.Fatalf("%q cut at %d and %d: %q, want %q", c.in, cut, cut2, out, c.want)
				}
			}
		}
	}
	r := newRedactor(key)
	if got := r.filter([]byte("data: {}\n\n")); string(got) != "data: {}\n\n" || len(r.carry) != 0 {
		t.Errorf("an event's end was held back: passed %q, held %q", got, r.carry)
	}
	if r := newRedactor("*********"); string(r.filter([]byte("a *********** b"))) == "" {
		t.Error("a key of the mask's own bytes lost the text")
	}
}

// TestRedTeamGatewayUpstreamGames: attacks on what the gateway does with
// the upstream and with requests beyond a model call's shape. Held: the
// gateway sends each call once and never follows an upstream's redirect
// (Go's client would have re-sent x-api-key and x-goog-api-key, which it
// strips only for Authorization, to the redirect's host), so a server
// answering 307 to another host gets no second request there; a CONNECT
// to the gateway is no model call; an Upgrade asked on a model call is a
// connection's own header and goes no further.
func TestRedTeamGatewayUpstreamGames(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	var mu sync.Mutex
	var upgrades []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		upgrades = append(upgrades, r.Header.Get("Upgrade")+r.Header.Get("Connection"))
		mu.Unlock()
		if r.URL.Query().Get("beta") == "redirect" {
			http.Redirect(w, r, other.URL+"/v1/messages", http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	g := &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: "sk-real-0123456789", Placeholder: "ph"}
	c, _ := ServeGatewayForTest(t, g)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages?beta=redirect", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("X-Api-Key", "ph")
	if status, _ := statusOf(t, c, req); status != http.StatusTemporaryRedirect || elsewhere.Load() != 0 {
		t.Errorf("an upstream's redirect: status %d, the other host got %d requests; want the 307 passed back and none", status, elsewhere.Load())
	}

	req, _ = http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("X-Api-Key", "ph")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Sec-WebSocket-Version", "13")
	if status, _ := statusOf(t, c, req); status != http.StatusOK {
		t.Errorf("a model call asking for a WebSocket: status %d", status)
	}
	mu.Lock()
	if len(upgrades) != 2 || upgrades[1] != "" {
		t.Errorf("the upstream saw Upgrade/Connection %q, want none", upgrades)
	}
	mu.Unlock()

	// CONNECT, written by hand as a program would.
	sock := filepath.Join(t.TempDir(), "gw.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(t.Context(), ln)
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nX-Api-Key: ph\r\n\r\n", u.Host, u.Host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != http.StatusForbidden || len(upgrades) != 2 {
		t.Errorf("CONNECT to the gateway: status %d, the upstream got %d requests in all; want 403 and no more than 2", resp.StatusCode, len(upgrades))
	}
}

// TestRedTeamGatewayUnderscoredCredentials: the program sends the
// placeholder where the gateway looks, and a credential of its own
// under the same name spelt with underscores (X_Api_Key, X_Goog_Api_Key),
// a name of its own to Go that a CGI, PHP-FPM or WSGI server behind
// --base-url reads as the dashed one, beside planex's key. It reached the
// upstream before; now only planex's key does.
func TestRedTeamGatewayUnderscoredCredentials(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for name, vs := range r.Header {
			if strings.Contains(strings.Join(vs, ","), "sk-program") {
				seen = append(seen, name)
			}
		}
		mu.Unlock()
		io.WriteString(w, `{}`)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	for _, r := range []struct {
		p          Provider
		path, body string
		key        string
	}{
		{ProviderAnthropic, "/v1/messages", `{"model":"m","messages":[]}`, "X-Api-Key"},
		{ProviderGemini, "/v1beta/models/gemini-x:generateContent", `{"contents":[]}`, "X-Goog-Api-Key"},
	} {
		c := serveGateway(t, &Gateway{Provider: r.p, Upstream: u, Key: "sk-real-0123456789", Placeholder: "ph"})
		req, _ := http.NewRequest(http.MethodPost, "http://gateway"+r.path, strings.NewReader(r.body))
		req.Header.Set(r.key, "ph")
		req.Header[strings.ReplaceAll(r.key, "-", "_")] = []string{"sk-program"}
		req.Header["x_"+strings.ToLower(r.key[2:])] = []string{"sk-program"} // another case too
		if status, msg := statusOf(t, c, req); status != http.StatusOK {
			t.Fatalf("%s: status %d (%s)", r.p, status, msg)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("the program's own credential reached the upstream under %q", seen)
	}
}

// TestRedTeamGatewayKeyInAnEncodedAnswer: the --base-url server echoes
// the key in an answer it compresses unasked (br, deflate, x-gzip, gzip
// twice): Go's transport decodes only the gzip it asked for, so the
// answer went to the caller as it came, the masker blind to the key in
// it and the meter to its usage, while the caller's HTTP client decodes
// it. Such an answer is now refused (502) with none of its bytes, and
// metered at the floor of its size; a gzip answer the transport decodes
// still reaches the caller, the key masked.
func TestRedTeamGatewayKeyInAnEncodedAnswer(t *testing.T) {
	t.Parallel()
	const key = "sk-real-0123456789abcdef"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := r.URL.Query().Get("beta")
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		io.WriteString(zw, `{"error":"bad key `+r.Header.Get("X-Api-Key")+`"}`)
		zw.Close()
		if enc == "gzip, gzip" {
			inner := b.Bytes()
			b = bytes.Buffer{}
			zw = gzip.NewWriter(&b)
			zw.Write(inner)
			zw.Close()
		}
		w.Header().Set("Content-Encoding", enc)
		w.Write(b.Bytes())
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	meter := &Meter{}
	c := serveGateway(t, &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: key, Placeholder: "ph", Meter: meter})
	c.Transport.(*http.Transport).DisableCompression = true
	for _, enc := range []string{"br", "deflate", "x-gzip", "gzip, gzip", "identity, gzip", "gzip"} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages?beta="+url.QueryEscape(enc), strings.NewReader(`{"model":"m","messages":[]}`))
		req.Header.Set("X-Api-Key", "ph")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		plain := body
		if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
			plain, _ = io.ReadAll(zr)
		}
		if bytes.Contains(plain, []byte(key)) || bytes.Contains(body, []byte(key)) {
			t.Errorf("%s: the caller read the key: %q", enc, plain)
		}
		want := http.StatusBadGateway
		if enc == "gzip" {
			want = http.StatusOK
			if !strings.Contains(string(body), strings.Repeat("*", len(key))) {
				t.Errorf("gzip: the caller got %q, want the answer with the key masked", body)
			}
		}
		if resp.StatusCode != want {
			t.Errorf("%s: status %d (%q), want %d", enc, resp.StatusCode, body, want)
		}
	}
	var out int64
	for _, u := range meter.Totals() {
		out += u.OutputTokens
	}
	if out < 5*20 {
		t.Errorf("the encoded answers were metered at %d output tokens, want at least their bytes", out)
	}
}

// TestRedTeamGatewayKeyInAMalformedAnswer: the --base-url server echoes
// the request's header back in a header line Go cannot parse; the
// transport's error quotes the line, and the gateway put the error in
// its 502 to the caller, the key with it. The error now reaches the
// caller with the key masked.
func TestRedTeamGatewayKeyInAMalformedAnswer(t *testing.T) {
	t.Parallel()
	const key = "sk-real-0123456789abcdef"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				// The whole request is read before the answer, so the
				// gateway's transport is not still sending its body when
				// the connection closes (an error of its own, not the
				// malformed answer's).
				io.Copy(io.Discard, req.Body)
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nbad echo %s\r\n\r\n", req.Header.Get("X-Api-Key"))
			}()
		}
	}()
	c, req := anthropicCallVia(t, "http://"+ln.Addr().String(), key)
	status, msg := statusOf(t, c, req)
	if strings.Contains(msg, key) {
		t.Fatalf("the caller read the key in the gateway's error: %q", msg)
	}
	if status != http.StatusBadGateway || !strings.Contains(msg, "bad echo "+strings.Repeat("*", len(key))) {
		t.Errorf("status %d (%q), want 502 with the echoed key masked", status, msg)
	}
}

// TestRedTeamGatewayKeyInAHeaderName: the --base-url server echoes the
// key it was sent as the name of a header of its answer (a debugging
// front that turns request values into header names): the masker read
// header values only, and the caller read the key from the name. It is
// masked there too.
func TestRedTeamGatewayKeyInAHeaderName(t *testing.T) {
	t.Parallel()
	const key = "sk-real-0123456789abcdef"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-"+r.Header.Get("X-Api-Key"), "1")
		io.WriteString(w, `{}`)
	}))
	defer hs.Close()
	resp, _ := answerVia(t, hs.URL, key)
	masked := false
	for name := range resp.Header {
		if strings.Contains(strings.ToLower(name), strings.ToLower(key)) {
			t.Errorf("the caller read the key in the header name %q", name)
		}
		masked = masked || strings.Contains(name, strings.Repeat("*", len(key)))
	}
	if !masked {
		t.Errorf("got the header %v, want the echoed name with the key masked", resp.Header)
	}
}

// anthropicCallVia is a gateway for key in front of the upstream at
// upstreamURL and a Messages call to it carrying the placeholder.
func anthropicCallVia(t *testing.T, upstreamURL, key string) (*http.Client, *http.Request) {
	t.Helper()
	u, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	c := serveGateway(t, &Gateway{Provider: ProviderAnthropic, Upstream: u, Key: key, Placeholder: "ph"})
	req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("X-Api-Key", "ph")
	return c, req
}

// answerVia sends anthropicCallVia's call and returns its answer, the
// body read whole.
func answerVia(t *testing.T, upstreamURL, key string) (*http.Response, []byte) {
	t.Helper()
	c, req := anthropicCallVia(t, upstreamURL, key)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body
}

// TestGatewayKeyInTrailers: an upstream echoes the key it was sent in a
// trailer after the answer's body (a proxy's debugging trailer, a
// server's "Server-Timing" with the request's header), where the masker
// of the header and body does not look. Held: the gateway passes no
// trailer on, declared or not, so the program reads none.
func TestGatewayKeyInTrailers(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Echo")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","usage":{"input_tokens":1,"output_tokens":1}}`)
		w.Header().Set("X-Echo", r.Header.Get("X-Api-Key"))
		w.Header().Set(http.TrailerPrefix+"X-Undeclared", r.Header.Get("X-Api-Key"))
	}))
	defer hs.Close()
	const key = "sk-ant-real-key-0123456789"
	resp, body := answerVia(t, hs.URL, key)
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Fatalf("status %d, body %q", resp.StatusCode, body)
	}
	for k, vs := range resp.Trailer {
		if strings.Contains(strings.Join(vs, ","), key) {
			t.Errorf("the trailer %s carried the key to the program", k)
		}
	}
	if strings.Contains(fmt.Sprint(resp.Header), key) || strings.Contains(string(body), key) {
		t.Error("the key reached the program")
	}
}

// TestGatewayKeyInInformationalAnswers: an upstream sends an
// informational answer (103 Early Hints) before the real one, with the
// key it was sent in its header, where a proxy that relays 1xx answers
// would pass it before the masked header of the final one. Held: the
// gateway relays no informational answer.
func TestGatewayKeyInInformationalAnswers(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</"+r.Header.Get("X-Api-Key")+">; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer hs.Close()
	const key = "sk-ant-real-key-0123456789"
	c, req := anthropicCallVia(t, hs.URL, key)
	var hints []string
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			hints = append(hints, fmt.Sprint(code, h))
			return nil
		},
	}))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, h := range append(hints, fmt.Sprint(resp.Header), string(body)) {
		if strings.Contains(h, key) {
			t.Errorf("the key reached the program: %s", h)
		}
	}
}
