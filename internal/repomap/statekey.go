package repomap

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	bin "encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/safefile"
)

// A work tree's state key is computed from stat data, as git status
// itself decides what changed, but without running git on most queries.
// The first key of a work tree (and any key after something that could
// change which files exist) lists the files with git and walks the
// directories git does not ignore; what it learned is saved as a
// stateRecord. Later keys only stat: the record still holds while the
// index file, every watched directory (an entry added, removed or renamed
// changes its directory's mtime) and every ignore rule source keep their
// stamps, and the key then hashes the stamp of every listed file, tracked
// or untracked (the map reads both). Nothing of the user's repository is
// written: the record lives in planex's cache directory.

// stateRecordVersion changes with stateRecord's meaning or encoding.
const stateRecordVersion = "planex-state-v2"

// racyWindow is how recent a modification must be for its stamp not to be
// trusted: a file written again within the same clock tick as the stamp
// was taken keeps the stamp (git's "racily clean" entries). A file that
// recent counts by its contents, and a directory or index that recent
// sends the next key to git again.
const racyWindow = 2 * time.Second

// hashChunk is how many files a key stamps at a time (see hash).
const hashChunk = 8192

// maxIgnoreRounds bounds the rounds of git check-ignore one listing runs
// for directories that hold no listed file; a deeper tree of such
// directories leaves the record untrusted (every key lists again).
const maxIgnoreRounds = 8

// maxRecordBytes caps the saved record read back (a million files take
// about 40 MB); a larger file there is not planex's and is ignored.
const maxRecordBytes = 256 << 20

// stamp is what stat says of one path: a change to the file's contents,
// mode or identity changes it. Missing paths have Missing set; Regular is
// set for regular files.
type stamp struct {
	Size, Mtime, Ctime int64
	Ino                uint64
	Mode               uint32
	Missing, Regular   bool
}

// stateRecord is what listing a work tree with git learned, saved so that
// later keys need only stat calls.
type stateRecord struct {
	Version string
	// Key is the key computed from this record when it was saved.
	Key string
	// Root is the directory the record describes; Trusted is false when
	// a stamp was too recent to rely on, so the next key lists again.
	Root    string
	Trusted bool
	// Index is the stamp of the index file; Staged the hash of what it
	// stages (paths, modes, object ids, stages), taken with it.
	Index  stamp
	Staged []byte
	// Files are the tracked and untracked, not ignored, files under
	// Root, sorted: what the map lists.
	Files []string
	// Watched are the directories git does not ignore and the files
	// ignore rules come from, with their stamps.
	Watched []string
	Stamps  []stamp
}

// stateKeyer computes the state key of one work tree (the root of a map).
type stateKeyer struct {
	root  string // absolute
	git   *gitInfo
	cache string // where the record is saved
	opts  Options
	// now is the clock racyWindow is measured against; nil means
	// time.Now.
	now func() time.Time
	// stat takes the stamps; nil means the file system's (osStat).
	stat stater
	// listings counts the keys that listed the tree with git; contentReads
	// the files a key hashed by their contents.
	listings, contentReads int
}

// stater takes stamps: the file system's, or a test's that fakes them.
type stater interface {
	// stamps stamps every path, relative to root unless absolute, into
	// dst's storage when it has room.
	stamps(dst []stamp, root string, paths []string) []stamp
	// stamp stamps one path.
	stamp(name string) stamp
}

// osStat is the file system's stater.
type osStat struct{}

func (osStat) stamps(dst []stamp, root string, paths []string) []stamp {
	return statAll(dst, root, paths)
}
func (osStat) stamp(name string) stamp { return statStamp(name) }

func (k *stateKeyer) stater() stater {
	if k.stat == nil {
		return osStat{}
	}
	return k.stat
}

func (k *stateKeyer) clock() time.Time {
	if k.now == nil {
		return time.Now()
	}
	return k.now()
}

// key returns the state key, from the saved record when it still holds,
// listing the work tree with git otherwise.
func (k *stateKeyer) key(ctx context.Context) (string, error) {
	since := k.clock()
	if rec, files, err := k.open(); err == nil {
		held := k.holds(rec)
		var key string
		if held {
			key, err = k.hash(rec, files, since)
		}
		files.close()
		if held && err == nil {
			return key, nil
		}
	}
	rec, err := k.list(ctx, since)
	if err != nil {
		return "", err
	}
	key, err := k.hash(rec, &sliceChunks{files: rec.Files}, since)
	if err != nil {
		return "", err
	}
	rec.Key = key
	if err := k.save(rec); err != nil {
		k.logger().Debug("repomap: state record not saved", "err", err)
	}
	return key, nil
}

