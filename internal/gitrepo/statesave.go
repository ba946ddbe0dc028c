package gitrepo

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/safefile"
)

// A state save (SaveOn) is one `git fast-import`: planex writes the
// folder's files, the commit and the ref in one stream, and asks in the
// same stream for the new commit's id, its tree and, when the caller
// does not know it, the parent's tree. Before, a save was four git
// processes (add to a scratch index, write-tree, commit-tree,
// update-ref), and the Action saves its state at every step.

// stateFile is one regular file of a state folder, as the stream names
// it.
type stateFile struct {
	rel  string // slash-separated, from the folder's top
	abs  string
	mode string // "100644" or "100755", as git add records it
	size int64  // when listed
}

// ErrStateRefName is returned for a state ref whose name could not be
// written into a fast-import stream unchanged (white space, control
// characters, a leading dash, or not under refs/).
var ErrStateRefName = errors.New("not a state ref name")

// validStateRef reports whether ref can be named in a fast-import
// stream: under refs/, none of the bytes git refuses in a ref name, no
// space or control character that would end the command early.
func validStateRef(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.HasSuffix(ref, "/") || strings.Contains(ref, "..") {
		return false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if c <= ' ' || c == 0x7f || strings.IndexByte("~^:?*[\\", c) >= 0 {
			return false
		}
	}
	return true
}

