package gitrepo

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
)

// WithAuth returns a copy of r whose git commands authenticate https
// remotes with token. The token travels in environment variables (never
// on a command line, never in .git/config), so processes started by
// agents cannot find it.
func (r *Repo) WithAuth(serverURL, token string) *Repo {
	if token == "" {
		return r
	}
	c := *r
	header := "AUTHORIZATION: basic " + BasicCredential(token)
	key := "http.extraheader"
	if u, err := url.Parse(serverURL); err == nil && u.Host != "" {
		key = "http." + strings.TrimSuffix(u.Scheme+"://"+u.Host, "/") + "/.extraheader"
	}
	c.config = append(append([]setting{}, r.config...), setting{key, header})
	return &c
}

// BasicCredential is the HTTP basic credential WithAuth sends for token:
// a secret derived from it, which the Action masks in its log.
func BasicCredential(token string) string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
}

// DropPersistedCredentials removes http.*.extraheader settings that
// actions/checkout may have left for later steps, so that no agent can
// read the token: from the repository's config and its submodules'
// (checkout v4 and earlier, which with submodules: true writes the
// header into every .git/modules/…/config too), and from every file
// those include by an absolute path (checkout v6 writes the header to
// $RUNNER_TEMP/git-credentials-<uuid>.config and includes it with
// includeIf.gitdir, for the repository, its worktrees, planex's among
// them, and its submodules). It returns what it removed: a key of the
// repository's own config by name, any other as FILE:KEY.
func (r *Repo) DropPersistedCredentials(ctx context.Context) ([]string, error) {
	var removed []string
	own := filepath.Join(r.CommonDir, "config")
	seen := map[string]bool{}
	for _, cfg := range ConfigFiles(r) {
		prefix := cfg + ":"
		if cfg == own {
			prefix = ""
		}
		headers, included := credentialKeys(ctx, r, cfg)
		more, err := unsetKeys(ctx, r, cfg, prefix, headers)
		removed = append(removed, more...)
		if err != nil {
			return removed, err
		}
		for _, file := range included {
			if seen[file] {
				continue
			}
			seen[file] = true
			more, err := dropExtraHeaders(ctx, r, file, file+":")
			removed = append(removed, more...)
			if err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}

// credentialKeys reads, with one git, a config file's http.*.extraheader
// keys and the regular files it includes by an absolute path
// (include.path, includeIf.*.path), from that file alone, includes
// unfollowed.
func credentialKeys(ctx context.Context, r *Repo, cfg string) (headers, included []string) {
	// -z: a gitdir pattern in a key may hold spaces.
	out, err := r.Git(ctx, "", "config", "--file", cfg, "-z", "--get-regexp", `^(include(if\..*)?\.path|http\..*extraheader)$`)
	if err != nil {
		return nil, nil // exit status 1: no such key
	}
	for _, entry := range strings.Split(out, "\x00") {
		key, file, ok := strings.Cut(entry, "\n")
		switch {
		case strings.HasPrefix(key, "http."):
			headers = append(headers, key)
		case !ok || !filepath.IsAbs(file):
			// relative and ~ paths are not what checkout writes
		case isInclude(key):
			if fi, err := os.Lstat(file); err == nil && fi.Mode().IsRegular() {
				included = append(included, file) // not one gone already, nor a link planex would edit through
			}
		}
	}
	return headers, included
}

// dropExtraHeaders unsets every http.*.extraheader key of one config
// file, returning the keys removed, each with prefix.
func dropExtraHeaders(ctx context.Context, r *Repo, file, prefix string) ([]string, error) {
	out, err := r.Git(ctx, "", "config", "--file="+file, "--name-only", "--get-regexp", `^http\..*extraheader$`)
	if err != nil {
		// Exit status 1 means "no such key".
		return nil, nil
	}
	return unsetKeys(ctx, r, file, prefix, strings.Fields(out))
}

// unsetKeys removes every value of keys from one config file, returning
// the keys removed, each with prefix. A key listed again (it had several
// values) is removed once: a second --unset-all would find nothing and
// fail.
func unsetKeys(ctx context.Context, r *Repo, file, prefix string, keys []string) ([]string, error) {
	var removed []string
	for i, key := range keys {
		if slices.Contains(keys[:i], key) {
			continue
		}
		if _, err := r.Git(ctx, "", "config", "--file="+file, "--unset-all", key); err != nil {
			return removed, fmt.Errorf("removing %s from %s: %w", key, file, err)
		}
		removed = append(removed, prefix+key)
	}
	return removed, nil
}

// uploadPack names the program git starts on a local or ssh remote,
// overriding remote.<name>.uploadpack from the repository's config.
const uploadPack = "--upload-pack=git-upload-pack"

// remoteURL is where a remote pointed when the repository was opened:
// its first url and pushurl, and any further values (git pushes to
// every pushurl; CheckRemote judges them all).
type remoteURL struct {
	fetch, push string
	more        []string
}

// readRemotes records the URL of every configured remote. planex talks to
// these, not to whatever remote.<name>.url says later: an agent that
// rewrote it to a repository of its own would have planex push there and
// run that repository's hooks, with planex's environment.
func readRemotes(ctx context.Context, dir string, gitEnv []string) map[string]remoteURL {
	out, err := run(ctx, call{dir: dir, env: gitEnv, args: []string{"config", "--get-regexp", `^remote\..*\.(url|pushurl)$`}})
	remotes := map[string]remoteURL{}
	if err != nil {
		return remotes // none configured
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		key, value, ok := strings.Cut(line, " ")
		if ok {
			addRemote(remotes, key, value)
		}
	}
	return remotes
}

// addRemote records a remote.<name>.url or .pushurl entry; the first
// value of each is the one planex uses, later ones are kept apart.
func addRemote(remotes map[string]remoteURL, key, value string) {
	if !strings.HasPrefix(key, "remote.") {
		return
	}
	dot := strings.LastIndex(key, ".")
	name, field := key[len("remote."):dot], key[dot+1:]
	u := remotes[name]
	switch {
	case field == "url" && u.fetch == "":
		u.fetch = value
	case field == "pushurl" && u.push == "":
		u.push = value
	case field == "url" || field == "pushurl":
		u.more = append(u.more, value)
	}
	remotes[name] = u
}

// remoteGit runs `git <args> <remote> <refs>` against remote (a name or a
// URL). A remote known since Open is addressed by its URL from then; a
// rewrite (insteadOf) of that URL is refused but to the same repository
// over the network (refuseRewrite).
func (r *Repo) remoteGit(ctx context.Context, remote string, push bool, args []string, refs ...string) (string, error) {
	if err := refuseRewrite(ctx, r, remote, push); err != nil {
		return "", err
	}
	return run(ctx, trustedRemoteCall(r, remote, push, args, refs...))
}

// remoteCall is the call remoteGit runs.
func remoteCall(r *Repo, remote string, push bool, args []string, refs ...string) call {
	target, cfg := remoteTarget(r, remote, push), r.config
	// The protections refuse local repositories; a remote that is one
	// (its URL when planex opened the repository, or a path planex was
	// given) is reached with the upload or receive program planex names.
	// One that was not local stays refused a local path it could be
	// redirected to (insteadOf).
	if localURL(target) {
		cfg = append(append([]setting{}, cfg...), setting{"protocol.file.allow", "always"})
	}
	args = append(append(args[:len(args):len(args)], target), refs...)
	env := append(r.gitEnv(r.Root), r.env...)
	return call{dir: r.Root, env: env, config: cfg, args: args, scans: r.scans, terminal: !localURL(target)}
}

// remoteTarget is the URL planex names for remote: the one it had when
// the repository was opened, or remote itself (a URL or path).
func remoteTarget(r *Repo, remote string, push bool) string {
	target := remote
	u, ok := r.remotes[remote]
	switch {
	case ok && push && u.push != "":
		// One URL: git given the name pushes to every pushurl.
		target = u.push
	case ok && u.fetch != "":
		target = u.fetch
	}
	return target
}

func localURL(u string) bool {
	return strings.HasPrefix(u, "file://") || strings.HasPrefix(u, "/") || strings.HasPrefix(u, ".") ||
		!strings.Contains(u, ":")
}

// ErrNotObjectID is returned for a commit named by anything but a full
// object id where planex hands it to git.
var ErrNotObjectID = errors.New("not a full object id")

// ErrProtectedRef is returned for a push planex must never make.
var ErrProtectedRef = errors.New("refusing to push")

// PushRef pushes a local ref to the same name on remote. Only planex's own
// refs may be pushed (branches under planex/ and refs/planex/); expected,
// when set, is the value the remote ref must have (a lease; "" for "must
// not exist"), otherwise the push must fast-forward.
func (r *Repo) PushRef(ctx context.Context, remote, ref string, lease bool, expected string) error {
	if err := ownRef(ref); err != nil {
		return err
	}
	// git pushes what a symbolic ref names: a branch of the user's never
	// published went out under planex's name.
	if err := refuseSymbolicRef(ctx, r, ref); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	// The remote's own receivepack setting cannot be overridden by config
	// (git takes the first one), only by the option.
	args := []string{"push", "--porcelain", "--no-verify", "--receive-pack=git-receive-pack"}
	args = append(args, decoyLeases(ref)...)
	if lease {
		args = append(args, "--force-with-lease="+ref+":"+expected)
	}
	out, err := r.remoteGit(ctx, remote, true, args, ref+":"+ref)
	if err != nil {
		if pe := pushedWhereAsked(out, []string{ref}); pe != nil {
			return pe
		}
		if we := workflowRefusal(ref, out+"\n"+err.Error()); we != nil {
			return we
		}
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return pushedWhereAsked(out, []string{ref})
}

// ErrPushedElsewhere is returned when git pushed a ref to a remote ref of
// another name.
var ErrPushedElsewhere = errors.New("the push went to another ref")

// pushedWhereAsked checks git push --porcelain's report: each updated
// remote ref must be one of refs. git guesses a destination's name as it
// does a name a person typed: where refs/planex/state/7 is missing on the
// remote and someone pushed a branch named refs/planex/state/7
// (refs/heads/refs/planex/state/7), planex's push updated that branch,
// reported success, and the state was never saved.
//
// decoyLeases makes git refuse such a push before it moves anything; a
// refusal is reported here the same way, saying nothing moved.
func pushedWhereAsked(out string, refs []string) error {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			continue
		}
		_, to, ok := strings.Cut(f[1], ":")
		if !ok || slices.Contains(refs, to) {
			continue
		}
		what := "git pushed to"
		if strings.HasPrefix(f[0], "!") {
			what = "nothing was pushed: git would have pushed to"
		}
		return fmt.Errorf("pushing %s: %s %s, a ref someone else made with a name git reads as planex's (remove it): %w", f[1], what, abbrev.Truncate(to, 200), ErrPushedElsewhere)
	}
	return nil
}

// decoyLeases are leases that each remote ref git could take for ref,
// when the ref of exactly that name is missing, must not exist. git push
// matches a destination as it does a name a person typed (R, refs/R,
// refs/tags/R, refs/heads/R, refs/remotes/R, refs/remotes/R/HEAD) and
// applies the first lease whose name matches the ref it chose: these come
// first, name only the decoys (none of them matches R itself), so a push
// that would land on a decoy is refused as stale before anything moves,
// and a push to R is leased or fast-forwarded as before.
func decoyLeases(ref string) []string {
	var out []string
	for _, d := range []string{"refs/" + ref, "refs/tags/" + ref, "refs/heads/" + ref, "refs/remotes/" + ref, "refs/remotes/" + ref + "/HEAD"} {
		out = append(out, "--force-with-lease="+d+":")
	}
	return out
}

// ownRef refuses a ref planex must never push.
func ownRef(ref string) error {
	if !strings.HasPrefix(ref, "refs/heads/planex/") && !strings.HasPrefix(ref, "refs/planex/") {
		return fmt.Errorf("%w %s: planex only pushes its own refs (refs/heads/planex/*, refs/planex/*)", ErrProtectedRef, ref)
	}
	return nil
}

// RefPush is one ref of PushRefs; Lease and Expected are PushRef's.
type RefPush struct {
	Ref      string
	Lease    bool
	Expected string
}

// PushRefs pushes local refs to the same names on remote with one atomic
// push (git push --atomic): all of them move, or none does. Each is
// checked and leased as PushRef does; one without a lease must
// fast-forward. A remote that cannot push atomically refuses the push.
func (r *Repo) PushRefs(ctx context.Context, remote string, refs []RefPush) error {
	args := []string{"push", "--porcelain", "--no-verify", "--atomic", "--receive-pack=git-receive-pack"}
	var specs, names []string
	for _, p := range refs {
		if err := ownRef(p.Ref); err != nil {
			return err
		}
		if err := refuseSymbolicRef(ctx, r, p.Ref); err != nil {
			return fmt.Errorf("pushing %s: %w", p.Ref, err)
		}
		args = append(args, decoyLeases(p.Ref)...)
	}
	for _, p := range refs {
		if p.Lease {
			args = append(args, "--force-with-lease="+p.Ref+":"+p.Expected)
		}
		specs, names = append(specs, p.Ref+":"+p.Ref), append(names, p.Ref)
	}
	if len(specs) == 0 {
		return nil
	}
	out, err := r.remoteGit(ctx, remote, true, args, specs...)
	if err != nil {
		if pe := pushedWhereAsked(out, names); pe != nil {
			return pe
		}
		return fmt.Errorf("pushing %s: %w", strings.Join(names, ", "), err)
	}
	return pushedWhereAsked(out, names)
}

// FetchRef fetches a remote ref into the same local name, overwriting the
// local one. It reports false when the remote has no such ref.
//
// It lists the remote first and fetches the object the ref of exactly
// that name points at. git fetch reads a refspec's source as git reads a
// name typed by a person: when refs/planex/state/7 is missing it takes
// refs/heads/refs/planex/state/7 (a branch anyone who can push may make),
// refs/tags/… or refs/remotes/… instead, so fetching by name first wrote
// a decoy branch's commit into the state ref. A ref the remote holds
// costs two connections, a missing one only the listing.
func (r *Repo) FetchRef(ctx context.Context, remote, ref string) (bool, error) {
	sha, err := FetchRefTip(ctx, r, remote, ref)
	return sha != "", err
}

// FetchRefTip is r.FetchRef returning the commit fetched, the one the
// listing named ("" when the remote has no such ref): a caller that needs
// the remote ref's commit and its objects reads both from one listing.
func FetchRefTip(ctx context.Context, r *Repo, remote, ref string) (string, error) {
	sha, err := r.RemoteRef(ctx, remote, ref)
	if err != nil {
		return "", err
	}
	return FetchListed(ctx, r, remote, ref, sha)
}

// FetchListed is FetchRefTip when the caller has listed the remote
// already (ListRemoteRefs, with ref among the names or patterns it
// asked for): sha is what that listing named for ref, "" when it named
// nothing. One listing serves every ref a job reads at its start.
func FetchListed(ctx context.Context, r *Repo, remote, ref, sha string) (string, error) {
	if sha == "" {
		return "", nil
	}
	if !r.format.IsID(sha) {
		return "", fmt.Errorf("fetching %s: the remote lists %q: %w", ref, abbrev.Truncate(sha, 80), ErrNotObjectID)
	}
	// A fetch into a ref writes through a symbolic one (refs/planex/state/7
	// made to name refs/heads/main moved main): such a ref is refused.
	if err := refuseSymbolicRef(ctx, r, ref); err != nil {
		return "", fmt.Errorf("fetching %s: %w", ref, err)
	}
	// A branch that is checked out cannot be fetched into; planex's are not.
	if _, err := r.remoteGit(ctx, remote, false, []string{"fetch", "--no-tags", "--quiet", uploadPack}, "+"+sha+":"+ref); err != nil {
		return "", fmt.Errorf("fetching %s: %w", ref, err)
	}
	return sha, nil
}

// RemoteRef returns the commit a remote ref points at ("" when absent):
// the ref of exactly that name. git ls-remote matches a pattern against
// the tail of each name, so refs/heads/main also lists a branch someone
// pushed as a/refs/heads/main, which sorts first; taking git's first line
// took that branch's commit for main's.
func (r *Repo) RemoteRef(ctx context.Context, remote, ref string) (string, error) {
	refs, err := r.ListRemoteRefs(ctx, remote, ref)
	if err != nil {
		return "", err
	}
	return refs[ref], nil
}

// ListRemoteRefs lists remote refs matching any of the patterns (at
// least one), as name → commit: a name equal to a pattern or, for a
// pattern ending in "/*", any name under the folder before it. Names git
// lists only because their tail matches (refs/heads/x/refs/planex/… for
// refs/planex/*) are left out. Several patterns are listed by one
// connection, at one moment.
//
// The listing is read up to maxRefListing: whoever can push decides how
// many refs match (a million branches under planex/, or ending in
// /refs/heads/main), and git's whole answer was held.
func (r *Repo) ListRemoteRefs(ctx context.Context, remote string, patterns ...string) (map[string]string, error) {
	what := strings.Join(patterns, " ")
	if len(patterns) == 0 {
		return nil, fmt.Errorf("listing refs on %s: no pattern given", remote)
	}
	if err := refuseRewrite(ctx, r, remote, false); err != nil {
		return nil, fmt.Errorf("listing %s: %w", what, err)
	}
	c := trustedRemoteCall(r, remote, false, []string{"ls-remote", uploadPack}, patterns...)
	out, cut, err := runCapped(ctx, c, maxRefListing)
	if err != nil {
		return nil, fmt.Errorf("listing %s on %s: %w", what, remote, err)
	}
	if cut {
		return nil, fmt.Errorf("listing %s on %s: more than %d MiB of refs: %w", what, remote, maxRefListing>>20, ErrTooManyRefs)
	}
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && slices.ContainsFunc(patterns, func(p string) bool { return refMatches(p, f[1]) }) {
			refs[f[1]] = f[0]
		}
	}
	return refs, nil
}

