package clis

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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
// not nil) let it through.
func (a *Agent) startGateway(ctx context.Context, s setup, meter *egress.Meter, admit func() error) (*gatewayed, error) {
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
		Meter: meter, Admit: admit}
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

// metered prices what the gateway counted as a report's tokens are
// priced. A model the price table does not know is priced as the step's
// own: which model a call names is the contained program's choice.
func (a *Agent) metered(totals map[string]agent.Usage) agent.Usage {
	r := report{tokens: map[string]agent.Usage{}}
	for m, u := range totals {
		if _, ok := builtin.LookupPrice(m); !ok {
			m = ""
		}
		r.tokens[m] = r.tokens[m].Add(u)
	}
	return a.usage(r)
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
