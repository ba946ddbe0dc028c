package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/plural"
)

// ErrTooManyChanges is returned by DiffTrees for two trees whose
// differences are more than planex lists: a commit anyone can push (a
// task commit on the run branch, a matrix task's result) or a worktree an
// agent filled would otherwise hold planex's memory to what they chose.
var ErrTooManyChanges = errors.New("too many changed files")

// The bounds of one change list: its files, the bytes of their names, and
// one record of git's answer (a path longer than that is no file a
// checkout can hold).
const (
	maxChanges      = 100_000
	maxChangeBytes  = 16 << 20
	maxRecordLength = 64 << 10
)

// DiffTrees lists the paths that differ between two tree-ish objects,
// sorted by path, reading git's answer as it comes: at most maxChanges
// files with maxChangeBytes of names in all, else ErrTooManyChanges.
func (r *Repo) DiffTrees(ctx context.Context, from, to string) ([]Change, error) {
	if err := revisions(from, to); err != nil {
		return nil, fmt.Errorf("comparing trees: %w", err)
	}
	var changes []Change
	names := 0
	var meta []string
	err := streamRecords(ctx, r, "", nil, []string{"diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", from, to}, func(rec []byte) error {
		// Records: ":oldmode newmode oldsha newsha status\0path\0".
		if meta == nil {
			if meta = strings.Fields(strings.TrimPrefix(string(rec), ":")); len(meta) < 5 {
				meta = []string{}
			}
			return nil
		}
		if len(meta) >= 5 {
			if names += len(rec); len(changes) == maxChanges || names > maxChangeBytes {
				return fmt.Errorf("comparing trees %s and %s: more than %s or %d MiB of names changed: %w", from, to, plural.Count(maxChanges, "file", "files"), maxChangeBytes>>20, ErrTooManyChanges)
			}
			changes = append(changes, Change{Path: string(rec), Mode: meta[1], Blob: meta[3]})
		}
		meta = nil
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrTooManyChanges) {
			return nil, err
		}
		return nil, fmt.Errorf("comparing trees: %w", err)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}

// gitlinks are the paths the index env names holds as submodules (a
// function, not a method: Repo is at its bound of methods), read as git
// lists them, so that an index an agent's files filled costs no more
// than its submodules.
func gitlinks(ctx context.Context, r *Repo, dir string, env []string) (map[string]bool, error) {
	links := map[string]bool{}
	err := streamRecords(ctx, r, dir, env, []string{"ls-files", "-z", "--stage"}, func(rec []byte) error {
		if meta, path, ok := bytes.Cut(rec, []byte("\t")); ok && bytes.HasPrefix(meta, []byte("160000 ")) {
			links[string(path)] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing submodules: %w", err)
	}
	return links, nil
}

// streamRecords runs git as r.git does and hands each NUL-terminated
// record of its answer to fn, holding one record (at most
// maxRecordLength bytes) at a time.
func streamRecords(ctx context.Context, r *Repo, dir string, extraEnv, args []string, fn func(rec []byte) error) error {
	if dir == "" {
		dir = r.Root
	}
	env := append(append(r.gitEnv(r.Root), r.env...), extraEnv...)
	c := call{dir: dir, env: env, config: r.config, args: args, scans: r.scans}
	return stream(ctx, c, func(out io.Reader) error {
		br := bufio.NewReaderSize(out, maxRecordLength)
		for {
			rec, err := br.ReadSlice(0)
			switch {
			case errors.Is(err, bufio.ErrBufferFull):
				return fmt.Errorf("git %s: a record longer than %d bytes: %w", args[0], maxRecordLength, ErrTooManyChanges)
			case errors.Is(err, io.EOF):
				if len(rec) > 0 {
					return fn(rec)
				}
				return nil
			case err != nil:
				return err
			}
			if err := fn(rec[:len(rec)-1]); err != nil {
				return err
			}
		}
	})
}
