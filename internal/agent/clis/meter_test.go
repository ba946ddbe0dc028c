package clis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/egress"
)

// TestRedTeamGatewayMetersUnreportedCalls: a program in Claude Code's
// place (a malicious CLI, or the shell of a prompt-injected one) calls
// the model gateway itself five times with the placeholder key it holds,
// against a model server speaking Anthropic's wire format, then reports
// that the step spent nothing. The step's recorded usage is what the
// gateway metered: the calls' tokens, priced by the price table, not the
// zero the program claimed (which budgets would have added up). With a
// limit on the step (what the session's budget left it), the gateway
// refuses the calls past it and the model server never sees them.
func TestRedTeamGatewayMetersUnreportedCalls(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on this machine for the contained program to call the gateway with")
	}
	box, err := testSandbox()
	if err != nil {
		t.Skipf("no sandbox on this machine, so no gateway: %v", err)
	}
	if err := box.ProbeNetwork(context.Background()); err != nil {
		t.Skipf("this machine cannot make network namespaces, so no gateway: %v", err)
	}
	const calls = 5
	result := `{"id":"T1","status":"completed","findings":"nothing","files_modified":[],"tests_passed":true}`
	report := fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"result":%q,"total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}`, result)
	script := "#!/bin/sh\nfor i in $(seq " + fmt.Sprint(calls) + "); do\n" +
		`  curl -s -o /dev/null -H "x-api-key: $ANTHROPIC_API_KEY" -H 'content-type: application/json' ` +
		`--data '{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[{"role":"user","content":"spend"}]}' "$ANTHROPIC_BASE_URL/v1/messages"` +
		"\ndone\ncat <<'EOF'\n" + report + "\nEOF\n"
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// claude-sonnet-5-5 lists at $2 in and $10 out a million tokens, so
	// each call's 1000 in and 100 out cost $0.003.
	const perCall = (1000*2.0 + 100*10.0) / 1e6
	for _, c := range []struct {
		name   string
		limit  agent.Limit
		passed int
	}{
		{"no budget", agent.Limit{}, calls},
		{"cost left for two calls", agent.Limit{CostUSD: 1.5 * perCall}, 2},
		{"tokens left for three calls", agent.Limit{Tokens: 2500}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := agenttest.Anthropic(t, agenttest.Usage{In: 1000, Out: 100}, func(agenttest.Turn) agenttest.Action {
				return agenttest.Action{Text: "spent"}
			})
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			a, err := New(Config{Name: "claude", BaseURL: hs.URL, Env: append(os.Environ(), "ANTHROPIC_API_KEY="+testKey),
				Contain:  agent.Containment{Sandbox: box},
				LookPath: func(string) (string, error) { return filepath.Join(bin, "claude"), nil }})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), agent.Step{Phase: agent.PhaseExecute, ID: "T1", Prompt: "## Step: carry out task T1",
				Dir: gitDir(t), Scope: "**", Timeout: time.Minute, Limit: c.limit})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if n := len(srv.Turns()); n != c.passed {
				t.Fatalf("the model server got %d calls, want %d of the program's %d (requests %v)", n, c.passed, calls, srv.Requests())
			}
			for _, k := range srv.Keys() {
				if k != testKey {
					t.Fatalf("the model server got key %q, not the real one: the calls did not pass the gateway", k)
				}
			}
			wantCost := float64(c.passed) * perCall
			if u := res.Usage; u.InputTokens != int64(c.passed)*1000 || u.OutputTokens != int64(c.passed)*100 || math.Abs(u.CostUSD-wantCost) > 1e-9 {
				t.Errorf("recorded %+v, want the %d metered calls: %d in, %d out, $%.4f", u, c.passed, c.passed*1000, c.passed*100, wantCost)
			}
		})
	}
}

