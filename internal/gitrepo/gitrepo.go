// Package gitrepo is planex's view of a git repository. Every read and
// write goes through the git CLI (linked worktrees and plumbing are
// complete there, and it opens SHA-1 and SHA-256 repositories alike);
// only .gitignore matching uses go-git's pattern code, which touches no
// repository.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"github.com/planexhq/planex/internal/abbrev"
	"os"
	"path/filepath"
	"strings"
)

// Repo is a repository with a working tree.
type Repo struct {
	// Root is the top level of the working tree.
	Root string
	// CommonDir is the git directory shared by all worktrees.
	CommonDir string
	// TempDir is the folder under which planex keeps this repository's
	// worktree folder (see WorktreeDir). The caller sets it once, before
	// any worktree is made: the command line fills it from $RUNNER_TEMP,
	// tests give each repository its own. Empty means the OS temp dir.
	TempDir string
	// gitDir is Root's own git directory (CommonDir, or a linked
	// worktree's admin directory), pinned when the repository was opened
	// so that a rewritten .git file never redirects planex's git.
	gitDir string
	// format is the repository's object format: how long its ids are.
	format  ObjectFormat
	env     []string
	config  []setting
	remotes map[string]remoteURL
	// scans remembers driver scans while the config is unchanged.
	scans *scanCache
	// listing remembers what the ignored-files listing reads while the
	// files it comes from are unchanged.
	listing *listingCache
}

// ErrNotRepo is returned when a directory is not inside a git work tree.
var ErrNotRepo = errors.New("not a git repository")

// ErrWorkTreeElsewhere is returned when the repository's configuration
// (core.worktree) has git work on another folder than the one holding
// the .git git found.
var ErrWorkTreeElsewhere = errors.New("the repository's configuration moves its work tree elsewhere")

// Open finds the repository containing dir.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	if err := checkDiscovered(ctx, abs); err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	out, err := run(ctx, call{dir: abs, args: []string{"rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--show-object-format"}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%v)", dir, ErrNotRepo, err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || lines[0] == "" {
		return nil, fmt.Errorf("%s: %w (bare repository?)", dir, ErrNotRepo)
	}
	format, err := reportedFormat(lines[3])
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	if err := checkWorkTree(abs, lines[0]); err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	r := &Repo{Root: lines[0], gitDir: filepath.Clean(lines[1]), CommonDir: lines[2], format: format, scans: newScanCache(), listing: newListingCache()}
	if !filepath.IsAbs(r.CommonDir) {
		r.CommonDir = filepath.Join(abs, r.CommonDir)
	}
	r.CommonDir = filepath.Clean(r.CommonDir)
	values, remotes, ok := openConfig(ctx, r.Root, r.gitEnv(r.Root))
	if !ok {
		values = identityValues(ctx, r.Root, r.gitEnv(r.Root))
		remotes = readRemotes(ctx, r.Root, r.gitEnv(r.Root))
	}
	r.config, r.env = identityFrom(values)
	r.remotes = remotes
	return r, nil
}

// openConfig reads what Open needs from config with one `git config`:
// the user's identity, from every file git reads for the user (see
// identityValues), and the remotes, from the repository's own config only
// (local and worktree scope: the files planex's git reads). ok is false
// when git gave no usable answer (no key matched, an unreadable file, a
// git without --show-scope); Open then reads each on its own.
func openConfig(ctx context.Context, dir string, gitEnv []string) (ident map[string]string, remotes map[string]remoteURL, ok bool) {
	out, err := run(ctx, call{dir: dir, env: gitEnv, userConfig: true,
		args: []string{"config", "-z", "--show-scope", "--get-regexp", `^(user\.(name|email)|remote\..*\.(url|pushurl))$`}})
	if err != nil {
		return nil, nil, false
	}
	ident, remotes = map[string]string{}, map[string]remoteURL{}
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope := fields[i]
		key, value, _ := strings.Cut(fields[i+1], "\n")
		switch {
		case key == "user.name" || key == "user.email":
			ident[key] = strings.TrimSpace(value) // the last value wins
		case scope == "local" || scope == "worktree":
			addRemote(remotes, key, value)
		}
	}
	return ident, remotes, true
}

