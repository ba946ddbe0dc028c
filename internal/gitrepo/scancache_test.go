package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// settle waits until files written just now are older than racyWindow, so
// that a remembered scan is reused or refused on the files' identity
// alone, not because they changed too recently. Time only moves on and a
// file's times (from the kernel's coarse clock) are never ahead of
// time.Now, so racyWindow and a margin for that clock's tick are enough.
func settle() { time.Sleep(racyWindow + 20*time.Millisecond) }

// TestRedTeamDriverAddedBetweenCallsIsNeutralised: a Repo remembers its
// driver scan while the config is unchanged. Another process (or a planex
// step) then names a clean filter for the files planex is about to add —
// in .git/config, by a same-size rewrite of it, through a new include, or
// in a file already included. The next planex git call must still switch
// that filter off.
func TestRedTeamDriverAddedBetweenCallsIsNeutralised(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// before is added to .git/config before the first call; attack
		// changes the config after it.
		before string
		attack func(t *testing.T, cfg, prog string)
		cached bool // whether the first scan may be remembered
	}{
		{"driver appended to .git/config", "", func(t *testing.T, cfg, prog string) {
			appendFile(t, cfg, "[filter \"late\"]\n\tclean = "+prog+"\n")
		}, true},
		{"same-size rewrite of .git/config", "[filter \"safe\"]\n\tclean = %PROG%\n", func(t *testing.T, cfg, _ string) {
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `"safe"`, `"late"`, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"include added to .git/config", "", func(t *testing.T, cfg, prog string) {
			inc := filepath.Join(filepath.Dir(cfg), "extra.cfg")
			appendFile(t, inc, "[filter \"late\"]\n\tclean = "+prog+"\n")
			appendFile(t, cfg, "[include]\n\tpath = "+inc+"\n")
		}, true},
		{"driver added to an included file", "[include]\n\tpath = extra.cfg\n", func(t *testing.T, cfg, prog string) {
			appendFile(t, filepath.Join(filepath.Dir(cfg), "extra.cfg"), "[filter \"late\"]\n\tclean = "+prog+"\n")
		}, false},
		{"driver in a conditional include's file", "[includeIf \"gitdir:/\"]\n\tpath = extra.cfg\n", func(t *testing.T, cfg, prog string) {
			appendFile(t, filepath.Join(filepath.Dir(cfg), "extra.cfg"), "[filter \"late\"]\n\tclean = "+prog+"\n")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			e := newEvil(t)
			prog := e.prog("late-clean")
			cfg := filepath.Join(r.CommonDir, "config")
			appendFile(t, cfg, strings.ReplaceAll(tt.before, "%PROG%", prog))
			appendFile(t, filepath.Join(r.CommonDir, "extra.cfg"), "")
			appendFile(t, filepath.Join(r.Root, ".gitattributes"), "*.txt filter=late\n")
			appendFile(t, filepath.Join(r.Root, "a.txt"), "one\n")
			settle()
			if _, err := r.Git(ctx, "", "add", "--", "a.txt"); err != nil {
				t.Fatal(err)
			}
			if n := len(r.scans.m); tt.cached && runtime.GOOS == "linux" && n == 0 {
				t.Fatal("the first scan was not remembered, so this test shows nothing about reuse")
			} else if !tt.cached && n != 0 {
				t.Fatalf("a scan of a config with includes was remembered (%d entries)", n)
			}
			tt.attack(t, cfg, prog)
			settle()
			appendFile(t, filepath.Join(r.Root, "a.txt"), "two\n")
			if _, err := r.Git(ctx, "", "add", "--", "a.txt"); err != nil {
				t.Fatal(err)
			}
			e.assertNothingRan()
			// The attack was live: git left to itself runs the filter.
			appendFile(t, filepath.Join(r.Root, "a.txt"), "three\n")
			cmd := exec.Command("git", "add", "--", "a.txt")
			cmd.Dir = r.Root
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git add: %v\n%s", err, out)
			}
			if len(e.ran()) == 0 {
				t.Error("the planted filter does not run even without planex's protection; the test proves nothing")
			}
		})
	}
}

// TestScanReusedOnlyWhileConfigUnchanged: calls that differ only in index
// and work tree share one scan, and a config write by planex itself
// (through gitrepo) is seen by the next call.
func TestScanReusedOnlyWhileConfigUnchanged(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("scans are remembered only where a file's inode and change time are read (Linux)")
	}
	ctx := context.Background()
	r := newRepo(t)
	settle()
	key := func(env ...string) string {
		return scanKey(call{env: append(append(r.gitEnv(r.Root), r.env...), env...), config: r.config, args: []string{"add"}})
	}
	if key("GIT_INDEX_FILE=/x") != key("GIT_INDEX_FILE=/y") {
		t.Error("calls differing only in their index do not share a scan")
	}
	if key() == key("GIT_DIR=/elsewhere") {
		t.Error("calls naming different git directories share a scan")
	}
	if _, err := r.Git(ctx, "", "status", "--porcelain"); err != nil {
		t.Fatal(err)
	}
	if len(r.scans.m) != 1 {
		t.Fatalf("remembered scans = %d, want 1", len(r.scans.m))
	}
	if _, err := r.Git(ctx, "", "config", "filter.mine.clean", "cat"); err != nil {
		t.Fatal(err)
	}
	settle()
	scanned, err := r.scans.scan(ctx, call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, args: []string{"status"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(scanned.drivers["filter"], ",") != "mine" {
		t.Errorf("filters after planex's own config write = %v, want [mine]", scanned.drivers["filter"])
	}
}
