//go:build !linux

package sandbox

import "context"

// ProbeNetwork always fails here: there is no sandbox at all.
func (s *Sandbox) ProbeNetwork(ctx context.Context) error { return ErrUnavailable }

// ScopesAbstractSockets is false here: there is no sandbox at all.
func ScopesAbstractSockets() bool { return false }
