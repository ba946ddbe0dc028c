//go:build !linux

package proc

// HideFromSameUser does nothing where there is no /proc of processes'
// environments to hide (see the Linux version).
func HideFromSameUser() error { return nil }
