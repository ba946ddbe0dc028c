package gitrepo

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The config scan (scanConfig: drivers and https trust settings) is one
// git process before nearly every git planex runs. Its answer depends only on the config files git reads
// for the call, so a Repo keeps the answer while none of those files has
// changed. What git reads for a Repo's call, with system and global
// config switched off: $GIT_COMMON_DIR/config, $GIT_DIR/config.worktree,
// the command-line settings, and any file an include names. An answer is
// kept only when
//   - the call names both GIT_DIR and GIT_COMMON_DIR (absolute) and no
//     config file by GIT_CONFIG* or --git-dir, so the two files above are
//     the only files read;
//   - the scan saw no include or includeIf key (an included file, or a
//     condition on the branch, could change without either file
//     changing), so a repository with includes is scanned every time;
//   - neither file was changed within racyWindow before it was looked
//     at (coarseWindow where the file system keeps times in seconds or
//     hundredths), so a rewrite that keeps its size cannot land in the
//     same timestamp tick as the change recorded.
// It is reused only while both files have the same device, inode, size,
// modification and change time (or are still absent). Every writer of a
// config file, planex or another process, changes at least the change
// time, so the next call scans again.

// racyWindow is how recently a config file may have changed for its scan
// to be kept. File timestamps come from the kernel's coarse clock, which
// lags real time by at most a tick (a few milliseconds); this is far
// above that.
const racyWindow = 100 * time.Millisecond

// coarseWindow is racyWindow for a file whose times are kept coarsely
// (coarseTimes): above FAT's two-second step, with the clock's tick to
// spare.
const coarseWindow = 3 * time.Second

// maxScans bounds the answers a Repo keeps (one per worktree and
// environment); when full, all are dropped.
const maxScans = 64

// scanCache is a Repo's remembered config scans. A nil cache scans every
// time.
type scanCache struct {
	mu sync.Mutex
	m  map[string]scanEntry
	// includes is what each config file includes (checkConfigFiles).
	includes map[string]includeEntry
	// clean is the git directory's folders found to hold no FIFO
	// (checkGitDirTree).
	clean map[string]cleanFolder
}

type scanEntry struct {
	stamp string
	scan  configScan
}

func newScanCache() *scanCache { return &scanCache{m: map[string]scanEntry{}} }

// scan returns what c's config defines (drivers, https trust settings),
// from the cache when the config files git reads for c are unchanged
// since they were scanned.
func (s *scanCache) scan(ctx context.Context, c call) (configScan, error) {
	files := configFiles(c)
	if s == nil || files == nil {
		return scanConfig(ctx, c)
	}
	key := scanKey(c)
	stamp, stable := configStamp(files, time.Now())
	if stable {
		s.mu.Lock()
		e, hit := s.m[key]
		s.mu.Unlock()
		if hit && e.stamp == stamp {
			return e.scan, nil
		}
	}
	scanned, err := scanConfig(ctx, c)
	if err != nil || !stable || scanned.includes {
		return scanned, err
	}
	s.mu.Lock()
	if len(s.m) >= maxScans {
		s.m = map[string]scanEntry{}
	}
	s.m[key] = scanEntry{stamp: stamp, scan: scanned}
	s.mu.Unlock()
	return scanned, nil
}

// configFiles are the config files git reads for c, or nil when that is
// not known from c alone.
func configFiles(c call) []string {
	if c.userConfig {
		return nil
	}
	var gitDir, commonDir string
	for _, kv := range c.env {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "GIT_DIR":
			gitDir = value
		case name == "GIT_COMMON_DIR":
			commonDir = value
		case strings.HasPrefix(name, "GIT_CONFIG") && name != "GIT_CONFIG_PARAMETERS":
			// A config file named by the environment. (GIT_CONFIG_PARAMETERS
			// is command-line config: part of the key, and shown by the scan.)
			return nil
		}
	}
	global, _, _ := splitArgs(c.args)
	for _, a := range global {
		if a == "--git-dir" || strings.HasPrefix(a, "--git-dir=") || a == "--config-env" || strings.HasPrefix(a, "--config-env=") {
			return nil
		}
	}
	if !filepath.IsAbs(gitDir) || !filepath.IsAbs(commonDir) {
		return nil
	}
	return []string{filepath.Join(commonDir, "config"), filepath.Join(gitDir, "config.worktree")}
}

// scanKey is everything besides the files that the scan's answer depends
// on: the repository named, and the command-line config (global -c
// options, GIT_CONFIG_PARAMETERS, the Repo's settings). The index, the
// work tree and the identity do not change which config git reads, so
// calls differing only in them share a scan.
func scanKey(c call) string {
	global, _, _ := splitArgs(c.args)
	parts := append([]string{}, global...)
	parts = append(parts, "\x01")
	for _, kv := range c.env {
		name, _, _ := strings.Cut(kv, "=")
		if !scanIrrelevant(name) {
			parts = append(parts, kv)
		}
	}
	parts = append(parts, "\x01")
	for _, s := range c.config {
		parts = append(parts, s.key+"="+s.value)
	}
	return strings.Join(parts, "\x00")
}

// scanIrrelevant are variables planex sets per call that git does not
// consult when reading config.
func scanIrrelevant(name string) bool {
	return name == "GIT_INDEX_FILE" || name == "GIT_WORK_TREE" ||
		strings.HasPrefix(name, "GIT_AUTHOR_") || strings.HasPrefix(name, "GIT_COMMITTER_")
}
