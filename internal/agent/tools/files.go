package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/planexhq/planex/internal/gitrepo"
)

// maxSearchFileBytes skips large files (generated, vendored, data) in search.
const maxSearchFileBytes = 1 << 20

// maxEditFileBytes is the largest file edit_file reads into memory.
const maxEditFileBytes = 16 << 20

// maxLineChars cuts long lines in search output.
const maxLineChars = 300

// ignorer answers whether a repository-relative path is ignored: under
// .git, or by the .gitignore files of its directory and those above it.
type ignorer struct{ gi *gitrepo.Ignorer }

func newIgnorer(dir string) *ignorer { return &ignorer{gitrepo.NewIgnorer(dir)} }

func (ig *ignorer) ignored(rel string, isDir bool) bool {
	return underGit(rel) || ig.gi.Ignored(rel, isDir)
}

// walk visits the non-ignored regular files below rel (or rel itself when
// it is a file), in lexical order within each folder, until fn returns
// false. Folders are opened through the step's root, in batches: at most
// MaxWalkEntries entries are read in all, however many an agent made
// (cut says the walk stopped there), and no folder's listing is held but
// those on the way to the one being read.
func (s *Set) walk(rel string, fn func(file string) bool) (cut bool, err error) {
	st, err := s.root.Lstat(rel)
	if err != nil {
		return false, err
	}
	if !st.IsDir() {
		if st.Mode().IsRegular() {
			fn(rel)
		}
		return false, nil
	}
	w := &walker{s: s, ig: newIgnorer(s.dir), fn: fn, left: s.cfg.MaxWalkEntries}
	err = w.folder(rel)
	return w.cut, err
}

// walker is one walk's state: the entries it may still read.
type walker struct {
	s       *Set
	ig      *ignorer
	fn      func(file string) bool
	left    int
	cut     bool
	stopped bool
}

// folder visits the entries of folder rel (a path of the step's root).
func (w *walker) folder(rel string) error {
	ents, err := w.list(rel)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if w.stopped {
			return nil
		}
		r := path.Join(rel, e.Name())
		if w.ig.ignored(r, e.IsDir()) || w.s.inListed(filepath.Join(w.s.dir, filepath.FromSlash(r))) {
			continue
		}
		switch {
		case e.IsDir():
			// A folder that cannot be read is left out, as before.
			_ = w.folder(r)
		case e.Type().IsRegular():
			w.stopped = !w.fn(r)
		}
	}
	return nil
}

