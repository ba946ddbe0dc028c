//go:build !linux

package sandbox

import "context"

// ProbeNetwork always fails here: there is no sandbox at all.
func (s *Sandbox) ProbeNetwork(ctx context.Context) error { return ErrUnavailable }