// TestRedTeamMeteredModelPrices: a program in a CLI's place names a
// dearer model of its provider's in its calls (or as an advisor tool's
// model, which the gateway meters under that model): Claude Code
// 2.1.330 lists Mythos and Fable models at five times the price of the
// default Sonnet 5.5, and without a row of their own they were priced
// as the step's model, a fifth of what they bill. Each model of that
// catalog is priced as it bills. A model no row knows as it is (a new
// Claude id, OpenAI's gpt-5-pro, which the gpt-5 row's prefix matched
// at $1.25 in and $10 out against its $15 and $120, a Gemini preview)
// was priced as the step's model too, or by the row its prefix found:
// it is now priced at the dearest row of its provider, as are the
// models a meter lumps together past the 32 it keeps apart. The step's
// own model, dated or not, keeps the step's price (the user's, when
// given, which priced every model before).
func TestRedTeamMeteredModelPrices(t *testing.T) {
	t.Parallel()
	user := &builtin.Price{InPerMTok: 1, OutPerMTok: 1}
	checkMeteredPrices(t, []meteredPrice{
		{"claude", "claude-sonnet-5-5", nil, "claude-mythos-5", 60},
		{"claude", "claude-sonnet-5-5", nil, "claude-mythos-5-2-20261001", 48},
		{"claude", "claude-sonnet-5-5", nil, "claude-fable-5-1", 60},
		{"claude", "claude-sonnet-5-5", nil, "claude-haiku-5-5", 3}, // its rates above 100K prompt tokens
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5", 12},
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5-20261001", 12},
		{"claude", "claude-sonnet-5-5", nil, "", 12},
		// Claude's dearest row: Opus 4 at $15 in and $75 out.
		{"claude", "claude-sonnet-5-5", nil, "claude-unheard-of-9", 90},
		{"claude", "claude-sonnet-5-5", nil, "claude-3-5-sonnet-latest", 90},
		{"claude", "claude-sonnet-5-5", nil, egress.OtherModels, 90},
		{"claude", "claude-sonnet-5-5", user, "claude-sonnet-5-5", 2},
		{"claude", "claude-sonnet-5-5", user, "claude-mythos-5", 60},
		{"claude", "claude-sonnet-5-5", user, "claude-unheard-of-9", 90},
		{"codex", "gpt-6.1-sol", nil, "gpt-6.1-sol", 12},
		{"codex", "gpt-6.1-sol", nil, "gpt-5-pro", 135},
		{"codex", "gpt-6.1-sol", nil, "gpt-5-pro-2025-10-06", 135},
		// OpenAI's dearest row: o1-pro at $150 in and $600 out.
		{"codex", "gpt-6.1-sol", nil, "gpt-5.9-ultra", 750},
		{"codex", "gpt-6.1-sol", nil, "o3-deep-research", 750},
		{"gemini", "gemini-3.8-flash", nil, "gemini-3.8-flash", 4.5},
		{"gemini", "gemini-3.8-flash", nil, "gemini-3-pro-preview", 22},
		// Gemini's dearest row: 3 Pro Image at $4 in (3 Pro's long
		// prompts) and $120 out.
		{"gemini", "gemini-3.8-flash", nil, "gemini-2.5-flash-preview-05-20", 124},
		{"gemini", "gemini-3.8-flash", nil, "gemini-2.5-flash-image", 30.3},
		{"gemini", "gemini-3.8-flash", nil, "gemini-3-pro-image-preview", 124},
		// A call whose prompt held more than 200K tokens, at the
		// long-context rates: twice the input, 1.5 times the output.
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5" + egress.LongPrompt, 19},
		{"claude", "claude-sonnet-5-5", user, "claude-sonnet-5-5" + egress.LongPrompt, 3.5},
		{"claude", "claude-sonnet-5-5", nil, "claude-unheard-of-9" + egress.LongPrompt, 142.5},
		{"claude", "claude-sonnet-5-5", nil, egress.OtherModels + egress.LongPrompt, 142.5},
		// A call the answer says ran in a premium tier (a project's or
		// organisation's default): priority at twice every rate, a tier
		// of unknown price at six times (fast mode's), after the long
		// prompt's rates; the user's price is multiplied too.
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5" + egress.PriorityTier, 24},
		{"claude", "claude-sonnet-5-5", user, "claude-sonnet-5-5" + egress.PriorityTier, 4},
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5" + egress.PriorityTier + egress.LongPrompt, 38},
		{"claude", "claude-sonnet-5-5", nil, egress.OtherModels + egress.PriorityTier, 180},
		{"codex", "gpt-6.1-sol", nil, "gpt-6.1-sol" + egress.PriorityTier, 24},
		{"codex", "gpt-6.1-sol", nil, "gpt-6.1-sol" + egress.PremiumTier, 72},
		// One region (a workspace's default_inference_geo): 1.1 times.
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5" + egress.RegionalInference, 13.2},
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-5" + egress.PriorityTier + egress.RegionalInference + egress.LongPrompt, 41.8},
	})
	// The per-call fees the gateway metered (web searches) add to the cost.
	a := &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}
	if got := a.metered(map[string]agent.Usage{"claude-sonnet-5-5": {InputTokens: meteredMillion, CostUSD: 0.5}}); math.Abs(got.CostUSD-2.5) > 1e-9 {
		t.Errorf("a million tokens in and $0.50 of search fees metered at $%.4f, want $2.5000", got.CostUSD)
	}
}

