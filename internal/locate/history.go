package locate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/repomap"
)

// A repository's history says where its maintainers fixed things like the
// issue before: commits whose messages share the words point at
// the files they changed. The index keeps the recent commits' message
// terms and changed files, so a query scores them like any other field.
const (
	// historyCommits bounds the commits read (newest first).
	historyCommits = 5000
	// historyMaxFiles skips sweeping commits (renames, formatting runs)
	// whose many files say nothing about any one of them.
	historyMaxFiles = 50
	// historyTop is how many best-matching commits lend their files the
	// history signal.
	historyTop = 50
	// historyAgeScale sets how fast a commit's credit fades with age:
	// the kept commit with n newer kept ones lends 1/sqrt(1+n/historyAgeScale).
	historyAgeScale = 500
	// historySubject bounds the subject kept per commit for --explain.
	historySubject = 72
)

// historySource names where a tree's history is read: a repository
// (work tree or bare) and the revision whose ancestors count. An empty
// dir reads no history.
type historySource struct {
	dir, rev string
}

// history is the index's part for past commits.
type history struct {
	// terms maps a message term to postings (commit, count).
	terms table
	// fileOff and fileTo list each commit's changed files (indexes into
	// Index.files): commit c changed fileTo[fileOff[c]:fileOff[c+1]].
	fileOff, fileTo []uint32
	// lengths are the commits' message lengths in terms; avg their mean.
	lengths []uint32
	avg     float64
	// subjects are the commits' short hashes and first lines, one a line.
	subjects string
}

func (h *history) commits() int { return len(h.lengths) }

// Bounds of what readLogs keeps of git's log, whatever the repository's
// history holds (a commit message of hundreds of megabytes is one `git
// commit -F` away): a record's parents beyond logHashMax bytes are
// dropped (more than one is all that counts), its message beyond
// logMessageMax bytes too (its terms are in the first ones), a record
// whose changed paths pass logNamesMax bytes keeps none (thousands of
// files: a sweeping commit, which eachCommit would skip anyway), and each
// log stops before its kept records pass logTotalMax bytes; git is
// killed once both logs are done.
const (
	logHashMax    = 128
	logMessageMax = 64 << 10
	logNamesMax   = 256 << 10
	logTotalMax   = 32 << 20
)

// logPart is one of the two logs readLogs splits git's one log into:
// records of NUL, short hash, \x01, message, \x02 and the changed paths
// one a line (eachCommit reads them).
type logPart struct {
	out []byte
	// kept counts the records in out, at most max; full says the next
	// record would have passed total bytes.
	kept, max, total int
	full             bool
	// merges says whether merge commits belong to this log.
	merges bool
}

func (p *logPart) done() bool { return p.full || p.kept >= p.max }

// add keeps rec, a merge's or not, if it belongs and fits.
func (p *logPart) add(rec []byte, merge bool) {
	if p.done() || (merge && !p.merges) {
		return
	}
	if len(p.out)+len(rec) > p.total {
		p.full = true
		return
	}
	p.out = append(p.out, rec...)
	p.kept++
}

// readLogs reads both logs an index takes from the history of src.rev
// with one git log, newest first: hist holds the newest historyCommits
// commits that are not merges, cited the newest refCommits commits with
// merges (by their change against the first parent). Run as two logs,
// `--no-merges -n 5000` and `--diff-merges=first-parent -n 5000`, git
// walked the same commits twice and planex set up two protected git
// processes; a commit's non-merge record is the same bytes in both, so
// one walk that prints each commit's parents splits into the same two
// logs. Streamed from git and bounded (logMessageMax and the others). No
// source, no logs.
func readLogs(ctx context.Context, src historySource) (hist, cited []byte, err error) {
	if src.dir == "" {
		return nil, nil, nil
	}
	rev := src.rev
	if rev == "" {
		rev = "HEAD"
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	// A root commit's files are listed from its tree (rootNames), not by
	// git's log: see rootNames.
	args := []string{"-c", "core.quotepath=off", "-c", "log.showRoot=false", "log", "--diff-merges=first-parent", "--no-show-signature",
		"--no-renames", "--relative", "--format=%x00%p%x03%h%x01%B%x02", "--name-only", rev, "--"}
	cmd, err := gitrepo.Command(ctx, src.dir, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading history: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("reading history: %w", err)
	}
	stderr := &logStderr{max: 16 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("reading history: %w", err)
	}
	h := &logPart{max: historyCommits, total: logTotalMax}
	c := &logPart{max: refCommits, total: logTotalMax, merges: true}
	roots := boundedRoots(maxRootListings, func(hash []byte, max int) ([]byte, bool, error) {
		return rootNames(ctx, src.dir, hash, max)
	})
	done, readErr := boundedLog(stdout, roots, h, c)
	if done {
		stop() // both logs complete: git need not write the rest
	}
	io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case readErr != nil:
		return nil, nil, fmt.Errorf("reading history: %w", readErr)
	case done:
		return h.out, c.out, nil
	case ctx.Err() != nil:
		return nil, nil, fmt.Errorf("reading history: %w", ctx.Err())
	case waitErr != nil:
		msg := strings.TrimSpace(string(stderr.b))
		if msg == "" {
			msg = waitErr.Error()
		}
		return nil, nil, fmt.Errorf("reading history: git log: %s", msg)
	}
	return h.out, c.out, nil
}

