package clis

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
)

// upstream is the model API a CLI calls: its base URL's, or the
// provider's own.
func (a *Agent) upstream() (*url.URL, egress.Provider, error) {
	base, provider := a.cfg.BaseURL, egress.ProviderAnthropic
	switch a.cfg.Name {
	case "codex":
		provider = egress.ProviderOpenAI
		if base == "" {
			base = "https://api.openai.com/v1"
		}
	case "gemini":
		provider = egress.ProviderGemini
		if base == "" {
			base = "https://generativelanguage.googleapis.com"
		}
	default:
		if base == "" {
			base = "https://api.anthropic.com"
		}
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, "", fmt.Errorf("the base URL %q is not an http(s) URL", base)
	}
	return u, provider, nil
}

// gatewayed is a step whose CLI reaches its model through planex's
// gateway: the contained network's forward, the base URL and the
// placeholder key the CLI gets instead of the real one.
type gatewayed struct {
	forward sandbox.Forward
	baseURL string
	keyEnv  string
	stop    func()
}

// startGateway starts the model gateway for one step of a contained CLI
// whose key is in s.keyVar: outside the sandbox, on a Unix socket the
// sandbox forwards GatewayPort to. The CLI gets a random placeholder in
// the key's variable and the gateway's address as its base URL.
// Every billed call it forwards is counted on meter, after admit (when
// not nil) let it through, its output limit held to limitOut's (when not
// nil), and its web searches to what limitOut's part for them pays for,
// priced by worth.
func (a *Agent) startGateway(ctx context.Context, s setup, meter *egress.Meter, admit func() error, limitOut func(string) (int64, func()),
	worth func(string, agent.Usage) int64) (*gatewayed, error) {
	up, provider, err := a.upstream()
	if err != nil {
		return nil, err
	}
	placeholder, err := egress.NewPlaceholder()
	if err != nil {
		return nil, err
	}
	dir, err := agent.SocketDir("planex-gateway-", "gateway.sock")
	if err != nil {
		return nil, fmt.Errorf("creating the model gateway's folder: %w", err)
	}
	sock := filepath.Join(dir, "gateway.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the model gateway: %w", err)
	}
	gw := &egress.Gateway{Provider: provider, Upstream: up, Key: lookupEnv(a.env(), s.keyVar), Placeholder: placeholder,
		Meter: meter, Admit: admit, Cap: limitOut, Worth: worth}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := gw.Serve(ctx, ln); err != nil && a.cfg.Logger != nil {
			a.cfg.Logger.Warn("model gateway stopped", "agent", a.cfg.Name, "err", err)
		}
	}()
	return &gatewayed{
		forward: sandbox.Forward{Port: agent.GatewayPort, Socket: sock},
		baseURL: "http://127.0.0.1:" + strconv.Itoa(agent.GatewayPort) + up.EscapedPath(),
		keyEnv:  s.keyVar + "=" + placeholder,
		stop: sync.OnceFunc(func() {
			cancel()
			ln.Close()
			<-done
			os.RemoveAll(dir)
		}),
	}, nil
}

// metered prices what the gateway counted, model by model. Which model a
// call names is the contained program's choice, so only the step's own
// model (or a dated snapshot of it, and calls whose answer named none) is
// priced as the step is (--price-in/--price-out, else the table); any
// other model by its own row, and a model no row knows as it is (a
// variant such as gpt-5-pro or a *-preview, a new id, or one of the
// models past what the meter keeps apart) at the dearest row of the
// provider (meteredPrice); a call whose prompt was long at its long-context
// rates, and one whose answer named a premium tier at that tier's; and the
// per-call fees the gateway metered are added.
func (a *Agent) metered(totals map[string]agent.Usage) agent.Usage {
	var u agent.Usage
	for m, t := range totals {
		u = u.Add(agent.Usage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
			CacheReadTokens: t.CacheReadTokens, CacheWriteTokens: t.CacheWriteTokens})
		// t.CostUSD is the per-call fees the gateway metered (web searches).
		u.CostUSD += a.meteredPrice(m).Cost(tokenUsage(t)) + t.CostUSD
	}
	return u
}