// maxRefListing bounds the answer of one git ls-remote planex reads.
const maxRefListing = 16 << 20

// ErrTooManyRefs is returned when a remote lists more refs matching a
// pattern than planex reads (maxRefListing).
var ErrTooManyRefs = errors.New("the remote lists too many refs")

// refMatches says whether name is pattern or, for a pattern ending in
// "/*", lies under the folder before it; matched from the start of the
// name, never its tail.
func refMatches(pattern, name string) bool {
	if dir, ok := strings.CutSuffix(pattern, "*"); ok && strings.HasSuffix(dir, "/") {
		return strings.HasPrefix(name, dir) && len(name) > len(dir)
	}
	return name == pattern
}

// EnsureCommit makes sure a commit is present locally, fetching it from
// remote if a shallow checkout lacks it. sha must be a full object id:
// it may come from a record whoever can push wrote (a state ref's base),
// and git fetch takes an option after the remote, so a base of
// "--upload-pack=<command>" ran that command (over a file or ssh
// remote), and a short id names whichever object has that prefix.
func (r *Repo) EnsureCommit(ctx context.Context, remote, sha string) error {
	if !r.format.IsID(sha) {
		return fmt.Errorf("fetching commit %q: %w (this repository's are %d hex digits)", abbrev.Truncate(sha, 80), ErrNotObjectID, r.format.HexLen())
	}
	if _, err := r.Git(ctx, "", "cat-file", "-e", sha+"^{commit}"); err == nil {
		return nil
	}
	if _, err := r.remoteGit(ctx, remote, false, []string{"fetch", "--no-tags", "--quiet", uploadPack}, sha); err != nil {
		return fmt.Errorf("fetching commit %s: %w", abbrev.SHA(sha), err)
	}
	return nil
}

