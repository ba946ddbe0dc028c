package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestRedTeamRunnerFileCommands: a contained agent appends to the files
// the Actions runner reads after planex's step ends ($GITHUB_ENV,
// $GITHUB_PATH, $GITHUB_OUTPUT, $GITHUB_STATE, $GITHUB_STEP_SUMMARY):
// a BASH_ENV= line in GITHUB_ENV runs the attacker's script in every
// later step of the job, with its secrets. The variables never reach
// the agent, but their paths are easy to guess, and the folder holding
// them is writable to the step where a --sandbox-write folder holds it:
// $RUNNER_TEMP itself given as a scratch or cache folder, or a work
// folder above it while a workflow's env points RUNNER_TEMP elsewhere
// (then not hidden as the runner's temporary folder either), or the
// command files' folder itself. The files were written (a cover mounted
// over them would not hold: the agent can rename a folder above away and
// make a new one in its place). Such a grant is now refused before the
// process starts, naming the folder and the variable; a grant beside the
// files (a cache below $RUNNER_TEMP) runs, and the agent finds nothing
// to write. Each file stays as the runner wrote it.
func TestRedTeamRunnerFileCommands(t *testing.T) {
	t.Parallel()
	box, base := sandboxAndHostFolder(t, "planex-runner-")
	temp := filepath.Join(base, "_work", "_temp")
	commands := filepath.Join(temp, "_runner_file_commands")
	for _, d := range []string{commands, filepath.Join(temp, "cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "_work"), filepath.Join(base, "link-to-work")); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"GITHUB_ENV": "set_env_1", "GITHUB_PATH": "add_path_1", "GITHUB_OUTPUT": "set_output_1",
		"GITHUB_STATE": "save_state_1", "GITHUB_STEP_SUMMARY": "step_summary_1",
	}
	var env []string
	var files []string
	for name, file := range vars {
		p := filepath.Join(commands, file)
		if err := os.WriteFile(p, []byte("FROM_RUNNER=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, name+"="+p)
		files = append(files, p)
	}
	for _, row := range []struct {
		name       string
		runnerTemp string // as planex's environment names it
		write      string // --sandbox-write
		refused    bool
	}{
		{"RUNNER_TEMP given to --sandbox-write", temp, temp, true},
		{"a work folder above it, RUNNER_TEMP moved by the workflow", filepath.Join(base, "elsewhere"), filepath.Join(base, "_work"), true},
		{"the command files' folder itself", temp, commands, true},
		{"the same through a link", temp, filepath.Join(base, "link-to-work"), true},
		{"the same relative to planex's folder, which the sandbox makes absolute", filepath.Join(base, "elsewhere"), relativeToHere(t, filepath.Join(base, "_work")), true},
		{"a cache beside the command files", temp, filepath.Join(temp, "cache"), false},
		{"a cache beside them, RUNNER_TEMP moved by the workflow", filepath.Join(base, "elsewhere"), filepath.Join(temp, "cache"), false},
	} {
		attackFileCommands(t, box, row.name, row.write, row.refused, append([]string{"PATH=/usr/bin:/bin", "RUNNER_TEMP=" + row.runnerTemp}, env...), files)
	}
}

// relativeToHere is p relative to the test's working folder.
func relativeToHere(t *testing.T, p string) string {
	t.Helper()
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(here, p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// attackFileCommands prepares, with write granted, a contained agent
// that appends a BASH_ENV= line to each of files, runs it unless refused
// was expected, and checks each file still holds only the runner's line.
func attackFileCommands(t *testing.T, box *sandbox.Sandbox, name, write string, refused bool, env, files []string) {
	t.Helper()
	script := ""
	for _, f := range files {
		script += "printf 'BASH_ENV=/attacker.sh\\n' >> " + f + " 2>/dev/null && echo wrote " + filepath.Base(f) + "; "
	}
	cmd := exec.Command("sh", "-c", script+"echo ran")
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	c := Containment{Sandbox: box, Network: sandbox.NetworkOpen, Write: []string{write}}
	cleanup, err := c.PrepareContext(context.Background(), cmd, env, nil, nil)
	var refusal *RunnerFileWritableError
	switch {
	case refused && !errors.As(err, &refusal):
		t.Errorf("%s: the step was prepared (%v), want it refused", name, err)
	case refused && (refusal.Folder != write || !strings.Contains(err.Error(), "$GITHUB_")):
		t.Errorf("%s: the refusal %q does not name the folder and the variable", name, err)
	case !refused && err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	if err != nil {
		return // nothing started
	}
	err = cmd.Run()
	cleanup()
	if err != nil || !strings.HasSuffix(out.String(), "ran\n") {
		t.Fatalf("%s: %v\n%s", name, err, out.String())
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil || string(b) != "FROM_RUNNER=1\n" {
			t.Errorf("%s: %s now holds %q (%v); the agent said %q", name, filepath.Base(f), b, err, strings.TrimSpace(out.String()))
			os.WriteFile(f, []byte("FROM_RUNNER=1\n"), 0o644)
		}
	}
}

// TestRedTeamRunnerFileCommandsNamedTwice: planex's environment names
// GITHUB_ENV twice, its first value (what the runner's getenv reads) in
// a --sandbox-write folder and its last elsewhere. The check read only
// the last value and let the grant through, and the agent wrote the file
// the first names. Each value is judged now: the grant is refused.
func TestRedTeamRunnerFileCommandsNamedTwice(t *testing.T) {
	t.Parallel()
	box, base := sandboxAndHostFolder(t, "planex-runner-")
	granted := filepath.Join(base, "cache")
	other := filepath.Join(base, "other")
	for _, d := range []string{granted, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	first, last := filepath.Join(granted, "set_env_1"), filepath.Join(other, "set_env_1")
	for _, p := range []string{first, last} {
		if err := os.WriteFile(p, []byte("FROM_RUNNER=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range []struct {
		name string
		env  []string
	}{
		{"the first value in the grant", []string{"GITHUB_ENV=" + first, "GITHUB_ENV=" + last}},
		{"the last value in the grant", []string{"GITHUB_ENV=" + last, "GITHUB_ENV=" + first}},
	} {
		attackFileCommands(t, box, row.name, granted, true, append([]string{"PATH=/usr/bin:/bin"}, row.env...), []string{first})
	}
}
