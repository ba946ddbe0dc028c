package locate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/planexhq/planex/internal/safefile"
)

// A query on a built index spends most of its time on the tree's state
// key (a stat of every file) and the ranking, which need each other only
// at the end: the ranking needs to know that the index is the tree's. So
// Open remembers, beside the indexes, which index the last query of a
// work tree used; the next Open loads that one at once and computes the
// state key in the background, Rank ranks on the loaded index meanwhile,
// and only when the key names that same index does it return the ranking.
// Otherwise (the tree or HEAD changed, the key failed) the guessed index is
// dropped and the index of the tree as it is is loaded or built, and
// ranked on, as if the guess had never been made.

// maxLastKeyBytes bounds the remembered key read back: a state key and a
// HEAD prefix are about 80 bytes.
const maxLastKeyBytes = 256

var errIndexClosed = errors.New("index is closed")

// pendingKey is the state key a speculatively opened index waits for.
type pendingKey struct {
	guess  string           // the index key the index was loaded under
	keyed  <-chan indexKeys // the tree's keys, once computed
	reopen func(indexKeys) (*Index, error)
	// hold is the collector held off while the guessed index is
	// queried (nil without OpenForOneQuery): released before an index
	// is built in its place, and at Close.
	hold *collectorHold

	mu      sync.Mutex
	settled bool
	err     error // why the index is unusable after settling
}

// lastKeyPath is the file naming the index root's last query used: one
// per work tree, as worktrees share the cache directory.
func lastKeyPath(dir, root string) string {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "locate-last-"+hex.EncodeToString(sum[:8]))
}

// readLastKey returns the index key root's last query used, or "" when
// none is remembered or what is there is not a key.
func readLastKey(dir, root string) string {
	if dir == "" {
		return ""
	}
	f, err := safefile.OpenNoFollow(lastKeyPath(dir, root))
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLastKeyBytes+1))
	if err != nil || len(data) > maxLastKeyBytes {
		return ""
	}
	key := strings.TrimSpace(string(data))
	if !indexKeyName(key) {
		return ""
	}
	return key
}

// indexKeyName reports whether key can be an index key (hex digits and
// the dash before HEAD's prefix), so that it names a file in the cache
// directory and nothing else.
func indexKeyName(key string) bool {
	if key == "" {
		return false
	}
	for _, c := range key {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

// writeLastKey remembers idxKey as root's last; failing to is no error.
func writeLastKey(log *slog.Logger, dir, root, idxKey string) {
	if err := safefile.Write(lastKeyPath(dir, root), []byte(idxKey+"\n"), 0o644); err != nil {
		log.Debug("locate: last index key not saved", "err", err)
	}
}

// openGuess loads the index saved under guess, or nil.
func openGuess(dir, guess string) *Index {
	if guess == "" {
		return nil
	}
	ix, err := loadIndex(indexPath(dir, guess))
	if err != nil {
		return nil
	}
	ix.fromCache = true
	return ix
}

// settle waits for the state key and, unless it names the index ix was
// loaded under, replaces ix with the tree's own index. It reports whether
// ix changed; p.mu is held.
func (p *pendingKey) settle(ix *Index) (bool, error) {
	if p.settled {
		return false, p.err
	}
	k := <-p.keyed
	p.settled = true
	if k.err == nil && k.idxKey != "" && k.idxKey == p.guess {
		return false, nil
	}
	// Building an index takes the collector's usual pace.
	p.hold.release()
	if err := ix.src.closer.Close(); err != nil {
		return false, fmt.Errorf("closing index file: %w", err)
	}
	// The guessed index's tables are garbage before the tree's is built.
	*ix = Index{pending: p}
	fresh, err := p.reopen(k)
	if err != nil {
		p.err = err
		return true, err
	}
	fresh.pending = p
	*ix = *fresh
	return true, nil
}

// wait settles ix, speculatively opened with p (see settle).
func (p *pendingKey) wait(ix *Index) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.settle(ix)
	return err
}

// rank is Rank on ix, speculatively opened with p: the ranking on the
// guessed index is returned only when the state key confirms the guess,
// else the query is ranked again on the tree's own index.
func (p *pendingKey) rank(ix *Index, query string, k int, opts Options) ([]Ranked, error) {
	p.mu.Lock()
	if p.settled {
		p.mu.Unlock()
		if p.err != nil {
			return nil, p.err
		}
		return ix.rankSettled(query, k, opts)
	}
	defer p.mu.Unlock()
	rs, rankErr := ix.rankSettled(query, k, opts)
	changed, err := p.settle(ix)
	if err != nil {
		return nil, err
	}
	if changed {
		return ix.rankSettled(query, k, opts)
	}
	return rs, rankErr
}

// closePending marks a speculatively opened index that was never
// settled as closed: ranking on it fails from now on, and the key is not
// waited for.
func (p *pendingKey) closePending() {
	p.hold.release()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.settled {
		p.settled, p.err = true, errIndexClosed
	}
}