// ChangedPaths lists the paths that differ between two commits.
func (r *Repo) ChangedPaths(ctx context.Context, from, to string) ([]string, error) {
	changes, err := r.DiffTrees(ctx, from, to)
	if err != nil {
		return nil, err
	}
	return Paths(changes), nil
}

// StateRef keeps the files of a folder as commits on one ref: how planex
// keeps session state in git.
type StateRef struct {
	repo *Repo
	Ref  string
}

// StateAt is the state kept on ref in r.
func StateAt(r *Repo, ref string) StateRef { return StateRef{repo: r, Ref: ref} }

// Saved is a commit a StateRef made or started from, with its tree.
type Saved struct {
	Commit string // "" for none
	Tree   string // "" when not known: SaveOn reads it
}

// SaveOn records the files of dir (recursively) as a commit on top of
// parent (none when parent.Commit is "") and points the ref there,
// whatever it held: the caller keeps the tip it builds on (a state ref is
// pushed with a lease on that tip, which is what guards it), so the ref is
// neither read nor compared, and git runs once (fast-import, statesave.go).
// When nothing changed, the ref is pointed at parent, which is returned.
// dir holds folders and regular files only (ErrStateNotFiles otherwise).
func (s StateRef) SaveOn(ctx context.Context, parent Saved, dir, message string) (Saved, error) {
	return s.saveByImport(ctx, parent, dir, message)
}

