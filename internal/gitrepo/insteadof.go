package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrRemoteRewritten is returned for a local remote that the
// repository's configuration rewrites (url.<base>.insteadOf,
// pushInsteadOf): git would reach another local repository, and run its
// hooks, in planex's place.
var ErrRemoteRewritten = errors.New("the repository's git config rewrites a local remote's path")

// maxRewriteSettings bounds what localRewrite reads; a configuration
// holding more is refused, never read in part.
const maxRewriteSettings = 1 << 20

// localRewrite refuses (ErrRemoteRewritten) when the repository's
// configuration, with its includes, holds a url.<base>.insteadOf (or for
// a push a pushInsteadOf) that matches the start of target, a local
// remote. planex reaches a local remote with git's own receive and upload
// programs, which run the hooks of the repository they reach with
// planex's environment: a rewrite written by whoever had the git
// directory before sent planex's push to a repository of theirs whose
// hooks ran. A remote reached over the network is left to the protocol
// settings: a rewrite of one to a local path is refused there.
func localRewrite(ctx context.Context, r *Repo, target string, push bool) error {
	// The config scan every protected git call makes (remembered while
	// the config files are unchanged) says whether any rewrite exists;
	// their values are read only then.
	scan, err := r.scans.scan(ctx, call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config})
	if err != nil {
		return fmt.Errorf("reading the repository's url rewrites: %w", err)
	}
	if !scan.rewrites {
		return nil
	}
	c := call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, scans: r.scans,
		args: []string{"config", "-z", "--get-regexp", `^url\..*\.(insteadof|pushinsteadof)$`}}
	cmd, done, err := command(ctx, c)
	if err != nil {
		return err
	}
	defer done()
	stdout := &headBuffer{max: maxRewriteSettings + 1}
	stderr := &headBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.b.Len() == 0 {
			return nil // no such keys
		}
		return fmt.Errorf("reading the repository's url rewrites: %s", strings.TrimSpace(stderr.b.String()+" "+err.Error()))
	}
	if stdout.b.Len() > maxRewriteSettings {
		return fmt.Errorf("%w: its url rewrites pass %d bytes", ErrRemoteRewritten, maxRewriteSettings)
	}
	for _, entry := range strings.Split(stdout.b.String(), "\x00") {
		key, value, _ := strings.Cut(entry, "\n")
		if strings.HasSuffix(key, ".pushinsteadof") && !push {
			continue
		}
		// An empty base matches every URL.
		if key != "" && strings.HasPrefix(target, value) {
			return fmt.Errorf("%w: %s = %s; remove it", ErrRemoteRewritten, key, value)
		}
	}
	return nil
}

// refuseLocalRewrite is localRewrite for the URL planex names for remote,
// when that is a local repository; a remote over the network passes.
func refuseLocalRewrite(ctx context.Context, r *Repo, remote string, push bool) error {
	target := remoteTarget(r, remote, push)
	if !localURL(target) {
		return nil
	}
	if err := localRewrite(ctx, r, target, push); err != nil {
		return fmt.Errorf("reaching %s: %w", remote, err)
	}
	return nil
}
