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
		if got, err := runnerOwnFiles(c.env, keep); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: runnerOwnFiles = %q, %v, want %q", c.name, got, err, c.want)
		}
	}
}

// TestRedTeamShallowMovedWorkFolderJobsHidden: the same with the work
// folder one level below / (config.sh --work /work, or /mnt/work one
// more): planex's look for the installation above the workspace reached
// / within its four levels and gave up, so the other jobs' folders were
// not hidden at all.
func TestRedTeamShallowMovedWorkFolderJobsHidden(t *testing.T) {
	t.Parallel()
	work, err := os.MkdirTemp("/", "planex-shallowwork-")
	if err != nil {
		t.Skipf("needs a folder directly under /, as a work folder given to config.sh --work may be (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	for _, d := range []string{"app/app", "other/other", "_tool"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(work, "app")
	env := []string{"GITHUB_ACTIONS=true", "RUNNER_WORKSPACE=" + ws, "GITHUB_WORKSPACE=" + filepath.Join(ws, "app")}
	if got, err := runnerOwnFiles(env, nil); err != nil || !slices.Contains(got, filepath.Join(work, "other")) {
		t.Errorf("runnerOwnFiles = %q, %v, want the other job's folder %s among them", got, err, filepath.Join(work, "other"))
	}
}