// Read returns the ref's commit and its tree, read by one git.
func (s StateRef) Read(ctx context.Context) (Saved, error) {
	if s.Ref == "" || strings.HasPrefix(s.Ref, "-") {
		return Saved{}, fmt.Errorf("reading %q: not a ref", s.Ref)
	}
	out, err := s.repo.Git(ctx, "", "rev-parse", s.Ref+"^{commit}", s.Ref+"^{tree}")
	if err != nil {
		return Saved{}, fmt.Errorf("reading %s: %w", s.Ref, err)
	}
	f := strings.Fields(out)
	if len(f) != 2 || !s.repo.format.IsID(f[0]) || !s.repo.format.IsID(f[1]) {
		return Saved{}, fmt.Errorf("reading %s: git rev-parse said %q", s.Ref, strings.TrimSpace(out))
	}
	return Saved{Commit: f[0], Tree: f[1]}, nil
}

// ErrStateNotFiles is returned by RestoreDir for a state whose tree holds
// something other than folders and regular files.
var ErrStateNotFiles = errors.New("a state holds only folders and regular files")

// ErrStateTooLarge is returned by RestoreDir for a state whose tree holds
// a file larger than MaxStateFileBytes, more than MaxStateBytes in all or
// more than MaxStateEntries files.
var ErrStateTooLarge = errors.New("a state is larger than planex writes")