// list reads folder rel's entries, sorted, within what the walk may still
// read.
func (w *walker) list(rel string) ([]fs.DirEntry, error) {
	f, err := w.s.root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ents []fs.DirEntry
	for {
		if w.left == 0 {
			w.cut = true
			break
		}
		batch, err := f.ReadDir(min(w.left, 1024))
		ents = append(ents, batch...)
		w.left -= len(batch)
		if err != nil || len(batch) == 0 {
			break
		}
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// walkNote tells the model that a walk stopped at its bound, or nothing.
func (s *Set) walkNote(cut bool) string {
	if !cut {
		return ""
	}
	return fmt.Sprintf("\n[the walk stopped after %d entries of the folders it read; narrow the path]", s.cfg.MaxWalkEntries)
}

func (s *Set) listFiles(input json.RawMessage) Output {
	var in listFilesInput
	if err := decode(input, &in); err != nil {
		return fail("%v", err)
	}
	rel, err := s.resolve(in.Path)
	if err != nil {
		return fail("%v", err)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return fail("glob %q is malformed", in.Glob)
	}
	var files []string
	more := 0
	cut, err := s.walk(rel, func(f string) bool {
		if in.Glob != "" {
			if m, _ := doublestar.Match(in.Glob, f); !m {
				return true
			}
		}
		if len(files) < s.cfg.MaxListEntries {
			files = append(files, f)
		} else {
			more++
		}
		return true
	})
	if err != nil {
		return fail("listing %s: %s", rel, s.describe(err))
	}
	out := strings.Join(files, "\n")
	if len(files) == 0 {
		out = "no files found"
	}
	if more > 0 {
		out += fmt.Sprintf("\n… %d more files not shown; narrow the path or glob", more)
	}
	return ok("%s%s", out, s.walkNote(cut))
}

// openRegular opens rel for reading if it is a regular file; otherwise it
// returns nil and the reason to give the model.
func (s *Set) openRegular(rel string) (*os.File, Output) {
	// Non-blocking, so that a FIFO is refused rather than waited on.
	f, err := s.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fail("reading %s: %s", rel, s.describe(err))
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fail("reading %s: %s", rel, s.describe(err))
	case st.IsDir():
		f.Close()
		return nil, fail("%s is a directory; use list_files", rel)
	case !st.Mode().IsRegular():
		f.Close()
		return nil, fail("%s is not a regular file", rel)
	}
	return f, Output{}
}

func (s *Set) readFile(input json.RawMessage) Output {
	var in readFileInput
	if err := decode(input, &in); err != nil {
		return fail("%v", err)
	}
	rel, err := s.resolve(in.Path)
	if err != nil {
		return fail("%v", err)
	}
	f, out := s.openRegular(rel)
	if f == nil {
		return out
	}
	defer f.Close()
	start := max(in.StartLine, 1)
	end := in.EndLine
	if end > 0 && end < start {
		return fail("end_line %d is before start_line %d", end, start)
	}
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n, shown, last := 0, 0, 0
	truncated := false
	for sc.Scan() {
		n++
		if n < start || (end > 0 && n > end) {
			continue
		}
		if shown >= s.cfg.MaxReadLines || b.Len()+len(sc.Bytes()) > s.cfg.MaxReadBytes {
			truncated = true
			continue
		}
		if shown == 0 && bytes.IndexByte(sc.Bytes(), 0) >= 0 {
			return fail("%s looks like a binary file", rel)
		}
		fmt.Fprintf(&b, "%d\t%s\n", n, sc.Text())
		shown++
		last = n
	}
	if err := sc.Err(); err != nil {
		return fail("reading %s: %s", rel, s.describe(err))
	}
	if n == 0 {
		return ok("(%s is empty)", rel)
	}
	if shown == 0 {
		return fail("%s has %d lines; start_line %d is past the end", rel, n, start)
	}
	if truncated {
		fmt.Fprintf(&b, "[shown lines %d-%d of %d; call read_file with start_line=%d for more]\n", start, last, n, last+1)
	}
	return ok("%s", b.String())
}

func (s *Set) search(ctx context.Context, input json.RawMessage) Output {
	var in searchInput
	if err := decode(input, &in); err != nil {
		return fail("%v", err)
	}
	if in.Pattern == "" {
		return fail("pattern is empty")
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return fail("pattern is not a valid RE2 regular expression: %v", err)
	}
	rel, err := s.resolve(in.Path)
	if err != nil {
		return fail("%v", err)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return fail("glob %q is malformed", in.Glob)
	}
	var out []string
	more := false
	cut, err := s.walk(rel, func(file string) bool {
		if ctx.Err() != nil {
			return false
		}
		if in.Glob != "" {
			if m, _ := doublestar.Match(in.Glob, file); !m {
				return true
			}
		}
		data, err := s.readSmall(file)
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return true
		}
		line := 0
		for len(data) > 0 {
			line++
			i := bytes.IndexByte(data, '\n')
			var l []byte
			if i < 0 {
				l, data = data, nil
			} else {
				l, data = data[:i], data[i+1:]
			}
			if !re.Match(l) {
				continue
			}
			if len(out) >= s.cfg.MaxSearchResults {
				more = true
				return false
			}
			out = append(out, fmt.Sprintf("%s:%d: %s", file, line, clip(string(l), maxLineChars)))
		}
		return true
	})
	if err != nil {
		return fail("searching %s: %s", rel, s.describe(err))
	}
	text := strings.Join(out, "\n")
	if len(out) == 0 {
		text = "no matches"
	}
	if more {
		text += fmt.Sprintf("\n[stopped after %d matches; narrow the pattern, path or glob]", s.cfg.MaxSearchResults)
	}
	return ok("%s%s", text, s.walkNote(cut))
}

