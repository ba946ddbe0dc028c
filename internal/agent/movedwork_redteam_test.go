package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRedTeamMovedWorkFolderJobsHidden: a self-hosted runner configured
// with its work folder on another disk (config.sh --work /mnt/work) keeps
// every repository's checkout it ran a job for there, away from its
// installation; planex looked for the installation only above the
// workspace, found none, and left another repository's checkout (with
// the .env its job left) readable. Each other folder of the work folder
// is hidden; this job's, the runner's own and one holding a grant stay.
func TestRedTeamMovedWorkFolderJobsHidden(t *testing.T) {
	t.Parallel()
	// Not below /tmp, which the sandbox replaces whole (and planex never
	// covers piecemeal): a data disk's folder, here one under /srv (the
	// package's own folder may lie below /tmp, as in a fresh clone there).
	abs, err := os.MkdirTemp("/srv", "planex-movedwork-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp, which planex never covers piecemeal (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(abs) })
	work := filepath.Join(abs, "mnt", "work")
	for _, d := range []string{"app/app", "other/other", "_actions", "_tool/go", "_temp", "granted/cache"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "other", "other", ".env"), []byte("TOKEN=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keep := []string{filepath.Join(work, "granted", "cache")}
	ws := filepath.Join(work, "app")
	for _, c := range []struct {
		name string
		env  []string
		want []string
	}{
		{"work folder elsewhere", []string{"GITHUB_ACTIONS=true", "RUNNER_WORKSPACE=" + ws, "GITHUB_WORKSPACE=" + filepath.Join(ws, "app")},
			[]string{filepath.Join(work, "other")}},
		{"not in Actions", []string{"RUNNER_WORKSPACE=" + ws}, nil},
		{"a workspace at the root", []string{"GITHUB_ACTIONS=true", "RUNNER_WORKSPACE=/app"}, nil},
		{"relative", []string{"GITHUB_ACTIONS=true", "RUNNER_WORKSPACE=work/app"}, nil},
	} {
		if got := runnerOwnFiles(c.env, keep); !slices.Equal(got, c.want) {
			t.Errorf("%s: runnerOwnFiles = %q, want %q", c.name, got, c.want)
		}
	}
}
