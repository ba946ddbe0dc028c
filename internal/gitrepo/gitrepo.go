// Package gitrepo is planex's view of a git repository. Mutations go
// through the git CLI (linked worktrees and plumbing are faster and more
// complete there); reading history uses go-git.
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
)

// Repo is a repository with a working tree.
type Repo struct {
	// Root is the top level of the working tree.
	Root string
	// CommonDir is the git directory shared by all worktrees.
	CommonDir string
	env       []string
}

// ErrNotRepo is returned when a directory is not inside a git work tree.
var ErrNotRepo = errors.New("not a git repository")

// Open finds the repository containing dir.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	r := &Repo{Root: abs}
	out, err := r.git(ctx, abs, nil, "rev-parse", "--show-toplevel", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%v)", dir, ErrNotRepo, err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] == "" {
		return nil, fmt.Errorf("%s: %w (bare repository?)", dir, ErrNotRepo)
	}
	r.Root = lines[0]
	r.CommonDir = lines[1]
	if !filepath.IsAbs(r.CommonDir) {
		r.CommonDir = filepath.Join(abs, r.CommonDir)
	}
	r.CommonDir = filepath.Clean(r.CommonDir)
	r.env = identityEnv(ctx, r.Root)
	return r, nil
}

// identityEnv supplies a committer identity when the repository has none
// configured (fresh CI runners), so plumbing commits never fail on it.
func identityEnv(ctx context.Context, dir string) []string {
	var env []string
	if out, err := run(ctx, dir, nil, nil, "config", "user.name"); err != nil || strings.TrimSpace(out) == "" {
		env = append(env, "GIT_AUTHOR_NAME=planex", "GIT_COMMITTER_NAME=planex")
	}
	if out, err := run(ctx, dir, nil, nil, "config", "user.email"); err != nil || strings.TrimSpace(out) == "" {
		env = append(env, "GIT_AUTHOR_EMAIL=planex@users.noreply.github.com", "GIT_COMMITTER_EMAIL=planex@users.noreply.github.com")
	}
	return env
}

// Git runs a git command in dir (the root when empty) and returns stdout.
func (r *Repo) Git(ctx context.Context, dir string, args ...string) (string, error) {
	if dir == "" {
		dir = r.Root
	}
	return r.git(ctx, dir, nil, args...)
}

func (r *Repo) git(ctx context.Context, dir string, extraEnv []string, args ...string) (string, error) {
	return run(ctx, dir, append(append([]string{}, r.env...), extraEnv...), nil, args...)
}

func (r *Repo) gitIn(ctx context.Context, dir string, extraEnv []string, stdin []byte, args ...string) (string, error) {
	return run(ctx, dir, append(append([]string{}, r.env...), extraEnv...), stdin, args...)
}

func run(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// Never let git prompt (CI has no terminal) or read the user's pager.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return stdout.String(), nil
}

// Head returns the commit checked out in the main worktree.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.Git(ctx, "", "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("reading HEAD (does the repository have a commit?): %w", err)
	}
	return strings.TrimSpace(out), nil
}

// CurrentBranch returns the checked-out branch name, or "" when detached.
func (r *Repo) CurrentBranch(ctx context.Context) string {
	out, err := r.Git(ctx, "", "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// Dirty lists uncommitted changes in the main worktree (porcelain lines).
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	out, err := r.Git(ctx, "", "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// ResolveBranch returns the commit a branch points at, or "" when the
// branch does not exist.
func (r *Repo) ResolveBranch(ctx context.Context, branch string) (string, error) {
	out, err := r.Git(ctx, "", "for-each-ref", "--format=%(objectname)", "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// ErrRefMoved is returned when a branch was not where the caller expected.
var ErrRefMoved = errors.New("branch moved underneath planex")

// UpdateBranch moves refs/heads/branch to newSHA only if it is at oldSHA
// ("" = must not exist yet): a compare-and-swap, so two writers never
// overwrite each other's commits.
func (r *Repo) UpdateBranch(ctx context.Context, branch, newSHA, oldSHA, reason string) error {
	old := oldSHA
	if old == "" {
		old = strings.Repeat("0", 40)
	}
	if _, err := r.Git(ctx, "", "update-ref", "-m", reason, "refs/heads/"+branch, newSHA, old); err != nil {
		return fmt.Errorf("updating %s: %w: %v", branch, ErrRefMoved, err)
	}
	return nil
}

// Exclude adds a pattern to .git/info/exclude if it is not there, so
// planex's session folder never shows up as an untracked change.
func (r *Repo) Exclude(pattern string) error {
	p := filepath.Join(r.CommonDir, "info", "exclude")
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == pattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s: %w", p, err)
	}
	defer f.Close()
	prefix := ""
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		prefix = "\n"
	}
	if _, err := f.WriteString(prefix + pattern + "\n"); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}
