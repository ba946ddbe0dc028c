package egress

import (
	"errors"
	"strings"
	"testing"
)

// TestRedTeamGatewayNamespaceTools: OpenAI groups tools in a namespace,
// a tools entry with a tools list of its own. The program puts there
// what the gateway refuses in the top-level list: a remote MCP server
// (the provider connects to the address it names), a web search with
// live access (the model opens pages of its choosing), a code
// interpreter (billed per container). The checks read only the top-level
// list's entries, so each passed to the provider. A namespace's entries
// are now checked as the top-level ones are; functions pass.
func TestRedTeamGatewayNamespaceTools(t *testing.T) {
	t.Parallel()
	ns := func(inner string) string {
		return `{"model":"gpt-5","input":"hi","tools":[{"type":"namespace","name":"n","description":"d","tools":[` + inner + `]}]}`
	}
	for _, r := range []struct {
		name, body string
		want       error
	}{
		{"an MCP server", ns(`{"type":"mcp","server_label":"x","server_url":"https://attacker.example/mcp"}`), ErrServerFetch},
		{"a live web search", ns(`{"type":"web_search"}`), ErrServerFetch},
		{"a code interpreter", ns(`{"type":"function","name":"f"},{"type":"code_interpreter","container":{"type":"auto"}}`), ErrUnmetered},
		{"a hosted shell", ns(`{"type":"shell","environment":{"type":"container_auto"}}`), ErrUnmetered},
		{"functions", ns(`{"type":"function","name":"f","defer_loading":true,"parameters":{"type":"object","properties":{"tools":{"type":"array"}}}}`), nil},
	} {
		err := checkModelBody(ProviderOpenAI, strings.NewReader(r.body))
		if r.want == nil && err != nil || r.want != nil && !errors.Is(err, r.want) {
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		}
	}
	// A web search kept to the index in a namespace still has the call
	// held to max_tool_calls.
	sh, err := readModelBody(ProviderOpenAI, strings.NewReader(ns(`{"type":"web_search","external_web_access":false}`)))
	if err != nil || sh.openAISearches != 1 {
		t.Errorf("a cached search in a namespace: %v, %d searches counted, want 1", err, sh.openAISearches)
	}
}
