package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/session"
)

// A cost budget with a model planex cannot price is refused before any
// model call, as a usage error naming the model and the price flags.
func TestBudgetNeedsAPrice(t *testing.T) {
	t.Parallel()
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		name    string
		flags   agentFlags
		budget  float64
		refused bool
	}{
		{"unknown model with a budget", agentFlags{name: "openai", model: "acme-9000"}, 0.0001, true},
		{"unknown model without a budget", agentFlags{name: "openai", model: "acme-9000"}, 0, false},
		{"unknown model with its prices", agentFlags{name: "openai", model: "acme-9000", priceIn: 1, priceOut: 2}, 1, false},
		{"openai's default model", agentFlags{name: "openai"}, 1, false},
		{"gemini's default model", agentFlags{name: "gemini"}, 1, false},
		{"codex's default model", agentFlags{name: "codex"}, 1, false},
		{"claude's default model", agentFlags{name: "claude"}, 1, false},
		{"a command agent reports its own cost", agentFlags{name: "command", command: "x"}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.flags.checkPrice(tc.budget, noEnv, "Pass --price-in and --price-out.")
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage {
				t.Fatalf("err = %v, want a usage error (exit 2)", err)
			}
			for _, want := range []string{`"acme-9000"`, "--price-in", "--price-out"} {
				if !strings.Contains(ee.msg, want) {
					t.Errorf("message %q does not name %s", ee.msg, want)
				}
			}
		})
	}
}

// The logger the CLI and the Action give the agents writes sentences, not
// key=value lines with a level.
func TestLoggerWritesSentences(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := logger(&b, false)
	log.Info("hidden unless verbose")
	log.With("agent", "openai").Warn("no price known for model", "model", "acme-9000")
	log.Error("retries used up", slog.Int("attempts", 5))
	got := b.String()
	want := "planex: warning: no price known for model (agent: openai; model: acme-9000)\n" +
		"planex: error: retries used up (attempts: 5)\n"
	if got != want {
		t.Errorf("log =\n%s\nwant\n%s", got, want)
	}
	var v bytes.Buffer
	logger(&v, true).DebugContext(context.Background(), "step started")
	if v.String() != "planex: step started\n" {
		t.Errorf("verbose log = %q", v.String())
	}
}

// The gate message agrees with what waits there.
func TestGateMessageAgrees(t *testing.T) {
	t.Parallel()
	s := &session.Session{Path: t.TempDir(), Meta: session.Meta{ID: "s1"}}
	for gate, want := range map[session.Gate]string{
		session.GateAngles: "The exploration angles are in ",
		session.GateTasks:  "The plan is in ",
	} {
		var out bytes.Buffer
		report(IO{Out: &out, Err: &out}, &engine.Outcome{Session: s, Stage: engine.StageWaiting, Gate: gate}, false)
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s gate: %q, want %q", gate, out.String(), want)
		}
	}
}

// The agent the CLI builds gets the CLI's logger: its retries reach the
// terminal as sentences, and an endpoint nobody answers at ends the step
// within seconds.
func TestAgentLogsRetriesToTheTerminal(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	env := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test"
		}
		return ""
	}
	var log bytes.Buffer
	a := agentFlags{name: "openai", model: "gpt-6.1-sol", baseURL: base}
	ag, err := a.build(env, agent.Containment{}, logger(&log, false))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = ag.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "plan", Dir: t.TempDir(), Timeout: time.Minute})
	if !errors.Is(err, agent.ErrModelUnreachable) {
		t.Fatalf("err = %v, want the endpoint reported unreachable", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s to give up on a closed port", d)
	}
	got := log.String()
	if !strings.Contains(got, "planex: warning: the call to model gpt-6.1-sol failed") || !strings.Contains(got, "trying again in") || strings.Contains(got, "level=") {
		t.Errorf("retries on the terminal:\n%s", got)
	}
}