// rootLister returns the paths field git's log prints for the parentless
// commit hash (rootNames), or over when it would pass max bytes.
type rootLister func(hash []byte, max int) (names []byte, over bool, err error)

// maxRootListings bounds the root commits whose files one history read
// lists (a git process each): a history joining many unrelated ones
// cannot make a query start thousands of processes.
const maxRootListings = 16

// boundedRoots lists the files of the first n root commits with list; the
// later ones keep none, as a record whose names pass logNamesMax.
func boundedRoots(n int, list rootLister) rootLister {
	return func(hash []byte, max int) ([]byte, bool, error) {
		if n <= 0 {
			return nil, true, nil
		}
		n--
		return list(hash, max)
	}
}

// boundedLog reads readLogs' records from r (NUL, parents, \x03, short
// hash, \x01, message, \x02, paths), each cut to the bounds above, and
// adds each without its parents to the parts, until r ends or every part
// is done (done). A record without parents takes its paths from roots
// when it is given (git printed none).
func boundedLog(r io.Reader, roots rootLister, parts ...*logPart) (done bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	// Whatever precedes the first record's NUL is no record.
	if _, _, err := readField(br, nil, 0, 0); err != nil {
		return false, eofIsEnd(err)
	}
	var rec, parents []byte
	for {
		var over bool
		if parents, over, err = readField(br, parents[:0], 3, logHashMax); err != nil {
			return false, eofIsEnd(err) // a cut record is dropped
		}
		merge := over || bytes.IndexByte(parents, ' ') >= 0
		root := !over && len(parents) == 0
		rec = append(rec[:0], 0)
		if rec, _, err = readField(br, rec, 1, logHashMax); err != nil {
			return false, eofIsEnd(err)
		}
		hashEnd := len(rec)
		rec = append(rec, 1)
		if rec, _, err = readField(br, rec, 2, logMessageMax); err != nil {
			return false, eofIsEnd(err)
		}
		rec = append(rec, 2)
		names := len(rec)
		rec, over, err = readField(br, rec, 0, logNamesMax)
		if err != nil && err != io.EOF {
			return false, err
		}
		if over {
			rec = rec[:names]
		}
		if root && roots != nil {
			var rerr error
			if rec, rerr = appendRootNames(rec[:names], rec[1:hashEnd], roots); rerr != nil {
				return false, rerr
			}
		}
		done = true
		for _, p := range parts {
			p.add(rec, merge)
			done = done && p.done()
		}
		if done || err == io.EOF {
			return done, nil
		}
	}
}

// appendRootNames appends to rec the paths field roots gives for the
// root commit hash, or none when it passes logNamesMax (as readField
// drops a field that does).
func appendRootNames(rec, hash []byte, roots rootLister) ([]byte, error) {
	names, over, err := roots(bytes.Clone(hash), logNamesMax)
	if err != nil || over {
		return rec, err
	}
	return append(rec, names...), nil
}

// errNotCommitName is a root commit's name from git's log that is not a
// short hash.
var errNotCommitName = errors.New("not a commit name")