// The bounds of what RestoreDir writes out. A session folder holds a few
// files planex reads whole up to 64 MiB each (session.MaxStateFile).
const (
	MaxStateFileBytes = 64 << 20
	MaxStateBytes     = 256 << 20
	MaxStateEntries   = 1024
)

// RestoreDir writes the files recorded at ref into dir, replacing files of
// the same name. ref is state anyone who can push may have written, so its
// tree is listed first and refused, before anything is written, when it
// holds a symlink or a gitlink (ErrStateNotFiles: a link restored into a
// session folder would lead planex's reads and appends there to any file
// of the runner), or a file, a total or a number of files beyond the
// bounds above (ErrStateTooLarge: a gigabyte blob was written out whole),
// naming the file and the ref.
func (r *Repo) RestoreDir(ctx context.Context, ref, dir string) error {
	t, err := ListState(ctx, r, ref)
	if err != nil {
		return err
	}
	return t.Restore(ctx, r, dir)
}

// StateTree is the files of a state commit, listed once (bounded) so a
// caller can read one of them (its record) and restore them all without
// listing the tree again.
type StateTree struct {
	// Ref is what was listed (a ref or commit).
	Ref string
	// Files are the regular files listed, by path from the tree's top;
	// only the first MaxStateEntries, and none past an entry that made
	// the listing refused.
	Files map[string]TreeFile
	// refusal is why Restore refuses the tree (ErrStateNotFiles,
	// ErrStateTooLarge), nil when it may be restored.
	refusal error
}