// stateFiles lists dir's regular files, skipping folders named .git as
// git add does. Anything else (a link, a FIFO, a device) is refused with
// ErrStateNotFiles naming it: a state holds folders and regular files
// only, and RestoreDir would refuse the state later.
func stateFiles(dir string) ([]stateFile, error) {
	var files []stateFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" && path != dir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is a %v: %w", path, d.Type(), ErrStateNotFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		mode := "100644"
		if info.Mode().Perm()&0o111 != 0 {
			mode = "100755"
		}
		files = append(files, stateFile{rel: filepath.ToSlash(rel), abs: path, mode: mode, size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing state folder %s: %w", dir, err)
	}
	if err := withinRestoreBounds(files); err != nil {
		return nil, fmt.Errorf("saving state folder %s: %w", dir, err)
	}
	return files, nil
}

// withinRestoreBounds refuses files a restore would refuse (ListState's
// bounds) with ErrStateTooLarge: saved, such a state would be pushed and
// every later job would refuse it, where refusing the save keeps the
// state before it.
func withinRestoreBounds(files []stateFile) error {
	if len(files) > MaxStateEntries {
		return fmt.Errorf("more files than the %d a restore writes (count: %d): %w", MaxStateEntries, len(files), ErrStateTooLarge)
	}
	var total int64
	for _, f := range files {
		if f.size > MaxStateFileBytes {
			return fmt.Errorf("%s holds %d bytes, more than %d: %w", f.rel, f.size, MaxStateFileBytes, ErrStateTooLarge)
		}
		if total += f.size; total > MaxStateBytes {
			return fmt.Errorf("more than %d bytes in all (at %s): %w", MaxStateBytes, f.rel, ErrStateTooLarge)
		}
	}
	return nil
}

// quotePath writes p as a fast-import path in C-style quotes, every
// byte that could end or change the command (a quote, a backslash, a
// control character) escaped in octal.
func quotePath(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// identityPart is a committer name or email as fast-import takes it:
// no angle brackets or line breaks (git's own commits drop them too).
func identityPart(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r == '\n' || r == '\r' || r == 0 {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// committer is who git would name in a commit planex makes: the
// GIT_COMMITTER_* variables first, then the identity read when the
// repository was opened (config), then planex's. getenv reads the
// environment git is given (os.Getenv).
func committer(config []setting, getenv func(string) string) (name, email string) {
	pick := func(envName, key, fallback string) string {
		if v := identityPart(getenv(envName)); v != "" {
			return v
		}
		for _, s := range config {
			if s.key == key {
				if v := identityPart(s.value); v != "" {
					return v
				}
			}
		}
		return fallback
	}
	return pick("GIT_COMMITTER_NAME", "user.name", "planex"),
		pick("GIT_COMMITTER_EMAIL", "user.email", "planex@users.noreply.github.com")
}

// writeStateStream writes the fast-import stream of a state commit on
// ref: files under a fresh tree, on parent (none when ""), with the
// queries whose answers importAnswers reads. A file whose size changed
// since it was listed ends the stream with an error rather than a
// commit of part of it.
func writeStateStream(w io.Writer, dir, ref string, parent Saved, files []stateFile, name, email, message string, now time.Time) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("saving state folder %s: %w", dir, err)
	}
	defer root.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	if parent.Commit == "" {
		fmt.Fprintf(bw, "reset %s\n", ref)
	}
	fmt.Fprintf(bw, "commit %s\nmark :1\ncommitter %s <%s> %d +0000\ndata %d\n%s\n", ref, name, email, now.Unix(), len(message), message)
	if parent.Commit != "" {
		fmt.Fprintf(bw, "from %s\n", parent.Commit)
	}
	bw.WriteString("deleteall\n")
	for _, f := range files {
		if err := writeStateFile(bw, root, f); err != nil {
			return err
		}
	}
	bw.WriteString("\nls :1 \"\"\nget-mark :1\n")
	if parent.Commit != "" && parent.Tree == "" {
		fmt.Fprintf(bw, "ls %s \"\"\n", parent.Commit)
	}
	bw.WriteString("done\n")
	return bw.Flush()
}

// writeStateFile writes one file's command and its bytes, exactly as
// many as the size it had when opened. The file is opened beneath the
// state folder (root) by its path there, following no link as its last
// part and none out of the folder as another: a file, or a folder above
// it, swapped for a link since the listing is refused, not read into a
// state that is pushed.
func writeStateFile(w *bufio.Writer, root *os.Root, f stateFile) error {
	in, err := safefile.OpenBeneathNoFollow(root, f.rel)
	if err != nil {
		return fmt.Errorf("saving state file %s: %w", f.abs, err)
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return fmt.Errorf("saving state file %s: %w", f.abs, err)
	}
	fmt.Fprintf(w, "M %s inline %s\ndata %d\n", f.mode, quotePath(f.rel), info.Size())
	if _, err := io.CopyN(w, in, info.Size()); err != nil {
		return fmt.Errorf("saving state file %s: %w", f.abs, err)
	}
	_, err = w.WriteString("\n")
	return err
}

// dropCrashReports removes the fast_import_crash_<pid> reports a failed
// fast-import writes into its git directory (the per-worktree one) at
// every failure: each names the state's files and its commit, readable
// by every user of the runner, and nothing else ever removes them. Every
// report there goes (the Action's checkout runs no fast-import but
// planex's); one that cannot be removed is left, the save's own error
// being what the caller hears.
func dropCrashReports(dirs ...string) {
	for _, d := range dirs {
		found, _ := filepath.Glob(filepath.Join(d, "fast_import_crash_*"))
		for _, f := range found {
			_ = os.Remove(f)
		}
	}
}

// importAnswers reads fast-import's answers to the stream's queries:
// the new tree, the new commit and, when asked, the parent's tree.
func importAnswers(format ObjectFormat, out string, wantParentTree bool) (tree, commit, parentTree string, err error) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	want := 2
	if wantParentTree {
		want = 3
	}
	if len(lines) != want {
		return "", "", "", fmt.Errorf("git fast-import answered %q", out)
	}
	treeOf := func(line string) string {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "tree" || !format.IsID(f[2]) {
			return ""
		}
		return f[2]
	}
	tree, commit = treeOf(lines[0]), strings.TrimSpace(lines[1])
	if wantParentTree {
		parentTree = treeOf(lines[2])
	}
	if tree == "" || !format.IsID(commit) || (wantParentTree && parentTree == "") {
		return "", "", "", fmt.Errorf("git fast-import answered %q", out)
	}
	return tree, commit, parentTree, nil
}

// saveByImport is SaveOn: one fast-import writes the commit and points
// the ref at it whatever it held; an unchanged tree points the ref back
// at parent (a second git, only then).
func (s StateRef) saveByImport(ctx context.Context, parent Saved, dir, message string) (Saved, error) {
	r := s.repo
	if !validStateRef(s.Ref) {
		return Saved{}, fmt.Errorf("saving state to %q: %w", s.Ref, ErrStateRefName)
	}
	if parent.Commit != "" && !r.format.IsID(parent.Commit) {
		return Saved{}, fmt.Errorf("saving state on %q: %w", parent.Commit, ErrNotObjectID)
	}
	files, err := stateFiles(dir)
	if err != nil {
		return Saved{}, err
	}
	// fast-import writes through a symbolic ref and has no switch not to.
	if err := refuseSymbolicRef(ctx, r, s.Ref); err != nil {
		return Saved{}, fmt.Errorf("saving state: %w", err)
	}
	name, email := committer(r.config, os.Getenv)
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeStateStream(pw, dir, s.Ref, parent, files, name, email, message, time.Now()))
	}()
	env := append(r.gitEnv(r.Root), r.env...)
	out, err := run(ctx, call{dir: r.Root, env: env, config: r.config, input: pr, scans: r.scans,
		args: []string{"fast-import", "--quiet", "--done", "--force", "--date-format=raw"}})
	pr.CloseWithError(io.ErrClosedPipe) // the writer stops if git ended early
	if err != nil {
		dropCrashReports(r.gitDir, r.CommonDir)
		return Saved{}, fmt.Errorf("recording state on %s: %w", s.Ref, err)
	}
	tree, commit, parentTree, err := importAnswers(r.format, out, parent.Commit != "" && parent.Tree == "")
	if err != nil {
		return Saved{}, fmt.Errorf("recording state on %s: %w", s.Ref, err)
	}
	if parentTree != "" {
		parent.Tree = parentTree
	}
	if parent.Commit != "" && parent.Tree == tree { // nothing changed
		return parent, r.SetRef(ctx, s.Ref, parent.Commit)
	}
	return Saved{Commit: commit, Tree: tree}, nil
}