// rootNames returns what `git log --name-only` prints as the paths of the
// parentless commit hash, relative to dir as `--relative` makes them: a
// newline, then, if the commit has files, another and each path on a
// line; over, and nothing, when that would pass max bytes. git's log
// builds the whole change of a commit before printing it, and a root
// commit's change is every file of its tree: 38 MiB of git's memory for
// the one commit of a 100,000-file shallow clone, to print names the
// record would drop (logNamesMax). `git ls-tree` prints the same paths in
// the same order, quoted alike, as it reads the tree, so it is stopped as
// soon as they pass max.
func rootNames(ctx context.Context, dir string, hash []byte, max int) ([]byte, bool, error) {
	if len(hash) == 0 || bytes.IndexFunc(hash, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') }) >= 0 {
		return nil, false, fmt.Errorf("listing the files of root commit %q: %w", hash, errNotCommitName)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cmd, err := gitrepo.Command(ctx, dir, "-c", "core.quotepath=off", "ls-tree", "-r", "--name-only", string(hash))
	if err != nil {
		return nil, false, fmt.Errorf("listing the files of root commit %s: %w", hash, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false, fmt.Errorf("listing the files of root commit %s: %w", hash, err)
	}
	stderr := &logStderr{max: 16 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("listing the files of root commit %s: %w", hash, err)
	}
	const sep = "\n\n"
	names, readErr := io.ReadAll(io.LimitReader(stdout, int64(max-len(sep)+1)))
	over := len(names) > max-len(sep)
	if over {
		stop()
	}
	io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case over:
		return nil, true, nil
	case readErr != nil:
		return nil, false, fmt.Errorf("listing the files of root commit %s: %w", hash, readErr)
	case waitErr != nil:
		return nil, false, fmt.Errorf("listing the files of root commit %s: %w: %s", hash, waitErr, strings.TrimSpace(string(stderr.b)))
	case len(names) == 0:
		return []byte("\n"), false, nil
	}
	return append([]byte(sep), names...), false, nil
}

// readField appends to dst what br holds up to the next delim (consumed,
// not appended), at most max bytes of it; the rest is read and dropped,
// and over says some was. At the end of br it returns io.EOF with what
// came before.
func readField(br *bufio.Reader, dst []byte, delim byte, max int) ([]byte, bool, error) {
	kept, over := 0, false
	for {
		chunk, err := br.ReadSlice(delim)
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		take := min(len(chunk), max-kept)
		dst = append(dst, chunk[:take]...)
		kept += take
		over = over || take < len(chunk)
		if err != bufio.ErrBufferFull {
			return dst, over, err
		}
	}
}

// logStderr keeps the first max bytes of git's stderr for its error.
type logStderr struct {
	b   []byte
	max int
}

func (w *logStderr) Write(p []byte) (int, error) {
	w.b = append(w.b, p[:min(len(p), max(w.max-len(w.b), 0))]...)
	return len(p), nil
}

// eofIsEnd reads the end of git's output as the end of the log.
func eofIsEnd(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// eachCommit calls fn with each record of a readLogs output that changed
// between one and historyMaxFiles indexed files and whose message want
// accepts (every one for a nil want): its short hash, its message and
// the files, which are valid only during the call. want is asked before
// the record's paths are looked up among the files. The
// records are cut from out in place, and a record's one-line subject is
// made only by the callers that keep it (commitSubject): copying every
// message whole to find its first line was more than half of indexing
// sympy's history.
func (ix *Index) eachCommit(out []byte, want func(msg []byte) bool, fn func(hash, msg []byte, files []uint32)) {
	eachCommit(out, ix, want, fn)
}

// pathFinder finds an indexed file's number by its path: an index's file
// table, or while the index is built the complete map's paths (mapPaths),
// which number the files alike.
type pathFinder interface {
	byPath(p string) (int, bool)
}

// eachCommit is Index.eachCommit looking paths up in paths.
func eachCommit(out []byte, paths pathFinder, want func(msg []byte) bool, fn func(hash, msg []byte, files []uint32)) {
	var files []uint32
	for rest := out; len(rest) > 0; {
		var rec []byte
		rec, rest, _ = bytes.Cut(rest, []byte{0})
		hash, body, ok := bytes.Cut(rec, []byte{1})
		if !ok {
			continue
		}
		msg, names, ok := bytes.Cut(body, []byte{2})
		if !ok || want != nil && !want(msg) {
			continue
		}
		files = files[:0]
		// Past historyMaxFiles the record is skipped whatever its other
		// paths are: they are not looked up.
		for len(names) > 0 && len(files) <= historyMaxFiles {
			var name []byte
			name, names, _ = bytes.Cut(names, []byte{'\n'})
			if f, ok := paths.byPath(string(bytes.TrimSpace(name))); ok {
				files = append(files, uint32(f))
			}
		}
		if len(files) == 0 || len(files) > historyMaxFiles {
			continue
		}
		fn(hash, msg, files)
	}
}

// commitSubject is a commit's line for --explain: its short hash and its
// message's first line, cut to historySubject characters.
func commitSubject(hash, msg []byte) string {
	// The first line of the message trimmed, as abbrev.FirstLine finds
	// it, without making the whole message a string.
	first, _, _ := bytes.Cut(bytes.TrimSpace(msg), []byte{'\n'})
	return string(hash) + " " + abbrev.Truncate(string(first), historySubject)
}

// setHistory indexes readLogs' hist, keeping the commits that changed at
// least one indexed file and at most historyMaxFiles files. Terms are
// counted by number (repomap.TermNumberer: a word's terms found once,
// not at each occurrence), not in a map of strings for each commit.
func (ix *Index) setHistory(out []byte) { ix.hist = historyOf(out, ix) }

// historyOf is the history setHistory indexes, its records' paths looked
// up in paths.
func historyOf(out []byte, paths pathFinder) history {
	terms := repomap.NewTermNumberer()
	var postings [][]byte
	var last []int
	h := &history{fileOff: []uint32{0}}
	var subjects strings.Builder
	sum := 0
	eachCommit(out, paths, nil, func(hash, msg []byte, files []uint32) {
		c := h.commits()
		n := terms.Count(msg, func(id, k uint32) {
			for int(id) >= len(postings) {
				postings, last = append(postings, nil), append(last, 0)
			}
			postings[id] = appendPosting(postings[id], &last[id], c, k)
		})
		sum += n
		h.lengths = append(h.lengths, uint32(n))
		h.fileTo = append(h.fileTo, files...)
		h.fileOff = append(h.fileOff, uint32(len(h.fileTo)))
		subjects.WriteString(commitSubject(hash, msg) + "\n")
	})
	h.terms = internedTable(terms.Terms(), postings)
	h.subjects = subjects.String()
	if len(h.lengths) > 0 {
		h.avg = float64(float32(math.Max(1, float64(sum)/float64(len(h.lengths)))))
	}
	return *h
}

// internedTable is the table of keys[i] to vals[i], keys being distinct
// (numbered terms).
func internedTable(keys []string, vals [][]byte) table {
	order := sortedTerms(keys)
	return sortedTable(len(order), func(i int) string { return keys[order[i]] }, func(i int) []byte { return vals[order[i]] })
}

// historyFeature sets a history signal (fHistory for the whole issue,
// fTitleHistory for its title, which reads much like a commit subject):
// commits are scored with BM25 over their messages, and the historyTop
// best lend each changed source file their score over the best's, divided
// by the square root of how many files they changed and of their age.
func (ix *Index) historyFeature(qts []queryTerm, feat feature, what string, ev *evidence) {
	h := &ix.hist
	n := h.commits()
	if n == 0 {
		return
	}
	scores := make([]float64, n)
	for _, q := range qts {
		v := h.terms.get(q.term)
		if v == nil {
			continue
		}
		bm25Term(v, n, q.weight, func(c int) int { return int(h.lengths[c]) }, h.avg, func(c int, s float64) { scores[c] += s })
	}
	var matched []int
	for c, v := range scores {
		if v > 0 {
			matched = append(matched, c)
		}
	}
	top := bestFiles(matched, func(c int) float64 { return scores[c] }, historyTop)
	if len(top) == 0 {
		return
	}
	credit := map[int]float64{}
	why := map[int][]int{}
	for _, c := range top {
		files := h.fileTo[h.fileOff[c.file]:h.fileOff[c.file+1]]
		// Older commits count less: the code they changed may have moved.
		share := c.score / top[0].score / math.Sqrt(float64(len(files))*(1+float64(c.file)/historyAgeScale))
		for _, f := range files {
			if int(f) < len(ix.files) && ix.files[f].code() {
				credit[int(f)] += share
				why[int(f)] = append(why[int(f)], c.file)
			}
		}
	}
	best := 0.0
	for _, v := range credit {
		best = math.Max(best, v)
	}
	subjects := strings.Split(h.subjects, "\n")
	files := make([]int, 0, len(credit))
	for f := range credit {
		files = append(files, f)
	}
	sort.Ints(files)
	for _, f := range files {
		ev.feats.set(feat, f, credit[f]/best)
		cs := why[f]
		example := ""
		if cs[0] < len(subjects) {
			hash, subject, _ := strings.Cut(subjects[cs[0]], " ")
			example = fmt.Sprintf(", best %s “%s”", hash, subject)
		}
		ev.note(feat, f, fmt.Sprintf("changed by %s like %s%s", plural.Count(len(cs), "past commit", "past commits"), what, example))
	}
}
