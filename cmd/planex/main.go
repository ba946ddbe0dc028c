// Command planex plans changes to a git repository and carries them out as
// one commit per task. See README.md.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/planexhq/planex/internal/cli"
)

// version is set at release time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Parts given no logger of their own write sentences too, not
	// "2026/01/02 15:04:05 WARN …" lines.
	slog.SetDefault(slog.New(cli.LogHandler(os.Stderr)))
	code := cli.Run(ctx, os.Args[1:], cli.IO{
		Version: version,
		In:      os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Getenv:     os.Getenv,
		IsTerminal: term.IsTerminal(int(os.Stdin.Fd())),
	})
	stop()
	os.Exit(code)
}