func (k *stateKeyer) logger() *slog.Logger {
	if k.opts.Logger != nil {
		return k.opts.Logger
	}
	return slog.Default()
}

// listing returns the files the saved record lists when it was saved
// with key or still holds (a key computed from it lists its files), the
// files a map with that key is built from; false when there is none.
func (k *stateKeyer) listing(key string) ([]string, bool) {
	rec, err := k.load()
	if err != nil || key == "" || (rec.Key != key && !k.holds(rec)) {
		return nil, false
	}
	return rec.Files, true
}

// recordPath is where the record of k.root is saved: one per work tree,
// since worktrees share the cache directory.
func (k *stateKeyer) recordPath() string {
	sum := sha256.Sum256([]byte(k.root))
	return filepath.Join(k.cache, "state-"+hex.EncodeToString(sum[:8])+".gob")
}

// A saved record is the length of its header, the header (gob: every
// field but Files), the number of files and each file as a uvarint length
// and the path: a key reads the files a chunk at a time (streamChunks)
// instead of holding every path of a large tree at once.

// maxRecordPath bounds one path read back from a record.
const maxRecordPath = 64 << 10

// open reads the saved record's header and returns it with a reader of
// its files, which the caller closes.
func (k *stateKeyer) open() (*stateRecord, *streamChunks, error) {
	// A link in the record's place is not followed to a record put elsewhere.
	f, err := safefile.OpenNoFollow(k.recordPath())
	if err != nil {
		return nil, nil, err
	}
	r := bufio.NewReaderSize(io.LimitReader(f, maxRecordBytes), 64<<10)
	rec, count, err := readRecordHeader(r)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("reading state record: %w", err)
	}
	if rec.Version != stateRecordVersion || rec.Root != k.root || len(rec.Watched) != len(rec.Stamps) {
		f.Close()
		return nil, nil, errors.New("state record of another version or tree")
	}
	return rec, &streamChunks{f: f, r: r, left: count}, nil
}

func readRecordHeader(r *bufio.Reader) (*stateRecord, uint64, error) {
	n, err := bin.ReadUvarint(r)
	if err != nil || n > maxRecordBytes {
		return nil, 0, fmt.Errorf("bad header length: %w", errors.Join(err, errBadRecord))
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, 0, err
	}
	var rec stateRecord
	if err := gob.NewDecoder(bytes.NewReader(header)).Decode(&rec); err != nil {
		return nil, 0, fmt.Errorf("decoding state record: %w", err)
	}
	count, err := bin.ReadUvarint(r)
	// Each file takes two bytes at least.
	if err != nil || count > maxRecordBytes/2 {
		return nil, 0, fmt.Errorf("bad file count: %w", errors.Join(err, errBadRecord))
	}
	return &rec, count, nil
}

var errBadRecord = errors.New("state record is damaged")

// load reads the saved record, every file included.
func (k *stateKeyer) load() (*stateRecord, error) {
	rec, files, err := k.open()
	if err != nil {
		return nil, err
	}
	defer files.close()
	for {
		chunk, err := files.next()
		if err != nil {
			return nil, err
		}
		if len(chunk) == 0 {
			return rec, nil
		}
		rec.Files = append(rec.Files, chunk...)
	}
}

// fileChunks yields a record's files a chunk of at most hashChunk at a
// time; an empty chunk ends them.
type fileChunks interface {
	next() ([]string, error)
}

// sliceChunks yields files held in memory (a record just listed).
type sliceChunks struct{ files []string }

func (s *sliceChunks) next() ([]string, error) {
	n := min(hashChunk, len(s.files))
	chunk := s.files[:n]
	s.files = s.files[n:]
	return chunk, nil
}

// streamChunks reads a saved record's files; each chunk's paths share
// one string, and each is checked to stay below the root (the map reads
// the files a record lists: like git's listing, they must) before anyone
// stamps or reads it.
type streamChunks struct {
	f     *os.File
	r     *bufio.Reader
	left  uint64
	bytes []byte
	ends  []int
	chunk []string
}

