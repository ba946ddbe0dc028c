package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
)

// Plumbing for recreating local commits elsewhere (commit-signing: api).

// BlobSize returns the size in bytes of a blob.
func (r *Repo) BlobSize(ctx context.Context, sha string) (int64, error) {
	out, err := r.Git(ctx, "", "cat-file", "-s", sha)
	if err != nil {
		return 0, fmt.Errorf("reading the size of blob %s: %w", sha, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading the size of blob %s: %w", sha, err)
	}
	return n, nil
}

// CommitMessage returns a commit's message exactly as recorded. A commit
// anyone can push (a matrix task's result) may carry a message of any
// length: one longer than maxMessage (with its headers) is refused with
// ErrLongMessage, git stopped there.
//
// sha must be a commit's full object id (ErrNotObjectID, ErrNotCommit):
// git reads a name (a branch, a tag, `HEAD~1`, one of a decoy ref named
// like an id) or an annotated tag's id as whatever it leads to, so the
// message of another commit was read in place of the one asked for.
func (r *Repo) CommitMessage(ctx context.Context, sha string) (string, error) {
	out, cut, err := readCommit(ctx, r, sha, maxMessage+maxHeaders)
	if err != nil {
		return "", fmt.Errorf("reading commit %s: %w", abbrev.Truncate(sha, 80), err)
	}
	if cut {
		return "", fmt.Errorf("reading commit %s: more than %d MiB: %w", sha, maxMessage>>20, ErrLongMessage)
	}
	// The headers end at the first empty line.
	_, msg, ok := strings.Cut(out, "\n\n")
	if !ok {
		return "", nil
	}
	return msg, nil
}

// readCommit returns the raw content of the commit whose full object id
// is sha, up to max bytes (cut says it was longer). `git cat-file
// --batch` reports the object's own type, where `cat-file commit` takes a
// tag's id for the commit it tags.
func readCommit(ctx context.Context, r *Repo, sha string, max int) (content string, cut bool, err error) {
	if !r.format.IsID(sha) {
		return "", false, ErrNotObjectID
	}
	c := call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, scans: r.scans,
		args: []string{"cat-file", "--batch"}, stdin: []byte(sha + "\n")}
	out, cut, err := runCapped(ctx, c, max+len(sha)+64)
	if err != nil {
		return "", false, err
	}
	head, body, _ := strings.Cut(out, "\n")
	f := strings.Fields(head)
	switch {
	case len(f) == 3 && f[1] == "commit" && strings.EqualFold(f[0], sha):
	case len(f) == 2 && f[1] == "missing":
		return "", false, fmt.Errorf("no object %s here", sha)
	default:
		return "", false, ErrNotCommit
	}
	if !cut {
		n, err := strconv.Atoi(f[2])
		if err != nil || n > len(body) {
			return "", false, fmt.Errorf("reading commit %s: a short answer from git", sha)
		}
		body = body[:n]
	}
	return body, cut, nil
}

// maxHeaders is room for a commit's headers beside its message (a
// signature takes a few kilobytes).
const maxHeaders = 64 << 10

// IsAncestor reports whether commit a is b or one of its ancestors. Both
// must be commits' full object ids: a name (a branch, `HEAD~1`, an
// option) or a tag's id is never an ancestor of anything here, where git
// would have read it as whatever it leads to.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) bool {
	if !r.format.IsID(a) || !r.format.IsID(b) {
		return false
	}
	c := call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, scans: r.scans,
		args: []string{"cat-file", "--batch-check=%(objecttype)"}, stdin: []byte(a + "\n" + b + "\n")}
	out, _, err := runCapped(ctx, c, 256)
	if err != nil || out != "commit\ncommit\n" {
		return false
	}
	_, err = r.Git(ctx, "", "merge-base", "--is-ancestor", "--end-of-options", a, b)
	return err == nil
}

// RemoteURL is where remote name pointed when the repository was opened
// ("" when there was no such remote).
func (r *Repo) RemoteURL(name string) string {
	return r.remotes[name].fetch
}

// Parents returns a commit's parents. A commit anyone can push (a
// matrix task's result) may list any number: past maxParents the answer
// is ErrTooManyParents, git stopped there.
//
// sha must be a full object id: a matrix task's result names its commit
// in a message whoever can push wrote, and a name or an expression there
// (HEAD, a branch, <base>^{/text}) was resolved by git, checked against
// the wave's base, and offered to the publisher as though it were the
// commit itself.
//
// The id must be a commit's: git reads an annotated tag's id as the
// commit it tags, so a result naming a tag of a commit on the base passed
// the check and the tag's id was offered as the commit (ErrNotCommit).
func (r *Repo) Parents(ctx context.Context, sha string) ([]string, error) {
	if !r.format.IsID(sha) {
		return nil, fmt.Errorf("reading the parents of %q: %w", abbrev.Truncate(sha, 80), ErrNotObjectID)
	}
	// rev-list prints the commit it reached, then its parents: a tag's id
	// comes back as its commit's, which is how one is told apart.
	c := call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, scans: r.scans,
		args: []string{"rev-list", "--no-walk", "--parents", "--max-count=1", sha}}
	// Each id is at most 64 hex digits and a space or a break.
	out, cut, err := runCapped(ctx, c, (maxParents+1)*65)
	if err != nil {
		return nil, fmt.Errorf("reading the parents of %s: %w", sha, err)
	}
	ids := strings.Fields(out)
	if cut || len(ids) > maxParents+1 {
		return nil, fmt.Errorf("reading the parents of %s: more than %d: %w", sha, maxParents, ErrTooManyParents)
	}
	if len(ids) == 0 || !strings.EqualFold(ids[0], sha) {
		return nil, fmt.Errorf("reading the parents of %s: %w", sha, ErrNotCommit)
	}
	return ids[1:], nil
}

