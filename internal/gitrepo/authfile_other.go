//go:build !linux

package gitrepo

import "os"

// credentialFile is credentialFileInFolder: without /proc/self/fd git
// can include only a named file.
func credentialFile(body []byte) (path string, file *os.File, done func(), err error) {
	path, done, err = credentialFileInFolder(body)
	return path, nil, done, err
}
