package agent

import (
	"testing"
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
	checkLateRunnerJob(t, box, dir)
}
