package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/explore"
)

// TestRedTeamActionMapNamesNoUntracked: in the Action an earlier
// workflow step leaves a cloud login's credentials file (and a source
// file of its own) untracked in the checkout; the sandbox hides the
// files, and the repository map the exploration gives the model must
// not name them either, whether it ranks files for the request or not,
// and whether or not a local run's map of the same checkout is cached.
// A local run still maps untracked files (the user's new work), so the
// row can fail.
func TestRedTeamActionMapNamesNoUntracked(t *testing.T) {
	t.Parallel()
	repo := emptyRepo(t)
	root := repo.Root
	for rel, content := range map[string]string{
		"main.go":                   "package main\n\nfunc main() { deploy() }\n",
		"deploy.go":                 "package main\n\n// deploy uploads the build with the cloud credentials.\nfunc deploy() {}\n",
		"gha-creds-1f2e.json":       `{"type":"service_account","private_key":"x"}`,
		"credentials_loader_tmp.go": "package main\n\n// loads the cloud credentials for deploy\nfunc loadCredentials() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "main.go", "deploy.go"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "initial"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	untracked := []string{"gha-creds-1f2e.json", "credentials_loader_tmp.go"}
	named := func(mp explore.Mapper, query string) string {
		t.Helper()
		m, ranked, err := mp.Build(context.Background(), root, query)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range m.Entries {
			b.WriteString(e.Path + "\n")
		}
		for _, r := range ranked {
			b.WriteString(r.Path + "\n")
		}
		return b.String()
	}
	for _, query := range []string{"", "load the cloud credentials for deploy"} {
		local := named(explore.Mapper{}, query) // cached first, in the repository's git directory
		for _, u := range untracked {
			if !strings.Contains(local, u) {
				t.Fatalf("a local run's map (query %q) leaves out the untracked %s:\n%s", query, u, local)
			}
		}
		action := named(actionMapper(nil), query)
		if !strings.Contains(action, "deploy.go") {
			t.Fatalf("the Action's map (query %q) lacks the tracked deploy.go:\n%s", query, action)
		}
		for _, u := range untracked {
			if strings.Contains(action, u) {
				t.Errorf("the Action's map (query %q) names the untracked %s:\n%s", query, u, action)
			}
		}
	}
}