// The user's name and email go into planex's commits. Git reads neither
// system nor global config for planex, so they are read once, when the
// repository is opened, by one `git config --get-regexp` that runs
// nothing (openConfig, or identityValues when that gave no answer). When
// there is none (fresh CI runners) a planex identity is supplied, so
// plumbing commits never fail on it.

// identityValues reads user.name and user.email as git reads them for
// the user; the last value of a key wins, as for `git config --get`.
func identityValues(ctx context.Context, dir string, gitEnv []string) map[string]string {
	values := map[string]string{}
	out, err := run(ctx, call{dir: dir, env: gitEnv, userConfig: true, args: []string{"config", "-z", "--get-regexp", `^user\.(name|email)$`}})
	if err == nil {
		for _, entry := range strings.Split(out, "\x00") {
			key, value, _ := strings.Cut(entry, "\n")
			values[key] = strings.TrimSpace(value)
		}
	}
	return values
}

// identityFrom is the identity's settings and fallback environment from
// the values read.
func identityFrom(values map[string]string) ([]setting, []string) {
	var config []setting
	var env []string
	get := func(key string) string { return values[key] }
	fallback := func(vars ...string) {
		for _, kv := range vars {
			name, _, _ := strings.Cut(kv, "=")
			if os.Getenv(name) == "" {
				env = append(env, kv)
			}
		}
	}
	if name := get("user.name"); name != "" {
		config = append(config, setting{"user.name", name})
	} else {
		fallback("GIT_AUTHOR_NAME=planex", "GIT_COMMITTER_NAME=planex")
	}
	if email := get("user.email"); email != "" {
		config = append(config, setting{"user.email", email})
	} else {
		fallback("GIT_AUTHOR_EMAIL=planex@users.noreply.github.com", "GIT_COMMITTER_EMAIL=planex@users.noreply.github.com")
	}
	return config, env
}

// gitEnv names the repository explicitly for a call in workTree.
func (r *Repo) gitEnv(workTree string) []string {
	return []string{"GIT_DIR=" + r.gitDir, "GIT_COMMON_DIR=" + r.CommonDir, "GIT_WORK_TREE=" + workTree}
}

// Git runs a git command in dir (the root when empty) and returns stdout.
// dir must be inside Root; every call names Root's git directory
// explicitly.
func (r *Repo) Git(ctx context.Context, dir string, args ...string) (string, error) {
	if dir == "" {
		dir = r.Root
	}
	return r.git(ctx, dir, nil, args...)
}

func (r *Repo) git(ctx context.Context, dir string, extraEnv []string, args ...string) (string, error) {
	return r.gitIn(ctx, dir, extraEnv, nil, args...)
}

func (r *Repo) gitIn(ctx context.Context, dir string, extraEnv []string, stdin []byte, args ...string) (string, error) {
	env := append(append(r.gitEnv(r.Root), r.env...), extraEnv...)
	return run(ctx, call{dir: dir, env: env, config: r.config, stdin: stdin, args: args, scans: r.scans})
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

// WorkTreeState is what planex reads of the main worktree when a session
// starts: the commit checked out, the branch ("" when detached) and how
// many paths have uncommitted changes (untracked files included, ignored
// ones not), as Head, CurrentBranch and Dirty report them.
type WorkTreeState struct {
	Head    string
	Branch  string
	Changes int
}

// State reads r's HEAD, the checked-out branch and the uncommitted changes
// with one git status, where Head, CurrentBranch and Dirty take three
// processes. It fails, as Head does, when HEAD names no commit.
func State(ctx context.Context, r *Repo) (WorkTreeState, error) {
	out, err := r.Git(ctx, "", "status", "--porcelain=v2", "--branch", "--untracked-files=normal")
	if err != nil {
		return WorkTreeState{}, fmt.Errorf("reading the state of %s: %w", r.Root, err)
	}
	return parseState(out)
}

// parseState reads `git status --porcelain=v2 --branch` output: header
// lines start with "# ", every other line is one changed path.
func parseState(out string) (WorkTreeState, error) {
	var st WorkTreeState
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "# branch.oid "):
			st.Head = strings.TrimPrefix(l, "# branch.oid ")
		case strings.HasPrefix(l, "# branch.head "):
			st.Branch = strings.TrimPrefix(l, "# branch.head ")
		case strings.HasPrefix(l, "#"), strings.TrimSpace(l) == "":
		default:
			st.Changes++
		}
	}
	if st.Branch == "(detached)" {
		st.Branch = ""
	}
	if st.Head == "" || st.Head == "(initial)" {
		return WorkTreeState{}, errors.New("reading HEAD: the repository has no commit checked out")
	}
	return st, nil
}

