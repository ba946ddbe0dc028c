package locate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestReadLogsRootCommits: git's log is not asked for a parentless
// commit's files (every file of its tree, which git holds in memory all at
// once: 38 MiB for a 100,000-file shallow clone); readLogs lists them
// from the tree instead, and both logs come out the same bytes as git's
// own log with the root's files printed, on histories with a root commit
// of odd names, an empty root commit, two roots (unrelated histories
// merged), a map of a subdirectory (paths relative to it), a shallow
// clone (its one commit looks parentless), a SHA-256 repository and a
// root of more names than a record keeps.
func TestReadLogsRootCommits(t *testing.T) {
	t.Parallel()
	commit := func(t *testing.T, dir, msg string, files map[string]string, extra ...string) {
		t.Helper()
		repomaptest.WriteFiles(t, dir, files)
		repomaptest.Git(t, dir, "add", "-A")
		repomaptest.Git(t, dir, append([]string{"commit", "-q", "--no-gpg-sign", "-m", msg}, extra...)...)
	}
	many := map[string]string{}
	long := strings.Repeat("d", 200)
	for i := 0; i < logNamesMax/200; i++ {
		many[fmt.Sprintf("gen/%s%02d/m%04d.py", long, i%10, i)] = "x = 1\n"
	}
	cases := []struct {
		name string
		// make builds the repository in dir and returns the directory the
		// history is read from.
		make func(t *testing.T, dir string) string
	}{
		{name: "root of odd names", make: func(t *testing.T, dir string) string {
			commit(t, dir, "Start (#3)", map[string]string{"a.py": "a = 1\n", "sub/we\"ird name.py": "b = 2\n",
				"sub/d/new\nline.py": "c = 3\n", "sub/ünï.py": "d = 4\n", "sub/tab\tname.go": "package d\n"})
			commit(t, dir, "Second (#3)", map[string]string{"a.py": "a = 2\n"})
			return dir
		}},
		{name: "root with a link and a submodule", make: func(t *testing.T, dir string) string {
			if err := os.Symlink("a.py", filepath.Join(dir, "link.py")); err != nil {
				t.Skip("no symlinks here:", err)
			}
			repomaptest.Git(t, dir, "update-index", "--add", "--cacheinfo", "160000,0123456789012345678901234567890123456789,vendor/lib")
			commit(t, dir, "Start", map[string]string{"a.py": "a = 1\n"})
			return dir
		}},
		{name: "empty root commit", make: func(t *testing.T, dir string) string {
			repomaptest.Git(t, dir, "commit", "-q", "--no-gpg-sign", "--allow-empty", "-m", "Empty start")
			commit(t, dir, "First files", map[string]string{"a.py": "a = 1\n"})
			return dir
		}},
		{name: "two roots merged", make: func(t *testing.T, dir string) string {
			commit(t, dir, "Main start", map[string]string{"a.py": "a = 1\n"})
			repomaptest.Git(t, dir, "checkout", "-q", "--orphan", "other")
			repomaptest.Git(t, dir, "rm", "-q", "-rf", ".")
			commit(t, dir, "Other start", map[string]string{"b/other.py": "b = 1\n"})
			repomaptest.Git(t, dir, "checkout", "-q", "main")
			repomaptest.Git(t, dir, "merge", "-q", "--no-gpg-sign", "--allow-unrelated-histories", "-m", "Merge other (#7)", "other")
			commit(t, dir, "After", map[string]string{"b/other.py": "b = 2\n"})
			return dir
		}},
		{name: "subdirectory", make: func(t *testing.T, dir string) string {
			commit(t, dir, "Start", map[string]string{"top.py": "t = 1\n", "sub/in.py": "i = 1\n", "sub/deep/more.py": "m = 1\n"})
			commit(t, dir, "Outside only", map[string]string{"top.py": "t = 2\n"})
			return filepath.Join(dir, "sub")
		}},
		{name: "subdirectory the root did not have", make: func(t *testing.T, dir string) string {
			commit(t, dir, "Start", map[string]string{"top.py": "t = 1\n"})
			commit(t, dir, "Add sub", map[string]string{"sub/in.py": "i = 1\n"})
			return filepath.Join(dir, "sub")
		}},
		{name: "shallow clone", make: func(t *testing.T, dir string) string {
			src := filepath.Join(dir, "src")
			repomaptest.Git(t, dir, "init", "-q", "-b", "main", src)
			for i := 0; i < 3; i++ {
				commit(t, src, fmt.Sprintf("Change %d", i), map[string]string{"x.py": fmt.Sprintf("x = %d\n", i), fmt.Sprintf("f%d.py", i): "y = 1\n"})
			}
			repomaptest.Git(t, dir, "clone", "-q", "--depth", "1", "file://"+src, "clone")
			return filepath.Join(dir, "clone")
		}},
		{name: "SHA-256 repository", make: func(t *testing.T, dir string) string {
			repo := filepath.Join(dir, "sha256")
			repomaptest.Git(t, dir, "init", "-q", "-b", "main", "--object-format=sha256", repo)
			commit(t, repo, "Start", map[string]string{"a.py": "a = 1\n", "b/c.py": "c = 1\n"})
			commit(t, repo, "Next", map[string]string{"a.py": "a = 2\n"})
			return repo
		}},
		{name: "root of more names than a record keeps", make: func(t *testing.T, dir string) string {
			commit(t, dir, "Generated", many)
			commit(t, dir, "Fix one", map[string]string{"gen/" + long + "00/m0000.py": "x = 2\n"})
			return dir
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			repomaptest.Git(t, dir, "init", "-q", "-b", "main")
			from := c.make(t, dir)
			oldLog := func(merges string) string {
				out := repomaptest.Git(t, from, "-c", "core.quotepath=off", "-c", "log.showRoot=true", "log", "-n", "5000", merges,
					"--no-show-signature", "--no-renames", "--relative", "--format=%x00%h%x01%B%x02", "--name-only", "HEAD", "--")
				if i := strings.IndexByte(out, 0); i >= 0 {
					return out[i:]
				}
				return ""
			}
			h, ct := &logPart{max: historyCommits, total: logTotalMax}, &logPart{max: refCommits, total: logTotalMax, merges: true}
			oldAll := repomaptest.Git(t, from, "-c", "core.quotepath=off", "-c", "log.showRoot=true", "log", "--diff-merges=first-parent",
				"--no-show-signature", "--no-renames", "--relative", "--format=%x00%p%x03%h%x01%B%x02", "--name-only", "HEAD", "--")
			if _, err := boundedLog(strings.NewReader(oldAll), nil, h, ct); err != nil {
				t.Fatal(err)
			}
			hist, cited, err := readLogs(context.Background(), historySource{dir: from, rev: "HEAD"})
			if err != nil {
				t.Fatal(err)
			}
			if string(hist) != string(h.out) || string(cited) != string(ct.out) {
				t.Errorf("history log:\n%q\nwant:\n%q\ncited log:\n%q\nwant:\n%q", abbrevBytes(hist), abbrevBytes(h.out), abbrevBytes(cited), abbrevBytes(ct.out))
			}
			if want := oldLog("--no-merges"); c.name != "root of more names than a record keeps" && string(hist) != want {
				t.Errorf("history log:\n%q\nwant (git's, --no-merges):\n%q", hist, want)
			}
		})
	}
}

