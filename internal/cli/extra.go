package cli

import (
	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/engine"
	"log/slog"
)

// extraCommands are the subcommands beyond run and status.
func extraCommands(stdio IO) []*cobra.Command { return nil }

// newMapper returns the repository mapper, or nil when disabled.
func newMapper(disabled bool, log *slog.Logger) engine.Mapper { return nil }