func (s *streamChunks) next() ([]string, error) {
	s.bytes, s.ends, s.chunk = s.bytes[:0], s.ends[:0], s.chunk[:0]
	for ; s.left > 0 && len(s.ends) < hashChunk; s.left-- {
		n, err := bin.ReadUvarint(s.r)
		if err != nil || n == 0 || n > maxRecordPath {
			return nil, fmt.Errorf("reading state record: bad path length: %w", errors.Join(err, errBadRecord))
		}
		start := len(s.bytes)
		s.bytes = slices.Grow(s.bytes, int(n))[:start+int(n)]
		if _, err := io.ReadFull(s.r, s.bytes[start:]); err != nil {
			return nil, fmt.Errorf("reading state record: %w", err)
		}
		s.ends = append(s.ends, len(s.bytes))
	}
	all, start := string(s.bytes), 0
	for _, end := range s.ends {
		p := all[start:end]
		if !localPath(strings.TrimSuffix(p, "/")) {
			return nil, fmt.Errorf("state record lists %q, outside the tree", p)
		}
		s.chunk = append(s.chunk, p)
		start = end
	}
	return s.chunk, nil
}

func (s *streamChunks) close() { s.f.Close() }

func (k *stateKeyer) save(rec *stateRecord) error {
	if err := os.MkdirAll(k.cache, 0o755); err != nil {
		return fmt.Errorf("creating cache dir: %w", err)
	}
	header := *rec
	header.Files = nil
	var gobbed bytes.Buffer
	if err := gob.NewEncoder(&gobbed).Encode(&header); err != nil {
		return fmt.Errorf("encoding state record: %w", err)
	}
	size := 2*bin.MaxVarintLen64 + gobbed.Len()
	for _, p := range rec.Files {
		size += bin.MaxVarintLen64 + len(p)
	}
	buf := bin.AppendUvarint(make([]byte, 0, size), uint64(gobbed.Len()))
	buf = append(buf, gobbed.Bytes()...)
	buf = bin.AppendUvarint(buf, uint64(len(rec.Files)))
	for _, p := range rec.Files {
		buf = append(bin.AppendUvarint(buf, uint64(len(p))), p...)
	}
	if err := safefile.Write(k.recordPath(), buf, 0o644); err != nil {
		return fmt.Errorf("saving state record: %w", err)
	}
	return nil
}

// holds reports whether rec still lists the work tree's files: the index
// and every watched path have the stamps rec saw. A watched directory's
// .gitignore that did not exist is not stamped again (mostly there are
// none, one in each directory): creating it, or renaming or linking it
// there, adds an entry to that directory, which changes the directory's
// mtime and ctime, and the directory is stamped here too.
func (k *stateKeyer) holds(rec *stateRecord) bool {
	if !rec.Trusted || k.stater().stamp(k.git.index) != rec.Index {
		return false
	}
	dirs := map[string]bool{}
	for i, p := range rec.Watched {
		if !filepath.IsAbs(p) && isDirStamp(rec.Stamps[i]) {
			dirs[p] = true
		}
	}
	paths := make([]string, 0, len(rec.Watched))
	want := make([]stamp, 0, len(rec.Watched))
	for i, p := range rec.Watched {
		if rec.Stamps[i].Missing && path.Base(p) == ".gitignore" && !filepath.IsAbs(p) && dirs[path.Dir(p)] {
			continue
		}
		paths = append(paths, p)
		want = append(want, rec.Stamps[i])
	}
	return slices.Equal(k.stater().stamps(nil, k.root, paths), want)
}

