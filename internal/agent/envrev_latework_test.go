package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRedTeamNeighbourWorkFolderCreatedDuringTheStep: the runner
// installed beside planex's was registered but has run no job yet, so
// its work folder does not exist when the step starts (the runner makes
// _work with its first job). A job it takes during the step creates the
// folder, and actions/checkout there writes the job's token file: the
// agent waited for it and read it. The neighbour's work folder is now
// covered even when it does not exist yet.
func TestRedTeamNeighbourWorkFolderCreatedDuringTheStep(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-latework-")
	plant(t, dir, map[string]string{
		"runner-a/.runner":           `{}`,
		"runner-a/_work/app/app/R":   "this-job",
		"runner-b/.runner":           `{}`,
		"runner-b/bin/Runner.Worker": "x",
	})
	sync := filepath.Join(dir, "sync")
	if err := os.MkdirAll(sync, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sync, 0o777); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "runner-b", "_work", "_temp", "git-credentials-late.config")
	script := `touch ` + sync + `/ready
while [ ! -e ` + sync + `/go ]; do sleep 0.05; done
cat ` + late + ` 2>/dev/null; cat ` + dir + `/runner-b/_work/billing/billing/.env 2>/dev/null; echo done`
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = "/"
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	ws := filepath.Join(dir, "runner-a", "_work", "app")
	env := []string{"PATH=/usr/bin:/bin", "GITHUB_ACTIONS=true", "RUNNER_WORKSPACE=" + ws, "GITHUB_WORKSPACE=" + filepath.Join(ws, "app")}
	cleanup, err := Containment{Sandbox: box}.Prepare(cmd, env, []string{sync}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(sync, "ready")); err == nil {
			break
		}
		if i > 600 {
			t.Fatal("the contained program never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	plant(t, dir, map[string]string{
		"runner-b/_work/_temp/git-credentials-late.config": "loot-late-checkout-token",
		"runner-b/_work/billing/billing/.env":              "loot-late-job",
	})
	if err := os.WriteFile(filepath.Join(sync, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "done") || strings.Contains(out.String(), "loot-") {
		t.Errorf("the agent read what another runner's job wrote during its step:\n%s", out.String())
	}
}
