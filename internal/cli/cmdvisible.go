package cli

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/agent"
)

// sandboxCovered are the places the sandbox replaces with empty ones:
// what an agent finds there is not what planex sees.
var sandboxCovered = []string{"/tmp", "/var/tmp", "/dev/shm"}

// hiddenProgram returns the program of an agent command (its first word,
// found on PATH when it has no slash) and the hidden folder it is under,
// when the sandbox would not show it to the agent: under /tmp, /var/tmp,
// /dev/shm or a home, and under no folder made readable. A relative path
// is left alone (it names a file of the task's worktree).
func hiddenProgram(command string, readable, homes []string, lookPath func(string) (string, error)) (program, under string) {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return "", ""
	}
	prog := strings.Trim(fields[0], `'"`)
	if rest, ok := strings.CutPrefix(prog, "~/"); ok && len(homes) > 0 {
		prog = filepath.Join(homes[0], rest)
	}
	if !strings.Contains(prog, "/") {
		found, err := lookPath(prog)
		if err != nil {
			return "", ""
		}
		prog = found
	}
	if !filepath.IsAbs(prog) {
		return "", ""
	}
	prog = filepath.Clean(prog)
	for _, r := range readable {
		if abs, err := filepath.Abs(r); err == nil && within(prog, abs) {
			return "", ""
		}
	}
	for _, h := range append(append([]string(nil), sandboxCovered...), homes...) {
		if h != "" && h != "/" && within(prog, filepath.Clean(h)) {
			return prog, h
		}
	}
	return "", ""
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// checkCommandVisible refuses, before the first step, an agent command
// whose program the sandbox hides: otherwise every step fails with a bare
// "sh: 1: …: not found". With the network contained the sandbox shows
// /run empty too, but for the links at its top (NixOS's
// /run/current-system), so a program is judged there by where its links
// lead.
func checkCommandVisible(ctx context.Context, command string, readable []string, getenv func(string) string, contained bool) error {
	// The shell expands ~ with the environment's HOME: it comes first.
	var homes []string
	if h := getenv("HOME"); h != "" {
		homes = append(homes, h)
	}
	// Then every home the sandbox hides: planex's own and its account's
	// in the password database, whatever HOME says.
	homes = append(homes, agent.Homes([]string{"HOME=" + getenv("HOME"), "SUDO_UID=" + getenv("SUDO_UID"), "PKEXEC_UID=" + getenv("PKEXEC_UID"), "DOAS_USER=" + getenv("DOAS_USER")})...)
	// CI systems' temporary folders and $TMPDIR are hidden like a home,
	// and so are the other people's accounts' homes.
	homes = append(homes, hiddenTemps(getenv, "TMP", "TEMP")...)
	others, shown := agent.OtherAccountHomes(ctx, []string{"PATH=" + getenv("PATH")})
	homes = append(homes, others...)
	readable = append(append([]string(nil), readable...), shown...)
	prog, under := hiddenProgram(command, readable, homes, exec.LookPath)
	if prog == "" && contained {
		resolved := func(name string) (string, error) {
			p, err := exec.LookPath(name)
			if err != nil {
				return "", err
			}
			return filepath.EvalSymlinks(p)
		}
		if fields := strings.Fields(command); len(fields) > 0 && strings.Contains(fields[0], "/") {
			if r, err := filepath.EvalSymlinks(strings.Trim(fields[0], `'"`)); err == nil {
				command = r
			}
		}
		prog, under = hiddenProgram(command, readable, []string{"/run"}, resolved)
	}
	if prog == "" {
		return nil
	}
	return &exitError{code: exitUsage, msg: fmt.Sprintf("planex: the agent command's program %s is under %s, which the sandbox hides from agents (they get an empty one). Let them read it with --sandbox-read %s, or move the program elsewhere.",
		prog, under, filepath.Dir(prog))}
}

// hiddenTemps are the temporary folders the sandbox hides like a home
// (agent.HiddenTempDirs) for the environment getenv reads, and for the
// variables more (TMP and TEMP, where other programs keep theirs:
// planex keeps nothing there, so checkTempHidden leaves them out).
func hiddenTemps(getenv func(string) string, more ...string) []string {
	var env []string
	for _, k := range append([]string{"TMPDIR", "RUNNER_TEMP", "CI_PROJECT_DIR", "GITLAB_CI", "WORKSPACE", "JENKINS_URL", "TF_BUILD", "AGENT_TEMPDIRECTORY"}, more...) {
		env = append(env, k+"="+getenv(k))
	}
	return agent.HiddenTempDirs(env)
}

// checkTempHidden refuses, before the first step, a temporary folder
// ($TMPDIR, a CI's) that is itself a folder agents are shown (the
// checkout, its git directory, a granted one): the sandbox binds that
// folder over the cover, and every step's private folder and home,
// which planex keeps there, would be in sight of every other step.
func checkTempHidden(shown []string, getenv func(string) string) error {
	for _, tmp := range hiddenTemps(getenv) {
		for _, dir := range shown {
			if dir != "" && sameFolder(tmp, dir) {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("planex: the temporary folder %s ($TMPDIR or the CI's) is %s, which agents are shown; planex keeps each step's private files there, and the sandbox could not hide them from the other steps. Point TMPDIR at another folder (one beside the checkout will do).", tmp, dir)}
			}
		}
	}
	return nil
}

// sameFolder reports whether a and b name one folder, links resolved
// where they exist.
func sameFolder(a, b string) bool {
	resolve := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return resolve(a) == resolve(b)
}
