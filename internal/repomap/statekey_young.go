package repomap

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"io"
	"strings"

	"github.com/planexhq/planex/internal/safefile"
)

// A file modified within the racy window counts in the key by its
// contents, as its stamp may not show a second write in the same clock
// tick. Were the contents counted only while the file is young, the key
// would change when it ages (the same tree, two keys: a cache miss). So
// the key keeps counting a file by its contents for as long as its stamp
// stays what it was when the contents were first hashed, and each such
// file's hash is saved beside the state record:
//
//   - young (changed within the window): its contents are read and hashed,
//     and the sum saved, not yet confirmed;
//   - old, with a saved sum for this very stamp that is not confirmed: the
//     contents are read again (a write in the tick the first read saw
//     would have left the stamp alone); that sum counts, and is saved as
//     confirmed, for the stamp is now too old for any later write to keep
//     it;
//   - old, with a confirmed sum for this stamp: the saved sum counts,
//     unread, as a stamp would;
//   - old, no sum for this stamp: the stamp alone counts.
//
// So the key of a file with unchanged contents is the same young and old,
// and a write hidden from the stamp while the file was young is caught by
// the second read. The sums are planex's own cache data, read as its other
// caches are.

// youngVersion changes with youngSums' meaning or encoding.
const youngVersion = "planex-young-v1"

// youngSum is the contents hash of one file taken at the stamp Stamp.
type youngSum struct {
	Path      string
	Stamp     stamp
	Sum       [32]byte
	Confirmed bool
}

type youngSums struct {
	Version string
	Root    string
	Files   []youngSum
}

func (k *stateKeyer) youngPath() string {
	return strings.TrimSuffix(k.recordPath(), ".gob") + ".young"
}

// loadYoung returns the saved sums by path (empty when there are none).
func (k *stateKeyer) loadYoung() map[string]youngSum {
	out := map[string]youngSum{}
	f, err := safefile.OpenNoFollow(k.youngPath())
	if err != nil {
		return out
	}
	defer f.Close()
	var y youngSums
	if err := gob.NewDecoder(io.LimitReader(f, maxRecordBytes)).Decode(&y); err != nil || y.Version != youngVersion || y.Root != k.root {
		return out
	}
	for _, s := range y.Files {
		out[s.Path] = s
	}
	return out
}

// saveYoung saves the sums a key took, unless they are the ones loaded.
func (k *stateKeyer) saveYoung(prev map[string]youngSum, next []youngSum) error {
	if len(prev) == len(next) {
		same := true
		for _, s := range next {
			if p, ok := prev[s.Path]; !ok || p != s {
				same = false
				break
			}
		}
		if same {
			return nil
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(youngSums{Version: youngVersion, Root: k.root, Files: next}); err != nil {
		return fmt.Errorf("encoding young files' sums: %w", err)
	}
	if err := safefile.Write(k.youngPath(), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("saving young files' sums: %w", err)
	}
	return nil
}

// contentPart is what a file of stamp s adds to the key beyond its stamp
// (see above): a contents hash, or nil. It reads the file through *file
// when it must, and appends the sum to keep to *next.
func (k *stateKeyer) contentPart(p string, s stamp, young bool, prev map[string]youngSum, file *[]byte, next *[]youngSum) []byte {
	if s.Missing || !s.Regular || s.Size > k.opts.MaxFileBytes {
		return nil
	}
	if !young && len(prev) == 0 {
		// Mostly no file was young at the last key: nothing to look up.
		return nil
	}
	saved, ok := prev[p]
	ok = ok && saved.Stamp == s
	if !young && !ok {
		return nil
	}
	if !young && saved.Confirmed {
		*next = append(*next, saved)
		return saved.Sum[:]
	}
	k.contentReads++
	var sum []byte
	*file, sum = contentSum((*file)[:0], k.root, p, k.opts.MaxFileBytes)
	if sum == nil {
		// Not a regular file when opened: its stamp says all.
		return nil
	}
	y := youngSum{Path: p, Stamp: s, Confirmed: !young}
	copy(y.Sum[:], sum)
	*next = append(*next, y)
	return sum
}