// meteredPrice is the price the gateway's count of model's tokens is
// metered at (see metered).
func (a *Agent) meteredPrice(model string) builtin.Price {
	if base, ok := strings.CutSuffix(model, egress.LongPrompt); ok {
		// The long-context rates: twice the input, 1.5 times the output.
		p := a.meteredPrice(base)
		return builtin.Price{InPerMTok: 2 * p.InPerMTok, OutPerMTok: 1.5 * p.OutPerMTok,
			CacheReadPerMTok: 2 * p.CacheReadPerMTok, CacheWritePerMTok: 2 * p.CacheWritePerMTok}
	}
	for mark, times := range map[string]float64{egress.PriorityTier: 2, egress.PremiumTier: 6, egress.RegionalInference: 1.1} {
		if base, ok := strings.CutSuffix(model, mark); ok {
			// A premium tier the answer named: priority processing at
			// twice every rate, a tier of unknown price at six times
			// (Anthropic's fast mode, the dearest premium known),
			// inference kept to one region at 1.1 times.
			p := a.meteredPrice(base)
			return builtin.Price{InPerMTok: times * p.InPerMTok, OutPerMTok: times * p.OutPerMTok,
				CacheReadPerMTok: times * p.CacheReadPerMTok, CacheWritePerMTok: times * p.CacheWritePerMTok}
		}
	}
	step := a.cfg.Price
	if step == nil {
		p, _ := builtin.LookupPrice(a.cfg.Model)
		step = &p
	}
	if model == "" || sameModel(a.cfg.Model, model) {
		return *step
	}
	if p, ok := builtin.LookupPriceStrict(model); ok {
		return p
	}
	_, provider, _ := a.upstream()
	d := builtin.MaxPrice(func(prefix string) bool { return providerOf(prefix) == provider })
	return builtin.Price{InPerMTok: max(d.InPerMTok, step.InPerMTok), OutPerMTok: max(d.OutPerMTok, step.OutPerMTok),
		CacheReadPerMTok: max(d.CacheReadPerMTok, step.CacheReadPerMTok), CacheWritePerMTok: max(d.CacheWritePerMTok, step.CacheWritePerMTok)}
}

// sameModel says whether model (as an answer names it) is step's model:
// the same name but for case, or followed by a date only
// ("gpt-4.1" answered as "gpt-4.1-2025-04-14"; builtin.Snapshot). A
// later version ("claude-sonnet-5" called as "claude-sonnet-5-9") is
// another model, which the step's price need not cover.
func sameModel(step, model string) bool {
	step, model = strings.ToLower(step), strings.ToLower(model)
	rest, ok := strings.CutPrefix(model, step)
	return step != "" && ok && builtin.Snapshot(rest)
}

// providerOf is the provider whose models a price table row's prefix names.
func providerOf(prefix string) egress.Provider {
	switch {
	case strings.HasPrefix(prefix, "claude-"):
		return egress.ProviderAnthropic
	case strings.HasPrefix(prefix, "gemini-"):
		return egress.ProviderGemini
	}
	return egress.ProviderOpenAI
}

// outputCap returns the gateway's bound on each billed call's output
// tokens under the step's limit l (nil: no limit): a quarter (one of the
// egress.MaxAdmitted calls that may run at once) of what the budget has
// left, in tokens, or in dollars at the output price the model's tokens
// are metered at. What is left is past what the meter counted and past
// the bounds of the calls under way (each held until its answer is
// metered, then released): the short calls one place lets through would
// otherwise each get a quarter of a remainder the long calls in the
// other places had already been bounded by. While much is left the
// bound is above what calls ask for; near the end it lowers their
// limits, so the calls admitted then overrun the budget by their prompts
// at most, not by their outputs.
func (a *Agent) outputCap(id string, l agent.Limit, meter *egress.Meter) func(string) (int64, func()) {
	if l.CostUSD <= 0 && l.Tokens <= 0 {
		return nil
	}
	var mu sync.Mutex
	var held agent.Usage // what this step's calls under way set aside
	return func(model string) (int64, func()) {
		totals := meter.Totals()
		rate := a.seenPrice(model, totals).OutPerMTok
		u := a.metered(totals)
		mu.Lock()
		defer mu.Unlock()
		// What the step's own limit leaves past its own calls under way:
		// with tasks running at once it may still be below what they all
		// left (the session counted spending the shared count did not).
		usd, tokens := l.CostUSD-u.CostUSD-held.CostUSD, l.Tokens-u.InputTokens-u.OutputTokens-held.OutputTokens
		var c int64
		unshare := func() {}
		if l.Shared != nil {
			// The tasks running beside this one share the remainder: the
			// bound is a part of what they all left, held with theirs.
			unshare = l.Shared.Hold(id, u, func(left agent.Usage) agent.Usage {
				c = quarterLeft(l, rate, min(left.CostUSD, usd), min(left.InputTokens, tokens))
				return heldFor(c, rate)
			})
		} else {
			c = quarterLeft(l, rate, usd, tokens)
		}
		h := heldFor(c, rate)
		held = held.Add(h)
		return c, sync.OnceFunc(func() {
			unshare()
			mu.Lock()
			defer mu.Unlock()
			held = agent.Usage{OutputTokens: max(held.OutputTokens-h.OutputTokens, 0), CostUSD: max(held.CostUSD-h.CostUSD, 0)}
		})
	}
}

