//go:build !unix

package safefile

import "io/fs"

// Owner reports no owner where files have no uid (Windows): callers
// then rely on the file's mode and place alone.
func Owner(fs.FileInfo) (uid int, ok bool) { return 0, false }