// TestRedTeamGatewaySharesTheRemainder: two tasks' CLIs run at once,
// each told the whole remainder ($1). One has spent $0.90; the other's
// gateway, having metered $0.10 of its own, let its calls through before
// (each step alone was under $1) and now refuses them: together they
// spent what was left.
func TestRedTeamGatewaySharesTheRemainder(t *testing.T) {
	t.Parallel()
	a := &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}
	meter := &egress.Meter{}
	meter.Add("claude-sonnet-5-5", agent.Usage{InputTokens: 50_000}) // $0.10
	for _, c := range []struct {
		name   string
		others float64
		over   bool
	}{
		{"the other step spent little", 0.5, false},
		{"together they spent the remainder", 0.9, true},
	} {
		left := agent.Limit{CostUSD: 1}
		left.Shared = agent.NewShared(left)
		left.Shared.Spend("T1", agent.Usage{CostUSD: c.others})
		err := a.admit("T2", left, meter)()
		if errors.Is(err, ErrStepBudget) != c.over {
			t.Errorf("%s: %v, want refused %v", c.name, err, c.over)
		}
	}
}

// TestOutputCapHoldsToTheBudget: the bound the gateway puts on each
// call's output limit is a quarter of what is left, in tokens or in
// dollars at the output price the call's model is metered at (a model
// no row knows at its provider's dearest), never below one token; with
// no limit there is no bound.
func TestOutputCapHoldsToTheBudget(t *testing.T) {
	t.Parallel()
	a := &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}
	if a.outputCap("step", agent.Limit{}, &egress.Meter{}) != nil {
		t.Error("a step without a limit got a bound")
	}
	for _, c := range []struct {
		name  string
		limit agent.Limit
		spent agent.Usage
		model string
		want  int64
	}{
		{"a dollar left, Sonnet's $10 out", agent.Limit{CostUSD: 1}, agent.Usage{}, "claude-sonnet-5-5", 25000},
		{"40 cents left", agent.Limit{CostUSD: 1}, agent.Usage{InputTokens: 300_000}, "claude-sonnet-5-5", 10000},
		{"an unknown model, at Opus 4's $75", agent.Limit{CostUSD: 1}, agent.Usage{InputTokens: 300_000}, "claude-unheard-of", 1333},
		{"tokens left", agent.Limit{Tokens: 10000}, agent.Usage{InputTokens: 2000}, "claude-sonnet-5-5", 2000},
		{"spent", agent.Limit{CostUSD: 1}, agent.Usage{InputTokens: 600_000}, "claude-sonnet-5-5", 1},
	} {
		meter := &egress.Meter{}
		meter.Add("claude-sonnet-5-5", c.spent)
		if got, _ := a.outputCap("step", c.limit, meter)(c.model); got != c.want {
			t.Errorf("%s: bound %d, want %d", c.name, got, c.want)
		}
	}
}

// TestRedTeamMeteredModelVersions: the program names a later version of
// a model the table has a row for, which the row's prefix matched with
// only a version after it: gpt-5.5 under gpt-5's row ($1.25 in, $10
// out), claude-sonnet-5-9 under claude-sonnet-5's (and as the step's own
// model when the step ran claude-sonnet-5, at the user's price), or
// GPT-4o's first snapshot, which bills twice the input of the gpt-4o
// row. Each was metered below what it may bill; a version is now another
// model (its provider's dearest row unless a row names it), and only a
// date after a row's name is that row's. Dated ids of the rows, and the
// point releases Claude Code names, keep their prices.
func TestRedTeamMeteredModelVersions(t *testing.T) {
	t.Parallel()
	user := &builtin.Price{InPerMTok: 1, OutPerMTok: 1}
	checkMeteredPrices(t, []meteredPrice{
		{"codex", "gpt-6.1-sol", nil, "gpt-5.5", 750},
		{"codex", "gpt-6.1-sol", nil, "gpt-5-5", 750},
		{"codex", "gpt-6.1-sol", nil, "gpt-4o-2024-05-13", 20},
		{"codex", "gpt-5", nil, "gpt-5.5", 750},
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-5-9", 90},
		{"claude", "claude-sonnet-5-5", nil, "claude-opus-5-9-20270101", 90},
		{"claude", "claude-sonnet-5", user, "claude-sonnet-5-9", 90},
		{"gemini", "gemini-3.8-flash", nil, "gemini-2.5-flash-2", 124},
		// What holds: dated ids and named point releases.
		{"codex", "gpt-6.1-sol", nil, "gpt-4o-2024-08-06", 12.5},
		{"codex", "gpt-6.1-sol", nil, "gpt-5.1", 11.25},
		{"codex", "gpt-6.1-sol", nil, "gpt-5-2025-08-07", 11.25},
		{"claude", "claude-sonnet-5-5", nil, "claude-haiku-4-5-20251001", 6},
		{"claude", "claude-sonnet-5-5", nil, "claude-sonnet-4-5-20250929", 18},
		{"claude", "claude-sonnet-5", user, "claude-sonnet-5-20261001", 2},
		{"gemini", "gemini-3.8-flash", nil, "gemini-2.0-flash-001", 0.5},
	})
}

