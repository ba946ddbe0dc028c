//go:build windows

package proc

// CloseInherited does nothing on Windows: a handle reaches a child only
// when it is marked inheritable and listed for that child, which os/exec
// does for the standard streams alone.
func CloseInherited() error { return nil }
