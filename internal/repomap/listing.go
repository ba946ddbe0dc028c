package repomap

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// maxListingBytes bounds one listing of the tree a map is built from:
// each file's name counts, with listingEntryCost more for what the map
// keeps per file besides. A repository decides how many files it holds
// and how long their names are (a commit of 300,000 files named with
// 450 bytes each is a small push: the names repeat); listed whole, such
// a tree held 848 MiB of planex's memory to map. 64 MiB takes about
// 750,000 files of 25-byte names (a large monorepo), and past it the map
// fails naming the bound rather than growing without end.
const maxListingBytes = 64 << 20

// listingEntryCost is what each listed file counts besides its name.
const listingEntryCost = 64

// maxListedName bounds one record git lists (a name, or a staged
// entry's line): longer than any path a file system takes.
const maxListedName = 1 << 20

// ErrTreeTooLarge is returned when a tree lists more files, or longer
// names, than a map holds (maxListingBytes).
var ErrTreeTooLarge = errors.New("the repository lists more files than planex maps")

// listingBudget counts what listings of one tree have taken.
type listingBudget struct{ left int }

func newListingBudget() *listingBudget { return &listingBudget{left: maxListingBytes} }

// take counts one listed name, failing past the bound.
func (b *listingBudget) take(name string) error {
	b.left -= len(name) + listingEntryCost
	if b.left < 0 {
		return fmt.Errorf("%w (at most %d MiB of file names, each counted with %d bytes more)", ErrTreeTooLarge, maxListingBytes>>20, listingEntryCost)
	}
	return nil
}

// listRecords runs git with args in root and hands each NUL-terminated
// record to fn as git writes it, also copying git's output to tee when
// it is not nil. git is stopped as soon as fn fails; nothing of the
// output is held but the record fn is given.
func listRecords(ctx context.Context, root string, tee io.Writer, args []string, fn func(rec []byte) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd, err := gitrepo.Command(ctx, root, args...)
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, left: 64 << 10}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	var r io.Reader = stdout
	if tee != nil {
		r = io.TeeReader(stdout, tee)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxListedName)
	sc.Split(splitNUL)
	var ferr error
	for ferr == nil && sc.Scan() {
		ferr = fn(sc.Bytes())
	}
	if ferr == nil && errors.Is(sc.Err(), bufio.ErrTooLong) {
		ferr = fmt.Errorf("%w (a listed name is longer than %d KiB)", ErrTreeTooLarge, maxListedName>>10)
	}
	if ferr != nil {
		cancel()
		cmd.Wait()
		return ferr
	}
	serr := sc.Err()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if serr != nil {
		return fmt.Errorf("reading git %s: %w", strings.Join(args, " "), serr)
	}
	return nil
}

// splitNUL is a bufio.SplitFunc for NUL-terminated records.
func splitNUL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// limitedWriter keeps the first left bytes written to it and drops the
// rest, never failing the writer.
type limitedWriter struct {
	w    io.Writer
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.left > 0 {
		n := min(len(p), l.left)
		l.w.Write(p[:n])
		l.left -= n
	}
	return len(p), nil
}
