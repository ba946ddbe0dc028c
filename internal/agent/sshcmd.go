package agent

import (
	"path/filepath"

	"github.com/planexhq/planex/internal/gitrepo"
)

// sshCommandFiles are the absolute paths an ssh command line names as
// its identity, certificate, agent socket or configuration, and those
// its -F configuration names (gitrepo.SSHCommandFiles, which reads git's
// core.sshCommand in every config the same way). A path with ~ names
// the home, hidden anyway.
func sshCommandFiles(cmd string) []string {
	var out []string
	for _, p := range gitrepo.SSHCommandFiles(cmd) {
		if filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	return out
}

// sshConfigKeys are the absolute identity, certificate and agent files
// the ssh configuration at path names (gitrepo.SSHConfigKeys).
func sshConfigKeys(path string) []string { return gitrepo.SSHConfigKeys(path) }
