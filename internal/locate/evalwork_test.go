package locate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
	"github.com/planexhq/planex/internal/safefile"
)

// TestEvalWorkFolderIsPrivate: the evaluation's default work folder is a
// fixed name in the shared temporary folder. Another user who took that
// name first (a link to a folder of theirs holding a planted tree and
// its .done marker, a folder of their own, one anyone may write) had
// their tree ranked as the repository's and saw planex remove and write
// below it; each is refused, nothing is written there, and without one
// the evaluation makes the folder itself, mode 0700.
func TestEvalWorkFolderIsPrivate(t *testing.T) {
	repos := t.TempDir()
	repo := filepath.Join(repos, "acme__tool")
	repomaptest.InitRepo(t, repo, map[string]string{"src/parser.py": "def parse_config(text):\n    return text.split()\n", "README.md": "# tool\n"})
	head := strings.TrimSpace(repomaptest.Git(t, repo, "rev-parse", "HEAD"))
	ins := []Instance{{InstanceID: "acme__tool-1", Repo: "acme/tool", BaseCommit: head,
		ProblemStatement: "parse_config in the parser splits on every space", GoldFiles: []string{"src/parser.py"}}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	// plant takes the work folder's name in tmp the way another user
	// would; it returns the folder whose entries must stay as they were.
	rows := []struct {
		name  string
		root  bool
		plant func(t *testing.T, work string) string
	}{
		{name: "link to another user's folder with a planted tree", plant: func(t *testing.T, work string) string {
			theirs := t.TempDir()
			tree := filepath.Join(theirs, "acme__tool@"+safeName(head))
			repomaptest.WriteFiles(t, tree, map[string]string{"planted/parse_config.py": "def parse_config(text):\n    return 'theirs'\n"})
			if err := os.WriteFile(tree+".done", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(theirs, work); err != nil {
				t.Fatal(err)
			}
			return theirs
		}},
		{name: "folder owned by another user", root: true, plant: func(t *testing.T, work string) string {
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(work, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return work
		}},
		{name: "folder of ours anyone may write", plant: func(t *testing.T, work string) string {
			if err := os.Mkdir(work, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(work, 0o777); err != nil {
				t.Fatal(err)
			}
			return work
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if r.root && os.Getuid() != 0 {
				t.Skip("giving a folder to another user needs root")
			}
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			work := filepath.Join(tmp, fmt.Sprintf("planex-eval-%d", os.Getuid()))
			watched := r.plant(t, work)
			before := entries(t, watched)
			rep, err := Evaluate(context.Background(), ins, repos, 10, EvalOptions{Logger: quiet})
			if !errors.Is(err, safefile.ErrNotPrivate) {
				t.Fatalf("Evaluate with %s at %s: %v, want a refusal (ErrNotPrivate); report %+v", r.name, work, err, rep)
			}
			if after := entries(t, watched); !slices.Equal(before, after) {
				t.Errorf("entries of %s changed from %v to %v", watched, before, after)
			}
		})
	}
	t.Run("no folder yet", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		rep, err := Evaluate(context.Background(), ins, repos, 10, EvalOptions{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Outcomes) == 0 || rep.Outcomes[0].Rank != 1 {
			t.Errorf("outcomes %+v, want the gold file first", rep.Outcomes)
		}
		fi, err := os.Lstat(filepath.Join(tmp, fmt.Sprintf("planex-eval-%d", os.Getuid())))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("work folder: %v, %v; want a folder of mode 0700", fi, err)
		}
	})
}

// entries lists dir's tree (names relative to it), sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
