//go:build linux

package agent

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRedTeamManyEarlierJobsHidden: a Jenkins agent that ran many jobs
// keeps a workspace folder for each beside this one's. planex looked at
// the first 512 entries of that folder in the order the file system gives
// them and left the rest readable: the agent read another job's .env
// among the 900 there. Every one is hidden now, and a folder holding
// more than planex looks at refuses the step (ErrPastBound) instead of
// showing what lies past the bound.
func TestRedTeamManyEarlierJobsHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-manyjobs-")
	root := filepath.Join(dir, "workspace")
	files := map[string]string{"app/README.md": "own-workspace-readable"}
	for i := range 900 {
		files[fmt.Sprintf("job%04d/.env", i)] = fmt.Sprintf("loot-job-%04d", i)
	}
	plant(t, root, files)
	env := []string{"PATH=/usr/bin:/bin", "JENKINS_URL=https://jenkins.example/", "WORKSPACE=" + filepath.Join(root, "app")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, root, files)

	// Past the bound: the step does not start.
	more := map[string]string{}
	for i := 900; i <= maxSiblingEntries; i++ {
		more[fmt.Sprintf("job%04d/.env", i)] = fmt.Sprintf("loot-job-%04d", i)
	}
	plant(t, root, more)
	cmd := exec.Command("cat", filepath.Join(root, "job0000", ".env"))
	cleanup, err := Containment{Sandbox: box}.PrepareContext(context.Background(), cmd, env, nil, nil)
	cleanup()
	if !errors.Is(err, ErrPastBound) {
		t.Fatalf("a workspace folder of %d entries: PrepareContext = %v, want an error wrapping ErrPastBound", maxSiblingEntries+2, err)
	}
}