// ResolveBranch returns the commit a branch points at, or "" when the
// branch does not exist. git for-each-ref matches a pattern as a folder
// too: for a planex/7-x that does not exist it listed a planex/7-x/y of
// someone else's, whose commit was taken for the branch's; only the ref
// of exactly that name counts.
func (r *Repo) ResolveBranch(ctx context.Context, branch string) (string, error) {
	return ResolveRef(ctx, r, "refs/heads/"+branch)
}

// ResolveRef returns the object the ref of exactly the full name ref
// points at in r, or "" when there is none.
func ResolveRef(ctx context.Context, r *Repo, ref string) (string, error) {
	out, err := r.Git(ctx, "", "for-each-ref", "--format=%(objectname) %(refname)", ref)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if sha, name, ok := strings.Cut(line, " "); ok && name == ref {
			return sha, nil
		}
	}
	return "", nil
}

// ErrRefMoved is returned when a branch was not where the caller expected.
var ErrRefMoved = errors.New("branch moved underneath planex")

// ErrSymbolicRef is returned when a ref planex is about to write is a
// symbolic ref (one naming another, as HEAD names a branch): git writes
// the ref it names, so a run branch or state ref made to name the user's
// branch had that branch moved. Whoever wrote the git directory made it.
var ErrSymbolicRef = errors.New("a ref planex writes is a symbolic ref to another")

// ErrRefUpdate is returned when git could not move a branch that was
// where the caller expected: a lock another git left or holds, a branch
// whose name clashes with another's folder (planex beside planex/s1), a
// full disk. git's own words follow it.
var ErrRefUpdate = errors.New("git could not move the branch")

// UpdateBranch moves refs/heads/branch to newSHA only if it is at oldSHA
// ("" = must not exist yet): a compare-and-swap, so two writers never
// overwrite each other's commits. A branch found elsewhere after a
// failure is ErrRefMoved; any other failure is ErrRefUpdate, so a stale
// lock is not reported as someone else's commit. A symbolic ref of the
// branch's name is replaced, not written through: the branch it named
// stays where it was.
func (r *Repo) UpdateBranch(ctx context.Context, branch, newSHA, oldSHA, reason string) error {
	old := oldSHA
	if old == "" {
		old = r.format.Zero()
	}
	// --no-deref: a symbolic ref of that name is replaced, never written
	// through (the old value is still compared with what it names).
	_, err := r.Git(ctx, "", "update-ref", "--no-deref", "-m", reason, "refs/heads/"+branch, newSHA, old)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("updating %s: %w", branch, err)
	}
	if cur, rerr := r.ResolveBranch(ctx, branch); rerr == nil && cur != oldSHA {
		at := "deleted"
		if cur != "" {
			at = "at " + abbrev.SHA(cur)
		}
		return fmt.Errorf("updating %s: %w (now %s): %v", branch, ErrRefMoved, at, err)
	}
	return fmt.Errorf("updating %s: %w: %v", branch, ErrRefUpdate, err)
}
