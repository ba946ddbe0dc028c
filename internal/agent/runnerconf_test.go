package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamRunnerConfigElsewhereHidden: planex runs in a job of a
// GitLab runner started with its configuration outside /etc
// (gitlab-runner run --config /opt/…/config.toml), under a Buildkite
// agent started with --config=FILE (relative to its folder) or
// BUILDKITE_AGENT_CONFIG: each file holds the runner's token, readable
// to the user the jobs run as, and only the usual places were covered.
// A contained agent read all three; the runner programs among planex's
// ancestors now have the configurations they name covered.
func TestRedTeamRunnerConfigElsewhereHidden(t *testing.T) {
	_, dir := sandboxAndHostFolder(t, "planex-runnerconf-")
	plant(t, dir, runnerConfLayout())
	plant(t, dir, map[string]string{
		"bk.sh": `bash -c 'exec -a gitlab-runner bash gl.sh run --config "$0/gl.toml" "$1"' "$PWD" "$3"; s=$?; exit $s`,
		"gl.sh": `"$4" -test.run='^TestRunnerConfigHelper$' -test.v; s=$?; exit $s`,
	})
	cmd := exec.Command("bash", "-c", `exec -a buildkite-agent bash bk.sh start --config=bk.cfg "$0"`, os.Args[0])
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLANEX_RUNNERCONF_PROBE="+dir, "BUILDKITE_AGENT_CONFIG="+filepath.Join(dir, "bk-env.cfg"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRunnerConfigHelper") {
		t.Errorf("the contained agent under the runners read what it must not (%v):\n%s", err, out)
	}
}

// runnerConfLayout are the runners' configurations, and a file beside
// them that stays readable.
func runnerConfLayout() map[string]string {
	return map[string]string{"gl.toml": "loot-gitlab-runner-token", "bk.cfg": "loot-buildkite-flag-token",
		"bk-env.cfg": "loot-buildkite-env-token", "notes": "runner-folder-readable"}
}

// TestRunnerConfigHelper is the planex of
// TestRedTeamRunnerConfigElsewhereHidden: its ancestors are a GitLab
// runner's and a Buildkite agent's programs.
func TestRunnerConfigHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_RUNNERCONF_PROBE")
	if dir == "" {
		t.Skip("a program of TestRedTeamRunnerConfigElsewhereHidden")
	}
	box, _ := sandboxAndHostFolder(t, "planex-runnerconf-helper-")
	checkPlantedReads(t, "", Containment{Sandbox: box}, []string{"PATH=/usr/bin:/bin"}, dir, runnerConfLayout())
}

// TestRunnerConfigFiles: which command lines are a runner's and which
// files they name.
func TestRunnerConfigFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, c := range []struct {
		args, env []string
		cwd       string
		want      []string
	}{
		{[]string{"/usr/bin/gitlab-runner", "run", "--working-directory", "/home/gl", "--config", "/opt/gl/config.toml"}, nil, "/", []string{"/opt/gl/config.toml"}},
		{[]string{"gitlab-runner", "--debug", "run", "-c", "cfg.toml"}, nil, "/srv/gl", []string{"/srv/gl/cfg.toml"}},
		{[]string{"buildkite-agent", "start", "--config=/opt/bk/a.cfg"}, []string{"BUILDKITE_AGENT_CONFIG=/opt/bk/b.cfg"}, "/", []string{"/opt/bk/a.cfg", "/opt/bk/b.cfg"}},
		{[]string{"buildkite-agent", "start", "-c", "/opt/bk/not-an-option.cfg"}, nil, "/", nil},
		{[]string{"sh", "-c", "gitlab-runner run --config /x"}, nil, "/", nil},
		{[]string{"gitlab-runner", "run", "--config", "rel"}, nil, "", nil},
	} {
		base := filepath.Join(dir, string(rune('a'+i)))
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, strs := range map[string][]string{"cmdline": c.args, "environ": c.env} {
			if err := os.WriteFile(filepath.Join(base, name), []byte(strings.Join(strs, "\x00")+"\x00"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if c.cwd != "" {
			if err := os.Symlink(c.cwd, filepath.Join(base, "cwd")); err != nil {
				t.Fatal(err)
			}
		}
		if got := runnerConfigFiles(base); !slices.Equal(got, c.want) {
			t.Errorf("%q in %s: runnerConfigFiles = %q, want %q", c.args, c.cwd, got, c.want)
		}
	}
}

// TestRedTeamRunnerAsDotnetAncestor: the runner's worker runs through
// the .NET host (dotnet <root>/bin/Runner.Worker.dll), so the ancestor's
// executable is dotnet's and the runner was not found: its
// credentials, its neighbours and their jobs stayed readable. The test
// runs itself under a copy of sh named dotnet, whose script is the
// runner's Runner.Worker.dll, in TestRedTeamRunnerFoundAsAncestor's
// layout.
func TestRedTeamRunnerAsDotnetAncestor(t *testing.T) {
	_, dir := sandboxAndHostFolder(t, "planex-runnerdotnet-")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh to stand for dotnet: %v", err)
	}
	if sh, err = filepath.EvalSymlinks(sh); err != nil {
		t.Fatal(err)
	}
	plant(t, dir, runnerLayout(dir))
	b, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	dotnet := filepath.Join(dir, "dotnet", "dotnet")
	if err := os.MkdirAll(filepath.Dir(dotnet), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dotnet, b, 0o755); err != nil {
		t.Fatal(err)
	}
	dll := filepath.Join(dir, "actions-runner", "bin", "Runner.Worker.dll")
	if err := os.WriteFile(dll, []byte(`"$1" -test.run='^TestRunnerAncestorHelper$' -test.v; status=$?; :; exit $status`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "data", "big"), filepath.Join(dir, "mnt", "work", "big")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dotnet, dll, os.Args[0])
	cmd.Env = append(os.Environ(), "PLANEX_RUNNER_PROBE="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRunnerAncestorHelper") {
		t.Errorf("the contained agent under the runner read what it must not (%v):\n%s", err, out)
	}
}

// TestRunnerProgramPaths: a runner's program told by the executable, or
// by the command line where the executable's link cannot be read or is
// dotnet's.
func TestRunnerProgramPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, c := range []struct {
		exe  string
		args []string
		want []string
	}{
		{"/r/bin/Runner.Worker", []string{"/r/bin/Runner.Worker", "spawnclient"}, []string{"/r/bin/Runner.Worker"}},
		{"", []string{"/r/bin/Runner.Worker", "spawnclient", "1", "2"}, []string{"/r/bin/Runner.Worker"}},
		{"/usr/share/dotnet/dotnet", []string{"/usr/share/dotnet/dotnet", "/r/bin/Runner.Listener.dll", "run"}, []string{"/r/bin/Runner.Listener.dll"}},
		{"/usr/bin/bash", []string{"bash", "/r/bin/Runner.Worker"}, nil},
		{"/usr/bin/sh", []string{"sh", "-c", "/r/bin/Runner.Worker"}, nil},
		{"", []string{"Runner.Worker"}, nil},
	} {
		base := filepath.Join(dir, string(rune('a'+i)))
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, "cmdline"), []byte(strings.Join(c.args, "\x00")+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.exe != "" {
			if err := os.Symlink(c.exe, filepath.Join(base, "exe")); err != nil {
				t.Fatal(err)
			}
		}
		if got := runnerProgramPaths(base); !slices.Equal(got, c.want) {
			t.Errorf("exe %q, %q: runnerProgramPaths = %q, want %q", c.exe, c.args, got, c.want)
		}
	}
}
