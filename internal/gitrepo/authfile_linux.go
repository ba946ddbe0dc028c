//go:build linux

package gitrepo

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// credentialFD is the descriptor git inherits the credential config as:
// the first of exec.Cmd's ExtraFiles.
const credentialFD = 3

// credentialFile holds body in a file that has no name: a memfd git
// inherits as descriptor 3 and includes as /proc/self/fd/3, which each
// git process (git-remote-https too) opens as its own. No path leads to
// it from outside planex and git, and it ends with the last of them, so
// a planex killed mid-push leaves nothing in the temporary folder and
// the include path read from git's environment opens, in any other
// process, that process's own descriptor. Where /proc is not mounted,
// or memfd_create is refused, the file is named (credentialFileInFolder).
func credentialFile(body []byte) (path string, file *os.File, done func(), err error) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		path, done, err = credentialFileInFolder(body)
		return path, nil, done, err
	}
	fd, err := unix.MemfdCreate("planex-git-auth", unix.MFD_CLOEXEC)
	if err != nil {
		path, done, err = credentialFileInFolder(body)
		return path, nil, done, err
	}
	file = os.NewFile(uintptr(fd), "planex-git-auth")
	if err := file.Chmod(0o600); err != nil {
		file.Close()
		return "", nil, func() {}, fmt.Errorf("restricting git's credential config: %w", err)
	}
	if _, err := file.Write(body); err != nil {
		file.Close()
		return "", nil, func() {}, fmt.Errorf("writing git's credential config: %w", err)
	}
	return fmt.Sprintf("/proc/self/fd/%d", credentialFD), file, func() { file.Close() }, nil
}