// hash is the key: the options, what the index stages, and the stamp of
// every file files yields (rec's); a file modified within racyWindow of
// since, or since its contents were last hashed, also counts by its
// contents (statekey_young.go).
func (k *stateKeyer) hash(rec *stateRecord, files fileChunks, since time.Time) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%t\x00", cacheVersion, k.opts.MaxFileBytes, k.git.prefix, k.opts.TrackedOnly)
	h.Write(rec.Staged)
	racy := since.Add(-racyWindow).UnixNano()
	buf := make([]byte, 0, 64<<10)
	var file []byte    // a recent file's contents, reused
	var stamps []stamp // a chunk's, reused
	// The sums of files counted by their contents (statekey_young.go).
	prev, next := k.loadYoung(), []youngSum(nil)
	// Stamps are taken a chunk of files at a time, so the key holds that
	// many whatever the tree's size.
	for {
		chunk, err := files.next()
		if err != nil {
			return "", err
		}
		if len(chunk) == 0 {
			break
		}
		stamps = k.stater().stamps(stamps, k.root, chunk)
		for i, p := range chunk {
			s := stamps[i]
			buf = append(append(append(buf, 0), p...), 0)
			buf = bin.LittleEndian.AppendUint64(buf, uint64(s.Size))
			buf = bin.LittleEndian.AppendUint64(buf, uint64(s.Mtime))
			buf = bin.LittleEndian.AppendUint64(buf, uint64(s.Ctime))
			buf = bin.LittleEndian.AppendUint64(buf, s.Ino)
			buf = bin.LittleEndian.AppendUint32(buf, s.Mode)
			if s.Missing {
				buf = append(buf, 'm')
			} else if sum := k.contentPart(p, s, recent(s, racy), prev, &file, &next); sum != nil {
				buf = append(append(buf, 'c'), sum...)
			}
			if len(buf) > 60<<10 {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	h.Write(buf)
	if err := k.saveYoung(prev, next); err != nil {
		k.logger().Debug("repomap: young files' sums not saved", "err", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// contentSum hashes the contents of a regular file of at most maxBytes
// (nil for anything else: the map reads no other file, so its stamp says
// all that matters). The file is opened as the map opens it (no symlink
// followed, a FIFO never waited on), so a planted link to /dev/zero or a
// pipe cannot stall the key.
func contentSum(buf []byte, root, rel string, maxBytes int64) ([]byte, []byte) {
	data, _, skip, _ := ReadRegular(buf, root, rel, maxBytes)
	if skip != "" {
		return data, nil
	}
	sum := sha256.Sum256(data)
	return data, sum[:]
}

// list asks git for the staged entries and the untracked files, and walks
// the directories git does not ignore to find what to watch.
func (k *stateKeyer) list(ctx context.Context, since time.Time) (*stateRecord, error) {
	k.listings++
	rec := &stateRecord{Version: stateRecordVersion, Root: k.root, Trusted: true}
	// Stamps are taken before git reads: a change made while it runs
	// is either seen by git or leaves a stamp too recent to trust.
	rec.Index = k.stater().stamp(k.git.index)
	// Both listings are read as git writes them, each name counted
	// against one bound: a repository decides how many there are.
	budget := newListingBudget()
	var files []string
	staged := sha256.New()
	err := listRecords(ctx, k.root, staged, []string{"-c", "core.quotepath=off", "ls-files", "-s", "-z"}, func(entry []byte) error {
		if _, p, ok := bytes.Cut(entry, []byte{'\t'}); ok {
			files = append(files, string(p))
			return budget.take(files[len(files)-1])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing staged files: %w", err)
	}
	rec.Staged = staged.Sum(nil)
	err = listRecords(ctx, k.root, nil, []string{"-c", "core.quotepath=off", "ls-files", "-o", "--exclude-standard", "-z"}, func(p []byte) error {
		if len(p) == 0 {
			return nil
		}
		files = append(files, string(p))
		return budget.take(files[len(files)-1])
	})
	if err != nil {
		return nil, fmt.Errorf("listing untracked files: %w", err)
	}
	rec.Files = distinctSorted(files)
	dirs, complete, err := k.watchedDirs(ctx, rec.Files)
	if err != nil {
		return nil, err
	}
	rec.Watched = append(dirs, k.ignoreSources(dirs)...)
	rec.Stamps = k.stater().stamps(nil, k.root, rec.Watched)
	racy := since.Add(-racyWindow).UnixNano()
	rec.Trusted = complete && !recent(rec.Index, racy)
	for _, s := range rec.Stamps {
		if recent(s, racy) {
			rec.Trusted = false
		}
	}
	return rec, nil
}

// localPath reports whether p is a clean slash path below the root: not
// absolute, not empty, no empty, "." or ".." element (so path.Clean
// leaves it as it is). A key checks every path of its record this way,
// so it scans the elements once instead of cleaning a copy of each.
func localPath(p string) bool {
	if p == "" || p[0] == '/' || filepath.Separator != '/' && !filepath.IsLocal(filepath.FromSlash(p)) {
		return false
	}
	for start := 0; start <= len(p); {
		end := strings.IndexByte(p[start:], '/')
		if end < 0 {
			end = len(p)
		} else {
			end += start
		}
		if elem := p[start:end]; elem == "" || elem == "." || elem == ".." {
			return false
		}
		start = end + 1
	}
	return true
}

// recent reports whether s changed at or after racy (ns since the epoch).
func recent(s stamp, racy int64) bool { return !s.Missing && (s.Mtime >= racy || s.Ctime >= racy) }

// distinctSorted sorts the names the staged entries (a conflicted path
// once per stage) and the untracked files gave, each kept once.
func distinctSorted(files []string) []string {
	sort.Strings(files)
	return slices.Compact(files)
}

// watchedDirs walks root's directories that hold a listed file or that
// git does not ignore, ".git" and nested repositories aside, and returns
// them ("." first). complete is false when the walk stopped early.
func (k *stateKeyer) watchedDirs(ctx context.Context, files []string) (dirs []string, complete bool, err error) {
	holds := map[string]bool{".": true}
	for _, f := range files {
		for d := path.Dir(strings.TrimSuffix(f, "/")); d != "." && !holds[d]; d = path.Dir(d) {
			holds[d] = true
		}
	}
	todo := []string{"."}
	for round := 0; len(todo) > 0; round++ {
		var unknown []string
		for len(todo) > 0 {
			d := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			dirs = append(dirs, d)
			for _, sub := range subdirs(k.root, d) {
				if holds[sub] {
					todo = append(todo, sub)
				} else {
					unknown = append(unknown, sub)
				}
			}
		}
		if len(unknown) == 0 {
			break
		}
		if round == maxIgnoreRounds {
			return dirs, false, nil
		}
		if todo, err = k.notIgnored(ctx, unknown); err != nil {
			return nil, false, err
		}
	}
	sort.Strings(dirs)
	return dirs, true, nil
}

// subdirs lists the directories in root/d (slash paths from root),
// leaving out .git and the work trees of nested repositories, whose files
// git lists as one entry.
func subdirs(root, d string) []string {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(d)))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == ".git" {
			continue
		}
		sub := path.Join(d, e.Name())
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(sub), ".git")); err == nil {
			continue
		}
		out = append(out, sub)
	}
	return out
}

// notIgnored returns the directories of dirs git does not ignore.
func (k *stateKeyer) notIgnored(ctx context.Context, dirs []string) ([]string, error) {
	cmd, err := gitrepo.Command(ctx, k.root, "-c", "core.quotepath=off", "check-ignore", "-z", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("checking ignored directories: %w", err)
	}
	cmd.Stdin = strings.NewReader(strings.Join(dirs, "\x00") + "\x00")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		// Status 1 with nothing on stderr: none of them is ignored.
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || stderr.Len() > 0 {
			return nil, fmt.Errorf("checking ignored directories: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
	}
	ignored := map[string]bool{}
	for _, p := range bytes.Split(out.Bytes(), []byte{0}) {
		ignored[strings.TrimSuffix(string(p), "/")] = true
	}
	return slices.DeleteFunc(dirs, func(d string) bool { return ignored[d] }), nil
}

// ignoreSources are the files git's ignore rules come from for the
// directories dirs: each one's .gitignore, the repository's exclude file
// and config, and the user's default excludes file (planex's git reads no
// global config, so core.excludesFile is the repository's own).
// Outside root they are absolute paths.
func (k *stateKeyer) ignoreSources(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, path.Join(d, ".gitignore"))
	}
	// A map of a subdirectory obeys the .gitignore files above it, up
	// to the top of the work tree, too.
	if up := strings.Trim(k.git.prefix, "/"); up != "" {
		d := k.root
		for range strings.Count(up, "/") + 1 {
			d = filepath.Dir(d)
			out = append(out, filepath.Join(d, ".gitignore"))
		}
	}
	out = append(out, filepath.Join(k.git.commonDir, "info", "exclude"), filepath.Join(k.git.commonDir, "config"),
		filepath.Join(filepath.Dir(k.git.index), "config.worktree"))
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "ignore"))
	} else if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".config", "git", "ignore"))
	}
	return out
}

// statAll stamps every path (relative to root unless absolute), into
// dst's storage when it has room, in
// parallel: on a large tree this is most of a key's cost. Each worker
// takes a run of paths, which in sorted order mostly share directories
// (see stamper).
func statAll(dst []stamp, root string, paths []string) []stamp {
	out := slices.Grow(dst[:0], len(paths))[:len(paths)]
	workers := min(runtime.GOMAXPROCS(0), max(1, len(paths)/256))
	var wg sync.WaitGroup
	chunk := (len(paths) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(paths))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newStamper(root)
			defer st.close()
			for i := lo; i < hi; i++ {
				out[i] = st.stamp(paths[i])
			}
		}()
	}
	wg.Wait()
	return out
}
