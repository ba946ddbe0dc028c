package egress

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// FuzzCheckModelBody: the gateway's check of a model call's body, which
// an agent writes. It never panics; its verdict does not depend on how
// the body arrives (whole, or a byte per read, as a slow client sends
// it); what it lets through is one JSON value in UTF-8 (or nothing); and
// a body it refuses as a fetch stays refused with more members after it,
// so no later member turns a refused part back into an allowed one. A
// body that passes, its output limit held to a few tokens (capEdits), is
// still JSON that passes.
func FuzzCheckModelBody(f *testing.F) {
	for _, seed := range []string{
		``,
		`{"model":"m","messages":[]}`,
		`{"model":"m","mcp_servers":[{"url":"https://a.example"}]}`,
		`{"tools":[{"type":"web_search","external_web_access":false}]}`,
		`{"tools":[{"type":"web_search","external_web_access":false,"external_web_access":true}]}`,
		`{"tools":[{"type":"shell","environment":{"type":"container_auto","network_policy":{"type":"allowlist","allowed_domains":["a.example"]}}}]}`,
		`{"container":{"network_policy":{"type":"disabled"}}}`,
		`{"messages":[{"content":[{"type":"image","source":{"type":"url","url":"https://a.example"}}]}]}`,
		`{"contents":[{"parts":[{"fileData":{"fileUri":"https://a.example"}}]}],"tools":[{"urlContext":{}}]}`,
		`{"model":"m","max_tokens":64000,"thinking":{"budget_tokens":32000},"max_output_tokens":null}`,
		`{"contents":[],"generationConfig":{"maxOutputTokens":1e9}}`,
		`{}`,
		`{"model":"m","max_tokens":9,"tools":[{"type":"advisor_20260301","model":"a","max_uses":null},{"type":"web_search_20250305","max_uses":50},{}]}`,
		`{"model":"m","tools":[{"type":"web_search","external_web_access":false}],"max_tool_calls":null}`,
	} {
		for _, p := range []Provider{ProviderAnthropic, ProviderOpenAI, ProviderGemini} {
			f.Add(string(p), seed)
		}
	}
	f.Fuzz(func(t *testing.T, provider, body string) {
		p := Provider(provider)
		whole := checkModelBody(p, bytes.NewReader([]byte(body)))
		slow := checkModelBody(p, iotest.OneByteReader(bytes.NewReader([]byte(body))))
		if (whole == nil) != (slow == nil) || errors.Is(whole, ErrServerFetch) != errors.Is(slow, ErrServerFetch) {
			t.Fatalf("verdicts differ by how the body arrives: %v, then %v", whole, slow)
		}
		if whole == nil && len(bytes.TrimSpace([]byte(body))) > 0 && (!json.Valid([]byte(body)) || !utf8.ValidString(body)) {
			t.Fatalf("an unreadable body passed: %q", body)
		}
		if whole == nil && len(bytes.TrimSpace([]byte(body))) > 0 {
			shape, _ := readModelBody(p, bytes.NewReader([]byte(body)))
			shape.pinTier = map[Provider]string{ProviderOpenAI: "default", ProviderAnthropic: "standard_only"}[p]
			r, n := capBody(bytes.NewReader([]byte(body)), int64(len(body)), capEdits(p, shape, 7, 7))
			capped, _ := io.ReadAll(r)
			if int64(len(capped)) != n || !json.Valid(capped) || checkModelBody(p, bytes.NewReader(capped)) != nil {
				t.Fatalf("%q, its output limit held, became %q (%d bytes said)", body, capped, n)
			}
		}
		trimmed := bytes.TrimSpace([]byte(body))
		if errors.Is(whole, ErrServerFetch) && len(trimmed) > 1 && trimmed[len(trimmed)-1] == '}' && json.Valid(trimmed) {
			longer := append(append([]byte(nil), trimmed[:len(trimmed)-1]...), `,"zz_after":{"type":"disabled","external_web_access":false}}`...)
			if err := checkModelBody(p, bytes.NewReader(longer)); !errors.Is(err, ErrServerFetch) {
				t.Fatalf("a refused body passed with a member after it (%v): %s", err, longer)
			}
		}
	})
}

// FuzzParseDest: the proxy's reading of a host an agent names (a CONNECT
// target, a URL's host, a TLS server name, a tunnelled Host). It never
// panics; a name it accepts is plain lower-case ASCII DNS syntax without
// empty labels and whose last label is no number (no address in
// disguise); and reading what it returns again gives the same
// destination, so the allow-list and the dial see one host.
func FuzzParseDest(f *testing.F) {
	for _, seed := range []string{"allowed.test", "ALLOWED.test.", "allowed.test..", "127.1", "0x7f000001", "[::ffff:127.0.0.1]",
		"[fe80::1%lo]", "xn--e1afmkfd.test", "ap\u0130.test", "a_b.test", "-a.test", "2130706433", "[allowed.test]"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, host string) {
		d, err := ParseDest(host)
		if err != nil {
			return
		}
		if d.Addr.IsValid() == (d.Name != "") {
			t.Fatalf("%q: read as both or neither a name and an address: %+v", host, d)
		}
		shown := d.Name
		if d.Addr.IsValid() {
			shown = d.Addr.String()
			if d.Addr.Is4In6() || d.Addr.Zone() != "" {
				t.Fatalf("%q: a mapped or zoned address passed: %v", host, d.Addr)
			}
		} else {
			labels := strings.Split(d.Name, ".")
			if d.Name != strings.ToLower(d.Name) || strings.ContainsFunc(d.Name, func(r rune) bool { return r >= 0x80 }) ||
				slices.Contains(labels, "") || numeric(labels[len(labels)-1]) {
				t.Fatalf("%q: read as the name %q", host, d.Name)
			}
		}
		again, err := ParseDest(shown)
		if err != nil || again != d {
			t.Fatalf("%q: read as %+v, whose spelling %q reads as %+v (%v)", host, d, shown, again, err)
		}
	})
}