// TestRootNamesBounded: the files of a root commit are read from its tree
// up to the bound a record's names keep, and the lister says when there
// are more; a name that is no commit is an error.
func TestRootNamesBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("pkg/f%02d.py", i)] = "x = 1\n"
	}
	repomaptest.InitRepo(t, dir, files)
	head := strings.TrimSpace(repomaptest.Git(t, dir, "rev-parse", "--short", "HEAD"))
	all := repomaptest.Git(t, dir, "-c", "core.quotepath=off", "ls-tree", "-r", "--name-only", "HEAD")
	for _, c := range []struct {
		max      int
		names    string
		over     bool
		hash     string
		wantErr  error
		anyError bool
	}{
		{max: len(all) + 2, names: "\n\n" + all, hash: head},
		{max: len(all) + 1, over: true, hash: head},
		{max: 30, over: true, hash: head},
		{max: 1 << 20, hash: "--output=/tmp/x", wantErr: errNotCommitName},
		{max: 1 << 20, hash: "", wantErr: errNotCommitName},
		{max: 1 << 20, hash: "0123456789abcdef", anyError: true},
	} {
		names, over, err := rootNames(context.Background(), dir, []byte(c.hash), c.max)
		switch {
		case c.wantErr != nil && !errors.Is(err, c.wantErr), c.anyError && err == nil, c.wantErr == nil && !c.anyError && err != nil:
			t.Errorf("names(%q, %d): error %v, want %v", c.hash, c.max, err, c.wantErr)
		case err == nil && (string(names) != c.names || over != c.over):
			t.Errorf("names(%q, %d) = %d bytes, over %v; want %d bytes, over %v", c.hash, c.max, len(names), over, len(c.names), c.over)
		}
	}
}

// TestBoundedRoots: one history read lists the files of at most
// maxRootListings root commits; the later ones keep none.
func TestBoundedRoots(t *testing.T) {
	t.Parallel()
	calls := 0
	list := boundedRoots(maxRootListings, func([]byte, int) ([]byte, bool, error) {
		calls++
		return []byte("\n\na.py\n"), false, nil
	})
	for i := 0; i < maxRootListings+5; i++ {
		names, over, err := list([]byte("abc123"), logNamesMax)
		if want := i >= maxRootListings; over != want || err != nil || (string(names) == "") != want {
			t.Errorf("root %d: %q, over %v, %v; want over %v", i, names, over, err, want)
		}
	}
	if calls != maxRootListings {
		t.Errorf("listed %d roots, want %d", calls, maxRootListings)
	}
}
