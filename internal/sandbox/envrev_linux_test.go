package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamBuildkiteAgentHooksHidden: Buildkite's agent keeps its
// hooks beside its configuration, and its documentation's way to give
// every build a secret is the agent's environment hook
// (/etc/buildkite-agent/hooks/environment: export DOCKER_PASSWORD=…),
// readable by the user builds run as. Only the configuration file was
// covered; a contained program read the hook's secrets. The whole
// folder is covered now.
func TestRedTeamBuildkiteAgentHooksHidden(t *testing.T) {
	needRoot(t) // only root writes /etc
	s := newSandbox(t)
	const dir = "/etc/buildkite-agent"
	hooks := filepath.Join(dir, "hooks")
	if _, err := os.Lstat(dir); err == nil {
		t.Skipf("%s exists on this machine: left alone", dir)
	}
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Skipf("cannot make %s on this machine: %v", hooks, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	writeFile(t, filepath.Join(hooks, "environment"), "#!/bin/bash\nexport DOCKER_PASSWORD=redteam-buildkite-hook-secret\n", 0o755)
	writeFile(t, filepath.Join(hooks, "pre-command"), "#!/bin/bash\nexport NPM_TOKEN=redteam-buildkite-precommand\n", 0o755)
	out, err := run(t, s, Policy{}, "/", nil, "cat "+hooks+"/environment "+hooks+"/pre-command 2>/dev/null; ls -R "+dir+" 2>/dev/null; echo end")
	if !strings.Contains(out, "end") {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "redteam-buildkite") || strings.Contains(out, "pre-command") {
		t.Errorf("the program read the Buildkite agent's hooks:\n%s", out)
	}
}
