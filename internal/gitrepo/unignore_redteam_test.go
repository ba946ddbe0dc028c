package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRedTeamRepositoryUnignoresUserSecrets: a repository the user clones
// (or a branch they check out) commits a .gitignore that un-ignores the
// names users keep secrets under (`!.env`, `!*.pem`, `!keys/`, and again
// in a folder's own .gitignore). A .gitignore outranks the user's own
// patterns, their global excludes file and .git/info/exclude, so git
// listed the user's .env and keys as untracked work, not ignored, and
// every contained step was shown them. What the user's own patterns
// ignore is hidden whatever the repository's .gitignore says.
func TestRedTeamRepositoryUnignoresUserSecrets(t *testing.T) {
	// Not parallel: the user's global config is named by this process's
	// GIT_CONFIG_GLOBAL, as it is for planex.
	for _, where := range []string{"global excludes", "info/exclude"} {
		t.Run(where, func(t *testing.T) {
			r := newRepo(t)
			dir := t.TempDir()
			patterns := ".env\n*.pem\nkeys/\n"
			global := filepath.Join(dir, "gitconfig")
			config := ""
			if where == "global excludes" {
				excludes := filepath.Join(dir, "gitignore_global")
				if err := os.WriteFile(excludes, []byte(patterns), 0o644); err != nil {
					t.Fatal(err)
				}
				config = "[core]\n\texcludesFile = " + excludes + "\n"
			} else {
				appendFile(t, filepath.Join(r.CommonDir, "info", "exclude"), patterns)
			}
			if err := os.WriteFile(global, []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("GIT_CONFIG_GLOBAL", global)
			for rel, text := range map[string]string{
				".gitignore":      "!.env\n!*.pem\n!keys/\n",
				"sub/.gitignore":  "!.env\n",
				".env":            "TOKEN=x\n",
				"sub/.env":        "TOKEN=y\n",
				"keys/id.pem":     "k",
				"notes.txt":       "work in progress\n",
				"sub/tracked.txt": "t\n",
			} {
				appendFile(t, filepath.Join(r.Root, rel), text)
			}
			mustGit(t, r.Root, "add", ".gitignore", "sub/.gitignore", "sub/tracked.txt")
			mustGit(t, r.Root, "commit", "-q", "-m", "the repository's un-ignoring")
			got, more, err := Ignored(context.Background(), r, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, rel := range []string{".env", "sub/.env", "keys"} {
				if !slices.Contains(got, filepath.Join(r.Root, filepath.FromSlash(rel))) {
					t.Errorf("%s, which the user's %s ignores, is not listed as ignored: %q (more %v)", rel, where, got, more)
				}
			}
			if slices.Contains(got, filepath.Join(r.Root, "notes.txt")) {
				t.Errorf("notes.txt, ignored by nobody, was listed: %q", got)
			}
		})
	}
}
