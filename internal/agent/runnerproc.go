package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// runnerPrograms are the programs of a runner that start a job's steps:
// the Actions runner's worker and listener, and the Azure Pipelines
// agent's.
var runnerPrograms = []string{"Runner.Worker", "Runner.Listener", "Agent.Worker", "Agent.Listener"}

// maxAncestors bounds how many of planex's ancestors are looked at.
const maxAncestors = 32

// runnerRootAbove is the installation folder of the runner that started
// the process pid, directly or through its ancestors (the step's shell,
// a wrapper script): the folder two above the executable of the first
// ancestor that is a runner's program (<root>/bin/Runner.Worker, or a
// version's bin.<version>), where it holds a runner's registration
// (isRunnerRoot). A runner configured with its work folder elsewhere
// (config.sh --work /mnt/work) keeps no installation above the job's
// workspace, so that is where planex finds it. proc is the /proc to read;
// "" when no ancestor is a runner's, or /proc cannot tell.
func runnerRootAbove(proc string, pid int) string {
	for range maxAncestors {
		if pid <= 1 {
			return ""
		}
		base := filepath.Join(proc, strconv.Itoa(pid))
		if exe, err := os.Readlink(filepath.Join(base, "exe")); err == nil && filepath.IsAbs(exe) && slices.Contains(runnerPrograms, filepath.Base(exe)) {
			if root := filepath.Dir(filepath.Dir(exe)); isRunnerRoot(root) {
				return root
			}
		}
		pid = parentOf(base)
	}
	return ""
}

// parentOf is the parent pid /proc/<pid>/stat (base) gives, 0 when it
// cannot be read. The command's name, second, is in parentheses and may
// hold spaces and parentheses itself: the fields after the last ')' are
// the state and the parent.
func parentOf(base string) int {
	b, err := os.ReadFile(filepath.Join(base, "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return 0
	}
	return ppid
}
