//go:build linux

package agent

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamMountInsideAHiddenHome: a folder inside the home is a
// mount of a folder kept elsewhere (~/.aws bound from a data disk's
// /data/aws): hiding the home hid the mount at ~/.aws, but the agent
// read the same files by the data disk's name. The other names of the
// mounts inside a hidden folder are hidden too now. (The test binds a
// folder of its own, as root, and unmounts it after.)
func TestRedTeamMountInsideAHiddenHome(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-innerbind-")
	files := map[string]string{"data/aws/credentials": "aws_secret_access_key = loot-inner-bind", "data/other/notes": "plain-readable"}
	plant(t, dir, files)
	home := filepath.Join(dir, "home", "ci")
	inner := filepath.Join(home, ".aws")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(filepath.Join(dir, "data", "aws"), inner, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind a folder here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(inner, unix.MNT_DETACH) })
	c := Containment{Sandbox: box, account: func([]string) []string { return []string{home} }}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	checkPlantedReads(t, "the data disk's name: ", c, env, dir, files)
	checkPlantedReads(t, "the home's name: ", c, env, dir, map[string]string{"home/ci/.aws/credentials": "aws_secret_access_key = loot-inner-bind"})
}

// TestRedTeamJobStartedBesideAGrantedCache: the step is granted a
// folder in the builds folder beside the jobs' (a GitLab runner's
// shared cache, /builds/cache), so the builds folder was not hidden
// whole but entry by entry as planex listed it: a job another slot
// started during the step was read. The builds folder is hidden whole
// now, this job's folder and the grant shown again.
func TestRedTeamJobStartedBesideAGrantedCache(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-latecache-")
	builds := filepath.Join(dir, "builds")
	project, cache := filepath.Join(builds, "r1", "0", "acme", "app"), filepath.Join(builds, "cache")
	plant(t, dir, map[string]string{
		"builds/r1/0/acme/app/README.md": "own-gitlab-readable",
		"builds/cache/deps.txt":          "cache-readable",
		"builds/r1/0/acme/other/.env":    "loot-gitlab-old",
	})
	late := map[string]string{"builds/r1/1/acme/late/.env": "loot-gitlab-late-slot", "builds/r1/0/acme/late/.env": "loot-gitlab-late"}
	env := []string{"PATH=/usr/bin:/bin", "GITLAB_CI=true", "CI_BUILDS_DIR=" + builds, "CI_PROJECT_DIR=" + project}
	var script strings.Builder
	for _, name := range append(slices.Collect(maps.Keys(late)), "builds/r1/0/acme/other/.env") {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("cat " + filepath.Join(project, "README.md") + " " + filepath.Join(cache, "deps.txt") + "; true")
	cmd := exec.Command("sh", "-c", script.String())
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cleanup, err := Containment{Sandbox: box, RepoDirs: []string{project}}.PrepareContext(context.Background(), cmd, env, nil, []string{project, cache})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	plant(t, dir, late)
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "loot-") {
		t.Errorf("the agent read another job's folder:\n%s", out.String())
	}
	for _, kept := range []string{"own-gitlab-readable", "cache-readable"} {
		if !strings.Contains(out.String(), kept) {
			t.Errorf("the agent lost %q:\n%s", kept, out.String())
		}
	}
}
