package gitrepo

import (
	"context"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNeedsDriverScan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-c", "core.quotepath=off", "ls-files", "-co", "--exclude-standard", "-z", "--deduplicate"}, false},
		{[]string{"ls-files", "-s", "-z"}, false},
		{[]string{"ls-files", "-z", "--others", "--directory", "--ignored", "--exclude-standard"}, false},
		{[]string{"ls-files", "-z", "--", "-m"}, false}, // a path after "--"
		{[]string{"-c", "core.quotepath=off", "check-ignore", "-z", "--stdin"}, false},
		{[]string{"ls-files", "-m"}, true},
		{[]string{"ls-files", "-cm"}, true},
		{[]string{"ls-files", "--modified"}, true},
		{[]string{"ls-files", "--mod"}, true}, // git takes abbreviations
		{[]string{"ls-files", "--eol"}, true},
		{[]string{"ls-files", "--recurse-submodules"}, true},
		{[]string{"ls-files", "--format=%(objectname)"}, true},
		{[]string{"ls-files", "src", "-m"}, true}, // options after a path still count
		{[]string{"status", "--porcelain"}, true},
		{[]string{"ls-tree", "HEAD"}, false},
		{[]string{"cat-file", "--filters", "HEAD:a"}, true},
	} {
		if got := needsDriverScan(tc.args); got != tc.want {
			t.Errorf("needsDriverScan(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestRedTeamListingsRunNoDriverUnscanned: the listings that skip the
// driver scan (the repository map's and locate's ls-files and
// check-ignore, the ignored-files listing) start no driver scan, and with
// a required clean filter planted for every file, a racily clean
// modified file in the work tree and the user's global config full of
// programs, none of them runs a program; `ls-files -m`, which compares
// contents, is still scanned and runs nothing either.
func TestRedTeamListingsRunNoDriverUnscanned(t *testing.T) {
	// Not parallel: the counting git and HOME are this process's.
	ctx := context.Background()
	r := newRepo(t)
	e := newEvil(t)
	appendFile(t, filepath.Join(r.CommonDir, "config"), e.config("repo-"))
	appendFile(t, filepath.Join(r.CommonDir, "info", "attributes"), "* filter=evil diff=evil merge=evil\n*.txt filter=proc\n")
	home := t.TempDir()
	t.Setenv("HOME", home)
	appendFile(t, filepath.Join(home, ".gitconfig"), e.config("global-"))
	os.WriteFile(filepath.Join(r.Root, ".gitignore"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(r.Root, "build.log"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(r.Root, "new.txt"), []byte("new\n"), 0o644)
	// Same size and, written straight after the index, the same second:
	// racily clean, so a content comparison would run the clean filter.
	cleanGit(t, r.Root, "update-index", "--refresh")
	os.WriteFile(filepath.Join(r.Root, "src", "old.txt"), []byte("OLD\n"), 0o644)
	now := time.Now()
	os.Chtimes(filepath.Join(r.CommonDir, "index"), now, now)
	os.Chtimes(filepath.Join(r.Root, "src", "old.txt"), now, now)

	calls := gittest.CountGit(t)
	for _, args := range [][]string{
		{"-c", "core.quotepath=off", "ls-files", "-co", "--exclude-standard", "-z", "--deduplicate"},
		{"-c", "core.quotepath=off", "ls-files", "-s", "-z"},
		{"-c", "core.quotepath=off", "ls-files", "-o", "--exclude-standard", "-z"},
		{"ls-files", "-z", "--others", "--directory", "--ignored", "--exclude-standard"},
	} {
		if _, err := Output(ctx, r.Root, args...); err != nil {
			t.Fatalf("git %q: %v", args, err)
		}
	}
	cmd, err := Command(ctx, r.Root, "-c", "core.quotepath=off", "check-ignore", "-z", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = strings.NewReader("build.log\x00new.txt\x00")
	out, err := cmd.Output()
	if err != nil || string(out) != "build.log\x00" {
		t.Errorf("check-ignore = %q, %v", out, err)
	}
	got := calls()
	if len(got) != 5 {
		t.Errorf("five listings started %d git processes, want 5 (no driver scan):\n%s", len(got), strings.Join(got, "\n"))
	}
	modified, err := Output(ctx, r.Root, "ls-files", "-m")
	if err != nil {
		t.Fatal(err)
	}
	scans := 0
	for _, c := range calls() {
		if strings.Contains(c, "--get-regexp") {
			scans++
		}
	}
	if scans != 1 {
		t.Errorf("ls-files -m ran %d driver scans, want 1", scans)
	}
	if strings.TrimSpace(string(modified)) != "src/old.txt" {
		t.Errorf("ls-files -m = %q, want src/old.txt", modified)
	}
	e.assertNothingRan()
}
