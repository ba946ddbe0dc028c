package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/engine"
	"log/slog"
)

// extraCommands are the subcommands beyond run and status.
func extraCommands(stdio IO) []*cobra.Command { return nil }

// named builds a built-in agent by name.
func (a *agentFlags) named(name, cmd string, getenv func(string) string) (agent.Agent, error) {
	return nil, fmt.Errorf("unknown agent %q", name)
}

// newMapper returns the repository mapper, or nil when disabled.
func newMapper(disabled bool, log *slog.Logger) engine.Mapper { return nil }
