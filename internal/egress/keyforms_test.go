package egress

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRedTeamGatewayKeyEchoedEncoded: the --base-url server echoes the
// key it was sent encoded (a debug field holding the request's headers
// in base64, the raw header in hex), after any number of bytes (so at
// each of base64's three alignments), in the standard and URL
// alphabets, in a header value and in a body streamed a few bytes at a
// time: the masker matched the key as sent, so each encoding carried it
// to the program, which decoded it. Each is now masked; what the echo
// keeps of it (the bytes of a base64 group shared with what surrounds
// the key) is at most two bytes at each end.
func TestRedTeamGatewayKeyEchoedEncoded(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-Zq8_Jw-9xYv7Lk2Pn4Rt6Hb0Mc5Gd1Fs3Ee~Aa"
	var encoded []string
	for _, before := range []string{"", "x-api-key: ", "X-Api-Key: ", "Bearer "} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			encoded = append(encoded, enc.EncodeToString([]byte(before+key+"\r\n")))
		}
	}
	encoded = append(encoded, hex.EncodeToString([]byte(key)), strings.ToUpper(hex.EncodeToString([]byte(key))))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Debug-Request", base64.StdEncoding.EncodeToString([]byte("X-Api-Key: "+r.Header.Get("X-Api-Key"))))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		all := `data: {"debug":"` + strings.Join(encoded, `","`) + `"}` + "\n\n"
		for len(all) > 0 {
			n := min(7, len(all))
			io.WriteString(w, all[:n])
			w.(http.Flusher).Flush()
			all = all[n:]
		}
	}))
	defer hs.Close()
	resp, body := answerVia(t, hs.URL, key)
	seen := string(body) + "\n" + resp.Header.Get("X-Debug-Request")
	for _, e := range append(encoded, base64.StdEncoding.EncodeToString([]byte("X-Api-Key: "+key))) {
		// What decodes to the key's inner bytes: the encoding less the
		// groups it shares with the bytes around the key.
		inner := e[len(e)/2-8 : len(e)/2+8]
		if strings.Contains(seen, inner) {
			t.Errorf("the answer carries the key encoded (%s…): %s", inner, seen)
		}
	}
	if !strings.Contains(string(body), `data: {"debug":"`) || !strings.HasSuffix(string(body), "\"}\n\n") {
		t.Errorf("the answer's own text was changed: %q", body)
	}
}

// TestKeyForms: the masker holds the key, its hex in both cases and its
// base64 in both alphabets at each alignment; ordinary text streamed
// through it comes out whole.
func TestKeyForms(t *testing.T) {
	t.Parallel()
	forms := keyForms("sk-abcdefghijkl")
	if len(forms) < 5 {
		t.Fatalf("forms %q: want the key, two hex cases and base64 alignments", forms)
	}
	r := newRedactor("sk-abcdefghijkl")
	const text = "an ordinary answer: c2stYWJj is only the start of one, 736b2d6162 too\n"
	var out []byte
	for i := 0; i < len(text); i += 3 {
		out = append(out, r.filter([]byte(text[i:min(i+3, len(text))]))...)
	}
	if string(out) != text || len(r.carry) != 0 {
		t.Errorf("ordinary text came out as %q (held %q)", out, r.carry)
	}
}