// seenPrice is the price a call to model is bounded at: its metered
// price in the dearest tier and region an answer the meter counted
// (totals) named, as a project's or workspace's default applies to every
// call that asks for none; the list price before any did.
func (a *Agent) seenPrice(model string, totals map[string]agent.Usage) builtin.Price {
	p := a.meteredPrice(model)
	for name := range totals {
		if marks := egress.TierMarks(name); marks != "" {
			if q := a.meteredPrice(model + marks); q.OutPerMTok > p.OutPerMTok {
				p = q
			}
		}
	}
	return p
}

// worth is what a usage of a model costs in the units of outputCap's
// bound under the step's limit l: output tokens of that model, at its
// output price (seenPrice) where l is in dollars (the tokens at the model's
// metered prices, and the fees), one for one where l is in tokens; the
// larger where it is in both.
func (a *Agent) worth(l agent.Limit, meter *egress.Meter) func(string, agent.Usage) int64 {
	return func(model string, u agent.Usage) int64 {
		var w int64
		if l.Tokens > 0 {
			w = u.InputTokens + u.OutputTokens
		}
		if p := a.seenPrice(model, meter.Totals()); l.CostUSD > 0 && p.OutPerMTok > 0 {
			w = max(w, int64(math.Ceil((p.Cost(tokenUsage(u))+u.CostUSD)/p.OutPerMTok*1e6)))
		}
		return w
	}
}

// quarterLeft is the output bound of one of the egress.MaxAdmitted calls
// that may run at once, of a model whose output costs rate a million
// tokens, when usd dollars and tokens tokens are left (each read only
// where l limits it): at least 1, or 0 when nothing bounds it.
func quarterLeft(l agent.Limit, rate, usd float64, tokens int64) int64 {
	c := int64(math.MaxInt64)
	if l.CostUSD > 0 && rate > 0 {
		c = int64(max(usd, 0) / egress.MaxAdmitted / rate * 1e6)
	}
	if l.Tokens > 0 {
		c = min(c, max(tokens, 0)/egress.MaxAdmitted)
	}
	if c == math.MaxInt64 {
		return 0
	}
	return max(c, 1)
}

// heldFor is what a call bounded to c output tokens (0: unbounded, then
// nothing) of a model at rate sets aside of the budget.
func heldFor(c int64, rate float64) agent.Usage {
	return agent.Usage{OutputTokens: c, CostUSD: float64(c) * rate / 1e6}
}

// ErrStepBudget marks a model call the gateway refused because the step
// had spent what its session's budget left it.
var ErrStepBudget = agent.ErrStepBudget

// admit returns the check the gateway makes before each billed call of
// step id: what it metered so far, priced, must stay below the step's
// limit, and with the steps running beside it below their shared one
// (nil: no limit). A call already running may take the step past it.
func (a *Agent) admit(id string, l agent.Limit, meter *egress.Meter) func() error {
	if l == (agent.Limit{}) {
		return nil
	}
	return func() error {
		u := a.metered(meter.Totals())
		if l.Shared != nil {
			if err := l.Shared.Spend(id, u); err != nil {
				return err
			}
		}
		if l.CostUSD > 0 && u.CostUSD >= l.CostUSD {
			return fmt.Errorf("%w: $%.4f metered, $%.4f of the cost budget was left", ErrStepBudget, u.CostUSD, l.CostUSD)
		}
		if l.Tokens > 0 && u.InputTokens+u.OutputTokens >= l.Tokens {
			return fmt.Errorf("%w: %d tokens metered, %d of the token budget were left", ErrStepBudget, u.InputTokens+u.OutputTokens, l.Tokens)
		}
		return nil
	}
}
