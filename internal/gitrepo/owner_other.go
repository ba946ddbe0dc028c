//go:build !unix

package gitrepo

import "os"

// ownedByOther: without Unix owners (Windows) the folder's access list,
// which a user's temporary folder already restricts, is left as it is.
func ownedByOther(os.FileInfo) (int, bool) { return 0, false }
