package agent

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
		for _, prog := range runnerProgramPaths(base) {
			if root := filepath.Dir(filepath.Dir(prog)); isRunnerRoot(root) {
				return root
			}
		}
		pid = parentOf(base)
	}
	return ""
}

// runnerProgramPaths are the paths of a runner's program the process
// whose /proc/<pid> is base runs: its executable, when it is one of
// runnerPrograms; else the program its command line names, first or
// after dotnet (dotnet bin/Runner.Worker.dll, a runner started through
// the .NET host). The command line counts where the executable's link
// cannot be read (a runner of another user: root's, with planex started
// by sudo -u in its job) and for dotnet.
func runnerProgramPaths(base string) []string {
	isRunner := func(p string) bool {
		return filepath.IsAbs(p) && slices.Contains(runnerPrograms, strings.TrimSuffix(filepath.Base(p), ".dll"))
	}
	if exe, err := os.Readlink(filepath.Join(base, "exe")); err == nil && isRunner(exe) {
		return []string{exe}
	}
	var out []string
	args := procStrings(filepath.Join(base, "cmdline"))
	for i, a := range args {
		if i > 1 || (i == 1 && filepath.Base(args[0]) != "dotnet") {
			break
		}
		if isRunner(a) {
			out = append(out, a)
		}
	}
	return out
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

// jenkinsAgentSecrets are the files an ancestor of process pid that is
// a Jenkins agent (java … -jar agent.jar, the older slave.jar or
// remoting.jar) reads its secret from (-secret @FILE, -jnlpCredentials
// @FILE; relative to that process's folder): with the secret a program
// connects to the controller as that agent and is sent other jobs'
// builds, with their credentials. The Jenkins docs keep the file beside
// the agent's work folder (/opt/jenkins/secret-file), outside every home
// and readable by the user its jobs, planex's agents among them, run
// as. proc is the /proc to read.
func jenkinsAgentSecrets(proc string, pid int) []string {
	var out []string
	for range maxAncestors {
		if pid <= 1 {
			break
		}
		base := filepath.Join(proc, strconv.Itoa(pid))
		for _, f := range agentSecretFiles(base) {
			// A file only: covering a folder named by mistake (@/)
			// would hide what programs need.
			if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
				out = append(out, f)
			}
		}
		pid = parentOf(base)
	}
	return out
}

// agentSecretFiles are the secret files of the Jenkins agent whose
// /proc/<pid> is base, none when it is no agent.
func agentSecretFiles(base string) []string {
	f, err := os.Open(filepath.Join(base, "cmdline"))
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	f.Close()
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if !slices.ContainsFunc(args, func(a string) bool {
		switch filepath.Base(a) {
		case "agent.jar", "slave.jar", "remoting.jar":
			return true
		}
		return false
	}) {
		return nil
	}
	cwd, _ := os.Readlink(filepath.Join(base, "cwd"))
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "-secret" && args[i] != "-jnlpCredentials" {
			continue
		}
		p, ok := strings.CutPrefix(args[i+1], "@")
		if !ok || p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			if !filepath.IsAbs(cwd) {
				continue
			}
			p = filepath.Join(cwd, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}