// meteredPrice is a row of the metered-price tables: the agent and its
// step's model, the user's price if given, the model a call named, and
// what a million tokens in and a million out cost.
type meteredPrice struct {
	agent, step string
	price       *builtin.Price
	model       string
	want        float64
}

// checkMeteredPrices meters a million tokens in and out under each row's
// model and checks the cost.
func checkMeteredPrices(t *testing.T, rows []meteredPrice) {
	t.Helper()
	for _, c := range rows {
		a := &Agent{cfg: Config{Name: c.agent, Model: c.step, Price: c.price}}
		got := a.metered(map[string]agent.Usage{c.model: {InputTokens: meteredMillion, OutputTokens: meteredMillion}})
		if math.Abs(got.CostUSD-c.want) > 1e-9 {
			t.Errorf("%s (step's model %s, user price %v): %q, a million tokens in and out, metered at $%.4f, want $%.4f",
				c.agent, c.step, c.price, c.model, got.CostUSD, c.want)
		}
	}
}

const meteredMillion = 1_000_000

// TestSearchReadingWorth: the gateway holds a call's web searches to
// what the part of the budget set aside for them pays for, each a
// reading of the prompt and a fee, priced in the bound's units: output
// tokens of the model at its metered prices under a limit in dollars
// (a million input tokens and a $0.01 fee at Sonnet 5.5's $2 and $10:
// $2.01, 201,000 output tokens), one for one under a limit in tokens.
func TestSearchReadingWorth(t *testing.T) {
	t.Parallel()
	a := &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}
	reading := agent.Usage{InputTokens: 1_000_000, CostUSD: 0.01}
	for _, c := range []struct {
		l    agent.Limit
		want int64
	}{
		{agent.Limit{CostUSD: 5}, 201_000},
		{agent.Limit{Tokens: 5_000_000}, 1_000_000},
		{agent.Limit{CostUSD: 5, Tokens: 5_000_000}, 1_000_000},
		{agent.Limit{}, 0},
	} {
		if got := a.worth(c.l, &egress.Meter{})("claude-sonnet-5-5", reading); got != c.want {
			t.Errorf("limit %+v: a reading worth %d output tokens, want %d", c.l, got, c.want)
		}
	}
}

// TestRedTeamOutputCapAtTheTierSeen: the key's project serves calls at
// priority by default, so each call the program sends asking no tier
// bills twice the list price. The bound on a call's output limit was set
// at the list price, so the calls running when the budget ran out could
// write twice what it set aside for them. Once an answer of the step has
// named a premium tier (or a region), later calls' bounds are set at the
// price that tier's mark gives the model they name.
func TestRedTeamOutputCapAtTheTierSeen(t *testing.T) {
	t.Parallel()
	a := &Agent{cfg: Config{Name: "claude", Model: "claude-sonnet-5-5"}}
	for _, c := range []struct {
		name string
		seen string // the name the meter counted the first call under
		want int64
	}{
		{"list price", "claude-sonnet-5-5", 20000},
		{"a priority answer", "claude-sonnet-5-5" + egress.PriorityTier, 7500},
		{"a priority answer of another model", "claude-haiku-5-5" + egress.PriorityTier, 11250},
		{"a tier of unknown price", "claude-haiku-5-5" + egress.PremiumTier, 2916},
	} {
		meter := &egress.Meter{}
		// 100,000 tokens in: Sonnet's $0.20 at the list price, $0.40
		// at priority; the bound is a quarter of what is left of $1 at
		// the output price of Sonnet in the tier seen ($10, $20, $60).
		meter.Add(c.seen, agent.Usage{InputTokens: 100_000})
		if got, _ := a.outputCap("step", agent.Limit{CostUSD: 1}, meter)("claude-sonnet-5-5"); got != c.want {
			t.Errorf("%s: bound %d, want %d", c.name, got, c.want)
		}
	}
}
