//go:build !linux

package gittest

// roomInMemory: only Linux's /dev/shm is used for the tests' scratch.
func roomInMemory(string, uint64) bool { return false }
