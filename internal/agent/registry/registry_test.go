package registry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/agent/clis"
	"github.com/planexhq/planex/internal/agent/command"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNew(t *testing.T) {
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\n"), 0o755)
	t.Setenv("PATH", bin)
	cases := []struct {
		name    string
		o       Options
		wantErr string
		check   func(agent.Agent) bool
	}{
		{"anthropic", Options{Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "k"})}, "", isBuiltin},
		{"anthropic", Options{Getenv: env(nil)}, "set ANTHROPIC_API_KEY", nil},
		{"anthropic", Options{APIKeyEnv: "MY_KEY", Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "k"})}, "set MY_KEY", nil},
		{"openai", Options{APIKeyEnv: "MY_KEY", Getenv: env(map[string]string{"MY_KEY": "k"})}, "", isBuiltin},
		{"openai", Options{Getenv: env(nil)}, "set OPENAI_API_KEY", nil},
		{"openai", Options{BaseURL: "http://localhost:11434/v1", Getenv: env(nil)}, "", isBuiltin},
		{"openai", Options{BaseURL: "https://openrouter.ai/api/v1", Getenv: env(nil)}, "set OPENAI_API_KEY", nil},
		{"claude", Options{}, "", func(a agent.Agent) bool { _, ok := a.(*clis.Agent); return ok }},
		{"codex", Options{}, "npm install -g @openai/codex", nil},
		{"command", Options{Command: "echo {}"}, "", func(a agent.Agent) bool { _, ok := a.(*command.Agent); return ok }},
		{"command", Options{}, "needs a command", nil},
		{"bogus", Options{}, "choose one of: anthropic, openai, claude, codex, gemini, command", nil},
	}
	for _, tc := range cases {
		a, err := New(tc.name, tc.o)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s %+v: err %v, want %q", tc.name, tc.o.APIKeyEnv, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !tc.check(a) {
			t.Errorf("%s: %T %v", tc.name, a, err)
		}
	}
}

func isBuiltin(a agent.Agent) bool { _, ok := a.(*builtin.Agent); return ok }

// TestKeyOnlyInHeader runs a whole step through the registry and checks
// the key went to the API header and nowhere near the model's commands.
func TestKeyOnlyInHeader(t *testing.T) {
	var bodies []string
	var auth string
	turn := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		auth = r.Header.Get("X-Api-Key")
		turn++
		w.Header().Set("Content-Type", "application/json")
		switch turn {
		case 1:
			io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","usage":{"input_tokens":1000000,"cache_read_input_tokens":1000000,"output_tokens":0},
				"content":[{"type":"tool_use","id":"t1","name":"run_command","input":{"command":"echo key=[$MY_SECRET_KEY]"}}]}`)
		default:
			io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","usage":{"input_tokens":0,"output_tokens":1000000},
				"content":[{"type":"tool_use","id":"t2","name":"report_result","input":{"id":"T1","status":"completed","findings":"x","tests_passed":true}}]}`)
		}
	}))
	defer srv.Close()
	t.Setenv("MY_SECRET_KEY", "sekrit-123")
	a, err := New("anthropic", Options{BaseURL: srv.URL, APIKeyEnv: "MY_SECRET_KEY", PricePerMTokIn: 2, PricePerMTokOut: 10})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), agent.Step{Phase: agent.PhaseExecute, ID: "T1", Prompt: "p", Dir: t.TempDir(), Scope: "**", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if auth != "sekrit-123" {
		t.Errorf("x-api-key %q", auth)
	}
	if !strings.Contains(bodies[1], `key=[]`) {
		t.Errorf("command output: %s", bodies[1])
	}
	for _, b := range bodies {
		if strings.Contains(b, "sekrit-123") {
			t.Errorf("key leaked into a request body")
		}
	}
	// The override keeps the cache-read ratio the table has for the
	// default model (its cache reads against its input price).
	listed, ok := builtin.LookupPrice(agent.DefaultModel("anthropic"))
	if !ok || listed.CacheReadPerMTok <= 0 || listed.CacheReadPerMTok >= listed.InPerMTok {
		t.Fatalf("the default Anthropic model's row %+v has no cache discount to keep", listed)
	}
	want := 2 + 2*listed.CacheReadPerMTok/listed.InPerMTok + 10
	if res.Usage.CostUSD < want-1e-9 || res.Usage.CostUSD > want+1e-9 || res.Usage.CacheReadTokens != 1000000 {
		t.Errorf("usage with override %+v, want cost %.4f for 1M input, 1M cache reads, 1M output", res.Usage, want)
	}
}
