//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"
)

// Sandbox is unavailable outside Linux; a nil *Sandbox wraps nothing.
// Log mirrors the Linux field so callers wire it the same way.
type Sandbox struct {
	Log *slog.Logger
}

// New returns nil for ModeOff and ErrUnavailable otherwise.
func New(ctx context.Context, mode Mode) (*Sandbox, error) {
	if mode == ModeOff {
		return nil, nil
	}
	return nil, fmt.Errorf("%w: namespaces are Linux-only (this is %s)", ErrUnavailable, runtime.GOOS)
}

// Probe always fails here.
func (s *Sandbox) Probe(ctx context.Context) error { return ErrUnavailable }

// Wrap leaves cmd unchanged.
func (s *Sandbox) Wrap(cmd *exec.Cmd, p Policy) (func(), error) { return func() {}, nil }