// readSmall reads a file through the root, skipping files that are too
// large to be worth searching.
func (s *Set) readSmall(rel string) ([]byte, error) {
	f, err := s.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxSearchFileBytes {
		return nil, fmt.Errorf("skipped")
	}
	// At most the size checked, should the file grow meanwhile.
	return io.ReadAll(io.LimitReader(f, maxSearchFileBytes))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// errNotRegular refuses a write to what an agent left in a file's place.
var errNotRegular = errors.New("not a regular file")

// writeRegular writes data to rel through the step's root, creating it
// with perm, only when it is (or becomes) a regular file: a FIFO an
// agent's command left there is opened without waiting for a reader,
// then refused, before anything is truncated.
func (s *Set) writeRegular(rel string, data []byte, perm os.FileMode) error {
	f, err := s.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ENXIO) {
		// A FIFO nothing reads.
		return &fs.PathError{Op: "write", Path: rel, Err: errNotRegular}
	}
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &fs.PathError{Op: "write", Path: rel, Err: errNotRegular}
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Set) writeFile(input json.RawMessage) Output {
	var in writeFileInput
	if err := decode(input, &in); err != nil {
		return fail("%v", err)
	}
	if in.Path == nil || in.Content == nil {
		return fail("write_file needs both path and content")
	}
	rel, err := s.resolve(*in.Path)
	if err != nil {
		return fail("%v", err)
	}
	if err := s.checkWrite(rel); err != nil {
		return fail("%v", err)
	}
	if len(*in.Content) > s.cfg.MaxWriteBytes {
		return fail("content is %d bytes, more than the %d allowed per file", len(*in.Content), s.cfg.MaxWriteBytes)
	}
	if st, err := s.root.Stat(rel); err == nil && st.IsDir() {
		return fail("%s is a directory", rel)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return fail("creating folder %s: %s", dir, s.describe(err))
		}
	}
	perm := os.FileMode(0o644)
	existed := false
	if st, err := s.root.Stat(rel); err == nil {
		perm = st.Mode().Perm()
		existed = true
	}
	if err := s.writeRegular(rel, []byte(*in.Content), perm); err != nil {
		return fail("writing %s: %s", rel, s.describe(err))
	}
	verb := "created"
	if existed {
		verb = "overwrote"
	}
	return ok("%s %s (%d bytes)", verb, rel, len(*in.Content))
}

func (s *Set) editFile(input json.RawMessage) Output {
	var in editFileInput
	if err := decode(input, &in); err != nil {
		return fail("%v", err)
	}
	if in.OldText == nil || in.NewText == nil {
		return fail("edit_file needs path, old_text and new_text")
	}
	if *in.OldText == "" {
		return fail("old_text is empty; to create or replace a whole file use write_file")
	}
	rel, err := s.resolve(in.Path)
	if err != nil {
		return fail("%v", err)
	}
	if err := s.checkWrite(rel); err != nil {
		return fail("%v", err)
	}
	// Opened once, without waiting (a FIFO), and edited through that one
	// descriptor: what is read and written is the file checked, whatever
	// takes its name meanwhile.
	f, err := s.root.OpenFile(rel, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail("editing %s: %s", rel, s.describe(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail("editing %s: %s", rel, s.describe(err))
	}
	// Edited in memory: only a regular file of bounded size (planex's own
	// memory must not follow what a repository holds).
	if !st.Mode().IsRegular() {
		return fail("editing %s: not a regular file", rel)
	}
	var data []byte
	if st.Size() <= maxEditFileBytes {
		data, err = io.ReadAll(io.LimitReader(f, maxEditFileBytes+1))
	}
	if err != nil {
		return fail("editing %s: %s", rel, s.describe(err))
	}
	// Checked again on what was read: the file may have grown since.
	if size := max(st.Size(), int64(len(data))); size > maxEditFileBytes {
		return fail("editing %s: %d bytes, more than the %d MiB edit_file works on; use run_command", rel, size, maxEditFileBytes>>20)
	}
	text := string(data)
	switch n := strings.Count(text, *in.OldText); {
	case n == 0:
		return fail("old_text was not found in %s; read the file again and copy the text exactly (without line numbers)", rel)
	case n > 1:
		return fail("old_text occurs %d times in %s; include more surrounding lines so it matches exactly once", n, rel)
	}
	text = strings.Replace(text, *in.OldText, *in.NewText, 1)
	if len(text) > s.cfg.MaxWriteBytes {
		return fail("the edited file would be %d bytes, more than the %d allowed", len(text), s.cfg.MaxWriteBytes)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(text), 0)
	}
	if err != nil {
		return fail("writing %s: %s", rel, s.describe(err))
	}
	return ok("edited %s", rel)
}
