// Package registry turns an agent name from the command line or the
// Action's inputs into an agent.Agent.
package registry

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/anthropic"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/agent/clis"
	"github.com/planexhq/planex/internal/agent/command"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/agent/openai"
)

// Names lists the agents New accepts.
func Names() []string {
	return []string{"anthropic", "openai", "claude", "codex", "gemini", "command"}
}

// Options configure the selected agent. Fields that do not apply to it
// are ignored.
type Options struct {
	// Model overrides the agent's default model (agent.DefaultModel).
	Model string
	// BaseURL points the agent at another endpoint (a gateway, Azure
	// OpenAI, OpenRouter, Gemini, vLLM, Ollama, or for a named CLI any
	// server speaking that CLI's wire format).
	BaseURL string
	// APIKeyEnv names the variable holding the API key; the default is
	// ANTHROPIC_API_KEY or OPENAI_API_KEY.
	APIKeyEnv string
	// Command is the shell command of the command agent.
	Command string
	// Contain says which variables subprocesses see and how they are
	// contained (the sandbox).
	Contain agent.Containment
	// MaxTurns and MaxOutputTokens bound each step of a built-in agent
	// (MaxTurns is also passed to CLIs that support it).
	MaxTurns        int
	MaxOutputTokens int
	// Timeouts per phase, used when a step sets none.
	Timeouts map[agent.Phase]time.Duration
	// PricePerMTokIn/Out override the built-in price table (US dollars
	// per million tokens) when either is set.
	PricePerMTokIn  float64
	PricePerMTokOut float64
	// MCP lists the user's MCP servers (--mcp-config): the built-in
	// agents run them, the CLIs get them in their own configuration.
	MCP mcp.Config
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
	// HTTPClient is used by the built-in agents; nil picks a default.
	HTTPClient *http.Client
}

// New returns the agent called name.
func New(name string, o Options) (agent.Agent, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	switch name {
	case "anthropic":
		key, err := apiKey(o, "ANTHROPIC_API_KEY", false)
		if err != nil {
			return nil, err
		}
		p, err := anthropic.New(anthropic.Config{APIKey: key, BaseURL: o.BaseURL, Model: o.Model, HTTPClient: o.HTTPClient})
		if err != nil {
			return nil, err
		}
		return builtin.New(p, builtinOptions("anthropic", p.Model(), o)), nil
	case "openai":
		key, err := apiKey(o, "OPENAI_API_KEY", isLocal(o.BaseURL))
		if err != nil {
			return nil, err
		}
		p, err := openai.New(openai.Config{APIKey: key, BaseURL: o.BaseURL, Model: o.Model, HTTPClient: o.HTTPClient})
		if err != nil {
			return nil, err
		}
		return builtin.New(p, builtinOptions("openai", p.Model(), o)), nil
	case "claude", "codex", "gemini":
		cfg := clis.Config{Name: name, Model: o.Model, BaseURL: o.BaseURL, MaxTurns: o.MaxTurns, Contain: o.Contain,
			Timeouts: o.Timeouts, Logger: o.Logger, MCP: o.MCP}
		cfg.Price = userPrice(o, o.Model)
		return clis.New(cfg)
	case "command", "":
		if strings.TrimSpace(o.Command) == "" {
			return nil, errors.New("the command agent needs a command (--agent-cmd or PLANEX_AGENT_CMD)")
		}
		if !o.MCP.Empty() {
			return nil, errMCPCommand
		}
		return command.New(command.Config{Command: o.Command, Contain: o.Contain, Timeouts: o.Timeouts}), nil
	}
	return nil, fmt.Errorf("unknown agent %q (choose one of: %s)", name, strings.Join(Names(), ", "))
}

// errMCPCommand refuses MCP servers for the command agent, which has no
// way to be given them.
var errMCPCommand = errors.New("MCP servers (--mcp-config) work with the agents anthropic, openai, claude, codex and gemini, not with a command agent")

// apiKey reads the key from APIKeyEnv or the default variable. It never
// puts the key anywhere but the provider's request header.
func apiKey(o Options, def string, optional bool) (string, error) {
	name := def
	if o.APIKeyEnv != "" {
		name = o.APIKeyEnv
	}
	key := strings.TrimSpace(o.Getenv(name))
	if key == "" && !optional {
		return "", fmt.Errorf("no API key: set %s (or name another variable with --api-key-env)", name)
	}
	return key, nil
}

// isLocal reports whether a base URL points at this machine, where
// servers such as Ollama or vLLM usually need no key.
func isLocal(base string) bool {
	if base == "" {
		return false
	}
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func builtinOptions(name, model string, o Options) builtin.Options {
	bo := builtin.Options{
		Name:            name,
		Model:           model,
		MaxTurns:        o.MaxTurns,
		MaxOutputTokens: o.MaxOutputTokens,
		Timeouts:        o.Timeouts,
		Contain:         o.Contain,
		Logger:          o.Logger,
		MCP:             o.MCP,
	}
	bo.Price = userPrice(o, model)
	return bo
}

// userPrice is the price the user set, if any; see builtin.UserPrice for
// how its cache rates follow.
func userPrice(o Options, model string) *builtin.Price {
	if o.PricePerMTokIn <= 0 && o.PricePerMTokOut <= 0 {
		return nil
	}
	p := builtin.UserPrice(o.PricePerMTokIn, o.PricePerMTokOut, model)
	return &p
}