// ErrNotCommit is returned for an object id that is not a commit's (an
// annotated tag's, which git would read as the commit it tags).
var ErrNotCommit = errors.New("not a commit")

// maxParents bounds the parents Parents reads of one commit (an octopus
// merge of the Linux kernel has 66).
const maxParents = 256

// ErrTooManyParents refuses a commit listing more parents than planex
// reads.
var ErrTooManyParents = errors.New("commit has too many parents")

// TreeFile is one entry of a commit's tree.
type TreeFile struct {
	Mode   string // "100644", "120000" (a symbolic link), "160000" …
	Type   string // "blob", "tree" or "commit"
	Object string // the object's id
	Size   int64  // a blob's size in bytes; -1 for other types
}

// FilesAt returns the entries at paths of commit's tree, read by one git
// (one more for each path that is a folder of another path asked for:
// git lists what is inside such a folder, not its own entry); a path the
// tree does not hold has none.
func (r *Repo) FilesAt(ctx context.Context, commit string, paths []string) (map[string]TreeFile, error) {
	files := map[string]TreeFile{}
	var together []string
	for _, p := range paths {
		if !holdsAnother(p, paths) {
			together = append(together, p)
		} else if err := listTree(ctx, r, commit, []string{p}, true, files); err != nil {
			return nil, err
		}
	}
	if len(together) > 0 {
		if err := listTree(ctx, r, commit, together, true, files); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// holdsAnother says whether another of paths lies inside folder p.
func holdsAnother(p string, paths []string) bool {
	for _, q := range paths {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

// listTree adds the entries at paths of commit's tree to files. git
// lists a folder asked for beside a path inside it by its content, of any
// size in a tree anyone can push: the listing is read as it comes and
// only the entries asked for are kept. With sizes false the entries' Size
// is -1 and git reads no object but the trees: for each blob it lists
// with its size, git opens the blob, and a pushed folder of 300,000
// entries cost 300,000 object reads (3.7 s of CPU, loose) for the two
// entries kept.
func listTree(ctx context.Context, r *Repo, commit string, paths []string, sizes bool, files map[string]TreeFile) error {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	args, columns := []string{"ls-tree", "-z", "-l", commit, "--"}, 4
	if !sizes {
		args, columns = []string{"ls-tree", "-z", commit, "--"}, 3
	}
	err := streamRecords(ctx, r, "", nil, append(args, paths...), func(rec []byte) error {
		meta, name, found := bytes.Cut(rec, []byte("\t"))
		if !found || !want[string(name)] {
			return nil
		}
		fields := strings.Fields(string(meta))
		if len(fields) != columns {
			return nil
		}
		size := int64(-1) // "-" or not asked for: not a blob, or not read
		if sizes {
			if n, err := strconv.ParseInt(fields[3], 10, 64); err == nil {
				size = n
			}
		}
		files[string(name)] = TreeFile{Mode: fields[0], Type: fields[1], Object: fields[2], Size: size}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing %s at %s: %w", strings.Join(paths, ", "), commit, err)
	}
	return nil
}

// ReadBlobPrefix returns at most the first n bytes of a blob, reading no
// more than that however large the blob is.
func (r *Repo) ReadBlobPrefix(ctx context.Context, sha string, n int64) ([]byte, error) {
	if !r.format.IsID(sha) {
		return nil, fmt.Errorf("reading blob %q: not an object id (this repository's are %d hex digits)", sha, r.format.HexLen())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := append(r.gitEnv(r.Root), r.env...)
	cmd, done, err := command(ctx, call{dir: r.Root, env: env, config: r.config, args: []string{"cat-file", "blob", sha}, scans: r.scans})
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", sha, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", sha, err)
	}
	data, rerr := io.ReadAll(io.LimitReader(out, n))
	full := int64(len(data)) == n
	if full {
		// The rest is not wanted: stop git rather than read it.
		cancel()
	}
	werr := cmd.Wait()
	if rerr != nil {
		return nil, fmt.Errorf("reading blob %s: %w", sha, rerr)
	}
	if !full && werr != nil {
		return nil, fmt.Errorf("reading blob %s: %w", sha, werr)
	}
	return data, nil
}

// ErrOptionRevision is returned for a revision that git would read as an
// option: one starting with "-".
var ErrOptionRevision = errors.New("a revision may not start with \"-\"")

// revisions refuses a revision git would take for an option. git reads
// options after the revisions too: a base a forged record gave as
// "--output=<file>" made git diff-tree write that file.
func revisions(revs ...string) error {
	for _, rev := range revs {
		if strings.HasPrefix(rev, "-") {
			return fmt.Errorf("%q: %w", abbrev.Truncate(rev, 80), ErrOptionRevision)
		}
	}
	return nil
}
