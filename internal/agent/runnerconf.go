package agent

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// runnerConfigFlags are, for each CI runner program that starts jobs
// as its children, the options naming its configuration (with the
// token it authenticates with): GitLab Runner's (gitlab-runner run
// --config FILE, -c FILE), Buildkite's agent's (buildkite-agent start
// --config FILE) and CircleCI's machine runner's, each also spelt with
// one dash or two (goFlag). The sandbox covers
// these at their usual places (DefaultMasks); a runner started with
// its configuration elsewhere (/opt/gitlab/config.toml) left that file
// readable to the user its jobs run as.
var runnerConfigFlags = map[string][]string{
	"gitlab-runner":          {"--config", "-c"},
	"gitlab-ci-multi-runner": {"--config", "-c"},
	"buildkite-agent":        {"--config"},
	"circleci-runner":        {"--config", "-c"},
}

// runnerConfigVars are the variables a runner program takes its
// configuration's place from instead (Buildkite's).
var runnerConfigVars = map[string][]string{
	"buildkite-agent": {"BUILDKITE_AGENT_CONFIG"},
}

// runnerConfigsAbove are the configuration files the CI runner programs
// among process pid's ancestors were started with (runnerConfigFlags,
// runnerConfigVars where their environment can be read), relative ones
// taken from that process's folder. Only regular files. proc is the
// /proc to read.
func runnerConfigsAbove(proc string, pid int) []string {
	var out []string
	for range maxAncestors {
		if pid <= 1 {
			break
		}
		base := filepath.Join(proc, strconv.Itoa(pid))
		for _, f := range runnerConfigFiles(base) {
			if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
		pid = parentOf(base)
	}
	return out
}

// runnerConfigFiles are the configuration files the CI runner program
// whose /proc/<pid> is base names, none when it is no runner's.
func runnerConfigFiles(base string) []string {
	args := procStrings(filepath.Join(base, "cmdline"))
	if len(args) == 0 {
		return nil
	}
	prog := filepath.Base(args[0])
	flags, ok := runnerConfigFlags[prog]
	if !ok {
		return nil
	}
	var named []string
	for i := 1; i < len(args); i++ {
		name, v, joined := goFlag(args[i])
		if !slices.ContainsFunc(flags, func(f string) bool { return strings.TrimLeft(f, "-") == name }) {
			continue
		}
		if joined {
			named = append(named, v)
		} else if i+1 < len(args) {
			named = append(named, args[i+1])
		}
	}
	env := procStrings(filepath.Join(base, "environ"))
	for _, v := range runnerConfigVars[prog] {
		if p := lookup(env, v); p != "" {
			named = append(named, p)
		}
	}
	cwd, _ := os.Readlink(filepath.Join(base, "cwd"))
	var out []string
	for _, p := range named {
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

// goFlag reads a command-line word as Go's flag package does (which
// GitLab Runner's and Buildkite's agent's option parser is built on):
// one dash or two before the name alike (-config, --config, --c), its
// value joined with = or in the next word. name is "" for a word that
// is no option (a value, a lone - or --).
func goFlag(w string) (name, value string, joined bool) {
	rest, ok := strings.CutPrefix(w, "-")
	if !ok {
		return "", "", false
	}
	rest = strings.TrimPrefix(rest, "-")
	if rest == "" || rest[0] == '-' || rest[0] == '=' {
		return "", "", false
	}
	name, value, joined = strings.Cut(rest, "=")
	return name, value, joined
}

// procStrings is a /proc file of NUL-ended strings (cmdline, environ),
// its first 64 KiB; none when it cannot be read.
func procStrings(p string) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
