package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/command"
	"github.com/planexhq/planex/internal/agent/registry"
)

// agentFlags choose and configure the agent.
type agentFlags struct {
	command   string
	name      string
	model     string
	baseURL   string
	apiKeyEnv string
	allowEnv  []string
	maxTurns  int
	maxOut    int
	priceIn   float64
	priceOut  float64
}

func (a *agentFlags) register(f *pflag.FlagSet) {
	f.StringVar(&a.command, "agent-cmd", "", "run this command as the agent (sh -c; see docs/agent-contract.md); default $PLANEX_AGENT_CMD")
	f.StringVar(&a.name, "agent", "", "built-in agent: anthropic, openai, claude, codex, gemini, command")
	f.StringVar(&a.model, "model", "", "model name for the built-in agents")
	f.StringVar(&a.baseURL, "base-url", "", "API base URL (OpenAI-compatible servers, proxies)")
	f.StringVar(&a.apiKeyEnv, "api-key-env", "", "environment variable holding the API key")
	f.StringSliceVar(&a.allowEnv, "allow-env", nil, "secret-looking environment variables the agent may see (comma-separated names)")
	f.IntVar(&a.maxTurns, "max-turns", 0, "model turns per step for the built-in agents (default 40, 80 for execute)")
	f.IntVar(&a.maxOut, "max-output-tokens", 0, "output tokens per model reply for the built-in agents (default 8192)")
	f.Float64Var(&a.priceIn, "price-in", 0, "input price in dollars per million tokens (models missing from the built-in table)")
	f.Float64Var(&a.priceOut, "price-out", 0, "output price in dollars per million tokens")
}

// build selects the agent from the flags and environment.
func (a *agentFlags) build(getenv func(string) string) (agent.Agent, error) {
	cmd := a.command
	if cmd == "" {
		cmd = getenv("PLANEX_AGENT_CMD")
	}
	if extra := getenv("PLANEX_ALLOW_ENV"); extra != "" {
		a.allowEnv = append(a.allowEnv, strings.Split(extra, ",")...)
	}
	name := a.name
	if name == "" {
		name = getenv("PLANEX_AGENT")
	}
	if name == "" || name == "command" {
		if strings.TrimSpace(cmd) == "" {
			return nil, fmt.Errorf("no agent configured: pass --agent-cmd CMD (or set PLANEX_AGENT_CMD), or --agent %s; `planex explore` works without an agent", strings.Join(registry.Names()[:5], "|"))
		}
		return command.New(command.Config{Command: cmd, AllowEnv: a.allowEnv}), nil
	}
	return registry.New(name, registry.Options{
		Model: a.model, BaseURL: a.baseURL, APIKeyEnv: a.apiKeyEnv, Command: cmd, AllowEnv: a.allowEnv,
		MaxTurns: a.maxTurns, MaxOutputTokens: a.maxOut, PricePerMTokIn: a.priceIn, PricePerMTokOut: a.priceOut,
		Getenv: getenv,
	})
}
