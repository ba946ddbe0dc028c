package mcp

import (
	"strings"
	"testing"
)

// FuzzParse: any configuration is read or refused with an error naming
// its source; what is read has valid, sorted, unique server names of a
// known type, and never expands planex's own credentials.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"t":{"command":"node","args":["s.js"],"env":{"K":"${MY_KEY}"}}}}`,
		`{"mcpServers":{"h":{"type":"http","url":"https://x.example/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`,
		`{"mcpServers":{"bad name":{"command":"x"}}}`, `{"mcpServers":{"g":{"command":"x","env":{"A":"${GITHUB_TOKEN}"}}}}`,
		`{"mcpServers":null}`, `{`, `[]`,
	} {
		f.Add([]byte(s))
	}
	lookup := func(k string) (string, bool) {
		if k == "GITHUB_TOKEN" || strings.HasPrefix(k, "INPUT_") {
			return "planex-own-credential", true
		}
		return "v-" + k, true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.json", lookup)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error %q does not name its source", err)
			}
			return
		}
		for i, s := range cfg.Servers {
			if !serverName.MatchString(s.Name) || (i > 0 && cfg.Servers[i-1].Name >= s.Name) {
				t.Fatalf("servers %q are not valid, sorted and unique", s.Name)
			}
			if s.Type != TypeStdio && s.Type != TypeHTTP {
				t.Fatalf("server %s of type %q", s.Name, s.Type)
			}
			for _, v := range append(append(append([]string{s.Command, s.URL}, s.Args...), values(s.Env)...), values(s.Headers)...) {
				if strings.Contains(v, "planex-own-credential") {
					t.Fatalf("server %s got planex's own credential", s.Name)
				}
			}
		}
	})
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