// Refusal is why the tree may not be restored (RestoreDir's rules), nil
// when it may.
func (t *StateTree) Refusal() error { return t.refusal }

// Restore is RestoreDir for a tree already listed: it refuses what
// RestoreDir refuses, and otherwise writes the tree's files into dir,
// their contents read by one `git cat-file --batch` of r (which shares
// the objects of the repository that listed it; statesave.go).
func (t *StateTree) Restore(ctx context.Context, r *Repo, dir string) error {
	if t.refusal != nil {
		return t.refusal
	}
	return restoreFiles(ctx, r, t.Ref, t.Files, dir)
}

// ListState lists the tree at ref of r with one bounded git, and records
// whether it holds anything but regular files (and the folders they are
// in), or more than RestoreDir's bounds, naming the first such entry.
// Only a failure to list is an error here; a refused tree is returned
// with its Refusal.
func ListState(ctx context.Context, r *Repo, ref string) (*StateTree, error) {
	out, cut, err := runCapped(ctx, call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, scans: r.scans,
		args: []string{"ls-tree", "-r", "-z", "-l", "--full-tree", ref + "^{tree}"}}, MaxStateEntries*(4096+128))
	if err != nil {
		return nil, fmt.Errorf("reading state %s: %w", ref, err)
	}
	t := &StateTree{Ref: ref, Files: map[string]TreeFile{}}
	if cut {
		t.refusal = fmt.Errorf("restoring state %s: it lists more files than the %d planex restores: %w", ref, MaxStateEntries, ErrStateTooLarge)
	}
	var total int64
	for _, rec := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f, err := stateEntry(ref, meta, p)
		if err == nil && len(t.Files) >= MaxStateEntries {
			err = fmt.Errorf("restoring state %s: it holds more files than the %d planex restores: %w", ref, MaxStateEntries, ErrStateTooLarge)
		}
		if err == nil && f.Size > MaxStateFileBytes {
			err = fmt.Errorf("restoring state %s: %q holds %d bytes, more than %d: %w", ref, p, f.Size, MaxStateFileBytes, ErrStateTooLarge)
		}
		if total += f.Size; err == nil && total > MaxStateBytes {
			err = fmt.Errorf("restoring state %s: its files hold more than %d bytes in all (at %q): %w", ref, MaxStateBytes, p, ErrStateTooLarge)
		}
		if err != nil {
			if t.refusal == nil {
				t.refusal = err
			}
			break
		}
		t.Files[p] = f
	}
	return t, nil
}

// stateEntry parses one `ls-tree -l` entry of a state tree, refusing
// anything but a regular file.
func stateEntry(ref, meta, p string) (TreeFile, error) {
	f := strings.Fields(meta)
	if len(f) != 4 || (f[0] != "100644" && f[0] != "100755") {
		mode, _, _ := strings.Cut(meta, " ")
		return TreeFile{}, fmt.Errorf("restoring state %s: %q has mode %s: %w", ref, p, mode, ErrStateNotFiles)
	}
	size, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return TreeFile{}, fmt.Errorf("restoring state %s: %q: git ls-tree said size %q", ref, p, f[3])
	}
	return TreeFile{Mode: f[0], Type: f[1], Object: f[2], Size: size}, nil
}
