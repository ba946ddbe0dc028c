//go:build !unix

package clis

import "io/fs"

// fileOwner knows no owner where files have no uid.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

// openToOthers knows no other users where files have no uid.
func openToOthers(fs.FileInfo, int, int) bool { return false }

// noFollow is no flag where links are not followed this way.
const noFollow = 0
