package agent

import (
	"fmt"
	"os"
	"path/filepath"
)

// Names of the files in a step's TempDir.
const (
	StepResultFile      = "result.json"
	StepSchemaFile      = "schema.json"
	StepDiscoveriesFile = "discoveries.ndjson"
)

// PrepareStep gives a step its private folder: a fresh temporary directory
// (outside the repository and the session) holding an empty discoveries
// file. The returned cleanup removes the folder.
func PrepareStep(step Step) (Step, func(), error) {
	name := "planex-" + string(step.Phase)
	if step.ID != "" {
		name += "-" + step.ID
	}
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		return step, func() {}, fmt.Errorf("creating the step's folder: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	file := filepath.Join(dir, StepDiscoveriesFile)
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		cleanup()
		return step, func() {}, fmt.Errorf("creating the step's discoveries file: %w", err)
	}
	step.TempDir, step.DiscoveriesFile = dir, file
	return step, cleanup, nil
}
