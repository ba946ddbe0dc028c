package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The checkout's ignored files are listed again before every contained
// process starts (Ignored, Untracked). Two of that listing's answers
// depend only on files that rarely change during a run, so a Repo keeps
// them, under the same rules as its driver scans (scancache.go):
//   - the user's core.excludesFile, read from every config file git reads
//     for the user (system, global, the repository's own). It is kept
//     only when the read saw no include or includeIf key, and reused
//     while each of those files (every place git may look for them, see
//     userConfigFiles) has the same device, inode, size and times, or is
//     still absent, and the variables naming them are the same;
//   - the paths of the checkout's submodules (the index's gitlinks),
//     reused while the index file is unchanged. Whether each is checked
//     out is looked at again every time.
// Neither is kept when one of its files changed within racyWindow before
// it was looked at.

// listingCache is a Repo's remembered excludes file and gitlinks. A nil
// cache reads both every time.
type listingCache struct {
	mu       sync.Mutex
	excludes stamped
	gitlinks stamped
}

// stamped is an answer with what it was read under: key (the names and
// variables it depends on) and stamp (its files' state).
type stamped struct {
	key, stamp string
	value      []string
}

func newListingCache() *listingCache { return &listingCache{} }

// lookup returns the answer *slot holds for key when files still have
// the stamp it was read under; stamp is the files' state now, to store
// with a fresh answer when stable.
func (l *listingCache) lookup(slot *stamped, key string, files []string) (value []string, hit bool, stamp string, stable bool) {
	if l == nil {
		return nil, false, "", false
	}
	stamp, stable = configStamp(files, time.Now())
	if !stable {
		return nil, false, "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if slot.stamp != "" && slot.key == key && slot.stamp == stamp {
		return slot.value, true, stamp, true
	}
	return nil, false, stamp, true
}

func (l *listingCache) store(slot *stamped, key, stamp string, value []string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	*slot = stamped{key: key, stamp: stamp, value: value}
	l.mu.Unlock()
}

// userExcludesFile is the core.excludesFile git would use for the user
// in r's checkout (its path expanded), or "" when none is set.
func userExcludesFile(ctx context.Context, r *Repo, env []string) (string, error) {
	files := userConfigFiles(r)
	key := strings.Join(append(userConfigEnv(), env...), "\x00")
	var slot *stamped
	if r.listing != nil {
		slot = &r.listing.excludes
	}
	v, hit, stamp, stable := r.listing.lookup(slot, key, files)
	if hit {
		return v[0], nil
	}
	value, includes, err := readExcludesFile(ctx, call{dir: r.Root, env: env, userConfig: true})
	if err != nil {
		return "", err
	}
	if stable && !includes {
		r.listing.store(slot, key, stamp, []string{value})
	}
	return value, nil
}

// readExcludesFile reads core.excludesFile (the last value wins, as for
// `git config --get`) with c, and whether the config holds includes,
// whose files git reads beyond the ones stamped. It runs nothing.
func readExcludesFile(ctx context.Context, c call) (value string, includes bool, err error) {
	c.args = []string{"config", "-z", "--type=path", "--get-regexp", `^(core\.excludesfile|include\..*|includeif\..*)$`}
	cmd, done, err := command(ctx, c)
	if err != nil {
		return "", false, err
	}
	defer done()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
			return "", false, nil // no such keys
		}
		if cerr := ctx.Err(); cerr != nil {
			return "", false, fmt.Errorf("reading core.excludesFile: %w", cerr)
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", false, fmt.Errorf("reading core.excludesFile: %s", msg)
	}
	for _, entry := range strings.Split(stdout.String(), "\x00") {
		name, v, _ := strings.Cut(entry, "\n")
		switch {
		case name == "core.excludesfile":
			value = strings.TrimSpace(v)
		case name != "":
			includes = true
		}
	}
	return value, includes, nil
}

// userConfigEnv are the variables that say which config files git reads
// for the user and how it expands a path's ~/.
func userConfigEnv() []string {
	var out []string
	for _, name := range []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"} {
		v, set := os.LookupEnv(name)
		out = append(out, fmt.Sprintf("%s=%t:%s", name, set, v))
	}
	return out
}

// userConfigFiles are every file git may read config from for the user
// in r's checkout (includes aside): the system and global places
// (OutsideConfigFiles), the system config of the git found on PATH (a
// git installed under a prefix of its own keeps it in <prefix>/etc), and
// the repository's config and its worktree's.
func userConfigFiles(r *Repo) []string {
	files := OutsideConfigFiles(os.Getenv)
	if prog, err := exec.LookPath("git"); err == nil {
		if real, err := filepath.EvalSymlinks(prog); err == nil {
			prog = real
		}
		files = append(files, filepath.Join(filepath.Dir(filepath.Dir(prog)), "etc", "gitconfig"))
	}
	return append(files, filepath.Join(r.CommonDir, "config"), filepath.Join(r.gitDir, "config.worktree"))
}

// gitlinkPaths are the paths, relative and slash-separated, where c's
// index holds a submodule. index, when not "", is the index file c
// reads: the answer is then kept in cache while that file is unchanged.
func gitlinkPaths(ctx context.Context, c call, cache *listingCache, index string) ([]string, error) {
	if index == "" {
		cache = nil
	}
	var slot *stamped
	if cache != nil {
		slot = &cache.gitlinks
	}
	key := c.dir + "\x00" + index
	links, hit, stamp, stable := cache.lookup(slot, key, []string{index})
	if hit {
		return links, nil
	}
	links, err := listGitlinks(ctx, c)
	if err == nil && stable {
		cache.store(slot, key, stamp, links)
	}
	return links, err
}
