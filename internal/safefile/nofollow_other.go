//go:build !unix

package safefile

// noFollow is 0 where the system has no such flag (Windows, unsupported).
const noFollow = 0
