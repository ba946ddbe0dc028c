package egress

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// strictServer is an OpenAI-compatible server behind --base-url that
// refuses a Responses call naming a member it does not know (as a
// server validating its requests strictly does), here max_tool_calls.
func strictServer() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &body) != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		if _, ok := body["max_tool_calls"]; ok {
			http.Error(w, `{"error":"unknown field max_tool_calls"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"response","model":"local","output":[],"usage":{"input_tokens":10,"output_tokens":1}}`)
	})
}

// TestGatewayToolCallsOnlyForBuiltinTools: max_tool_calls bounds the
// calls of the tools the provider runs itself within one call (web
// search); the function and custom tools a caller runs end the call
// each time. The gateway inserted it into every OpenAI call with a
// tools member, so an OpenAI-compatible server behind --base-url that
// refuses a member it does not know refused every call with a function
// tool. It is now inserted only where the call has a tool of another
// type (a type given twice counts as another), so a call with function
// tools alone reaches such a server as it was sent (its output limit
// aside), and one with the provider's web search is still held.
func TestGatewayToolCallsOnlyForBuiltinTools(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(strictServer())
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	c := serveGateway(t, &Gateway{Provider: ProviderOpenAI, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
		Cap: func(string) (int64, func()) { return 2000, nil }})
	for _, r := range []struct {
		tools  string
		status int // 400: max_tool_calls was inserted
	}{
		{`[{"type":"function","name":"f","parameters":{}}]`, 200},
		{`[{"type":"custom","name":"apply_patch"},{"type":"function","name":"f"}]`, 200},
		{`[]`, 200},
		{`[{"type":"web_search","external_web_access":false}]`, 400},
		{`[{"type":"function","name":"f"},{"type":"web_search","external_web_access":false}]`, 400},
		{`[{"type":"function","type":"local_shell"}]`, 400},
		{`[{"name":"no type"}]`, 400},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/responses", strings.NewReader(`{"model":"local","input":"hi","tools":`+r.tools+`}`))
		req.Header.Set("Authorization", "Bearer ph")
		if status, msg := statusOf(t, c, req); status != r.status {
			t.Errorf("tools %s: status %d (%s), want %d", r.tools, status, msg, r.status)
		}
	}
}