// A state is restored without an index: the files ListState listed are
// written from one `git cat-file --batch`, which runs no filter and reads
// no attributes (a read-tree into a scratch index and a checkout-index,
// two gits each scanning the config for drivers, before). The checks
// read-tree made on every path are made here: a path component that is
// empty, ".", ".." or .git in any case (a state anyone who can push may
// have written, with a tree naming ../../config) is refused.

// ErrStatePath is returned for a state naming a file outside its folder
// or inside a git directory.
var ErrStatePath = errors.New("a state names a path outside its folder")

// validStatePath reports whether p, a path in a state's tree, stays
// inside the folder it is restored into.
func validStatePath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || (filepath.Separator == '\\' && strings.ContainsRune(p, '\\')) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || namesGitDir(part) {
			return false
		}
	}
	return true
}

// namesGitDir reports whether a path component names a .git folder on
// some file system: in any case, with trailing dots or spaces (NTFS),
// as NTFS's short name GIT~1, or with code points HFS+ ignores.
func namesGitDir(part string) bool {
	part = strings.Map(func(r rune) rune {
		if hfsIgnored(r) {
			return -1
		}
		return r
	}, part)
	part = strings.TrimRight(part, ". ")
	return strings.EqualFold(part, ".git") || strings.EqualFold(part, "git~1")
}

// hfsIgnored reports whether HFS+ drops r when comparing names.
func hfsIgnored(r rune) bool {
	return (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x206a && r <= 0x206f) || r == 0xfeff
}

// restoreFiles writes files (path → listed blob) into dir, each through
// a temporary file renamed over its name, so a reader never sees part of
// one. Every folder and file is made beneath dir (os.Root): a folder of
// dir swapped for a link after it was made or checked leads no write out
// of dir.
func restoreFiles(ctx context.Context, r *Repo, ref string, files map[string]TreeFile, dir string) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		if !validStatePath(p) {
			return fmt.Errorf("restoring state %s: %q: %w", ref, p, ErrStatePath)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := realFolder(dir); err != nil {
		return fmt.Errorf("restoring state %s: %w", ref, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("restoring state %s: %w", ref, err)
	}
	defer root.Close()
	shas := make([]string, len(paths))
	for i, p := range paths {
		shas[i] = files[p].Object
	}
	next := 0
	err = r.StreamBlobs(ctx, shas, func(_ string, content io.Reader) error {
		p := paths[next]
		next++
		perm := os.FileMode(0o644)
		if files[p].Mode == "100755" {
			perm = 0o755
		}
		if err := folderInside(root, p); err != nil {
			return err
		}
		return writeRestored(root, p, content, files[p].Size, perm)
	})
	if err != nil {
		return fmt.Errorf("restoring state %s: %w", ref, err)
	}
	return nil
}

// realFolder refuses a path that is not a folder itself (a link to one,
// which planex's writes would follow out of the session folder).
func realFolder(p string) error {
	info, err := os.Lstat(p)
	if err != nil {
		return err
	}
	return isRealFolder(p, info)
}

func isRealFolder(p string, info os.FileInfo) error {
	if !info.IsDir() {
		return fmt.Errorf("%s is a %v, not a folder: %w", p, info.Mode().Type(), ErrStatePath)
	}
	return nil
}

// folderInside creates the folders of rel (slash-separated) beneath
// root one at a time, refusing one that is already there as a link or a
// file: the file is written where its name says, never through a link
// planted in the session folder.
func folderInside(root *os.Root, rel string) error {
	parts := strings.Split(rel, "/")
	at := ""
	for _, part := range parts[:len(parts)-1] {
		at = filepath.Join(at, part)
		err := root.Mkdir(at, 0o755)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating %s: %w", at, err)
		}
		info, err := root.Lstat(at)
		if err != nil {
			return err
		}
		if err := isRealFolder(at, info); err != nil {
			return err
		}
	}
	return nil
}

// writeRestored writes exactly size bytes of content to rel beneath root,
// through a temporary file beside it renamed over it: content that ends
// early leaves rel as it was. Both names are resolved beneath root, so a
// folder on the way swapped for a link out of it is refused, not
// written through.
func writeRestored(root *os.Root, rel string, content io.Reader, size int64, perm os.FileMode) error {
	name := filepath.FromSlash(rel)
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	err = fillRestored(f, content, size, perm)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	return nil
}

// fillRestored copies exactly size bytes of content into f, syncs it and
// gives it perm (by the open file, never by a name).
func fillRestored(f *os.File, content io.Reader, size int64, perm os.FileMode) error {
	if _, err := io.Copy(f, &exactReader{r: content, left: size}); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Chmod(perm)
}

// exactReader gives the first left bytes of r, and io.ErrUnexpectedEOF
// when r ends before them.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}
