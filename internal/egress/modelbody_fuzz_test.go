package egress

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"testing/iotest"
)

// FuzzCheckModelBody: the gateway's check of a model call's body, which
// an agent writes. It never panics; its verdict does not depend on how
// the body arrives (whole, or a byte per read, as a slow client sends
// it); what it lets through is one JSON value (or nothing); and a body it
// refuses as a fetch stays refused with more members after it, so no
// later member turns a refused part back into an allowed one.
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
		if whole == nil && len(bytes.TrimSpace([]byte(body))) > 0 && !json.Valid([]byte(body)) {
			t.Fatalf("an unreadable body passed: %q", body)
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
