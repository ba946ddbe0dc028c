package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// errEnoughIgnored stops the listing once more than the caller's bound
// was read.
var errEnoughIgnored = errors.New("enough ignored entries")

// Ignored lists the git-ignored files and folders of r's checkout, as
// absolute paths, a folder whose whole content is ignored once (git's
// --directory). It reads at most max+1 entries; more reports that the
// checkout holds more than max, and paths then holds only the first max.
func Ignored(ctx context.Context, r *Repo, max int) (paths []string, more bool, err error) {
	return others(ctx, r, max, true)
}

// Untracked lists every file and folder of r's checkout that git does not
// track, ignored or not, like Ignored. In CI the checkout is fresh, so
// what is untracked there was put by the workflow's earlier steps (a
// cloud login's credentials file at the workspace's root, say), not by
// the user.
func Untracked(ctx context.Context, r *Repo, max int) (paths []string, more bool, err error) {
	return others(ctx, r, max, false)
}

func others(ctx context.Context, r *Repo, max int, ignoredOnly bool) (paths []string, more bool, err error) {
	env := append(r.gitEnv(r.Root), r.env...)
	config := r.config
	// planex's git reads no global config, where users name their own
	// excludes file (core.excludesFile): what it ignores is the user's
	// local files as much as what .gitignore names. `git config --get`
	// runs nothing.
	if out, err := run(ctx, call{dir: r.Root, env: env, userConfig: true, args: []string{"config", "--get", "--path", "core.excludesFile"}}); err == nil && strings.TrimSpace(out) != "" {
		config = append(append([]setting(nil), r.config...), setting{"core.excludesFile", strings.TrimSpace(out)})
	}
	args := []string{"ls-files", "-z", "--others", "--directory"}
	if ignoredOnly {
		args = append(args, "--ignored", "--exclude-standard")
	}
	c := call{dir: r.Root, env: env, config: config, args: args, scans: r.scans}
	err = stream(ctx, c, func(out io.Reader) error {
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 0, 64<<10), 64<<10)
		s.Split(splitNUL)
		for s.Scan() {
			if len(paths) == max {
				more = true
				return errEnoughIgnored
			}
			rel := strings.TrimSuffix(s.Text(), "/")
			if rel == "" {
				continue
			}
			paths = append(paths, filepath.Join(r.Root, filepath.FromSlash(rel)))
		}
		return s.Err()
	})
	if err != nil && !errors.Is(err, errEnoughIgnored) {
		return nil, false, fmt.Errorf("listing the checkout's untracked files: %w", err)
	}
	return paths, more, nil
}

// splitNUL splits git's -z output at its NUL bytes.
func splitNUL(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
