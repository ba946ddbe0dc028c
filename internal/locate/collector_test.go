package locate

import (
	"context"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// fakeCollector stands for the runtime's settings: what a hold set, and
// every percent and limit it was given, in order.
type fakeCollector struct {
	mu       sync.Mutex
	percent  int
	limit    int64
	percents []int
	limits   []int64
}

func newFakeCollector(percent int, limit int64) *fakeCollector {
	return &fakeCollector{percent: percent, limit: limit}
}

func (f *fakeCollector) setPercent(p int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.percent
	f.percent = p
	f.percents = append(f.percents, p)
	return old
}

func (f *fakeCollector) setLimit(b int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.limit
	f.limits = append(f.limits, b)
	if b >= 0 {
		f.limit = b
	}
	return old
}

func (f *fakeCollector) state() (int, int64, []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percent, f.limit, append([]int(nil), f.percents...)
}

// TestCollectorHold checks a hold's settings and that release puts back
// the process's own, once: a lower limit the process had is kept, and a
// collector already off stays off.
func TestCollectorHold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		percent          int
		limit, heldLimit int64
	}{
		{"defaults", 100, math.MaxInt64, queryHeapLimit},
		{"GOGC=50", 50, math.MaxInt64, queryHeapLimit},
		{"lower limit kept", 100, 32 << 20, 32 << 20},
		{"GOGC=off", -1, 200 << 20, queryHeapLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gc := newFakeCollector(tc.percent, tc.limit)
			h := holdCollector(gc, queryHeapLimit)
			// A collection in the test binary may release the hold at
			// any time (as it should), so what it set is read from the
			// calls.
			if _, _, ps := gc.state(); len(ps) == 0 || ps[0] != -1 {
				t.Errorf("percents set %v, want -1 first", ps)
			}
			gc.mu.Lock()
			if ls := gc.limits; len(ls) < 2 || ls[0] >= 0 || ls[1] != tc.heldLimit {
				t.Errorf("limits set %v, want a read, then %d", ls, tc.heldLimit)
			}
			gc.mu.Unlock()
			h.release()
			h.release()
			p, l, ps := gc.state()
			if p != tc.percent || l != tc.limit {
				t.Errorf("after release: percent %d limit %d, want %d %d", p, l, tc.percent, tc.limit)
			}
			if len(ps) != 2 {
				t.Errorf("percents set %v: released more than once", ps)
			}
		})
	}
}

// TestCollectorHoldEndsAtCollection checks that the first collection,
// whatever starts it, ends a hold: a query that outgrows the limit is
// collected at the usual pace from then on, not at its limit every time.
func TestCollectorHoldEndsAtCollection(t *testing.T) {
	t.Parallel()
	gc := newFakeCollector(100, math.MaxInt64)
	h := holdCollector(gc, queryHeapLimit)
	runtime.GC()
	<-h.released // the sentinel's cleanup runs after that collection
	if p, l, _ := gc.state(); p != 100 || l != math.MaxInt64 {
		t.Errorf("after a collection: percent %d limit %d, want 100 and no limit", p, l)
	}
}

// TestOpenForOneQueryHoldsCollector checks where a query opened for one
// query holds the collector: not while it builds the index (a cold query),
// while it loads and ranks the last query's index, and no longer once it
// is closed, or once the guess proved wrong and the tree's index was
// built. Not parallel: the package's other tests collect garbage.
func TestOpenForOneQueryHoldsCollector(t *testing.T) {
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	opts := repomap.Options{CacheDir: t.TempDir()}
	ctx := context.Background()
	hist := historySource{dir: dir, rev: "HEAD"}
	open1 := func(gc collector) *Index {
		t.Helper()
		ix, err := open(ctx, dir, opts, hist, gc)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}

	cold := newFakeCollector(100, math.MaxInt64)
	ix := open1(cold)
	if _, err := ix.Rank("`to_metres`", 3, Options{}); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if _, _, ps := cold.state(); len(ps) != 0 {
		t.Errorf("a cold query set the collector's percent: %v", ps)
	}

	warm := newFakeCollector(100, math.MaxInt64)
	ix = open1(warm)
	if _, _, ps := warm.state(); len(ps) == 0 || ps[0] != -1 {
		t.Errorf("a query on the last index did not hold the collector: %v", ps)
	}
	if rs, err := ix.Rank("`to_metres`", 1, Options{}); err != nil || len(rs) == 0 || rs[0].Path != "geo/units.py" {
		t.Errorf("held query ranked %v %v", pathsOf(rs), err)
	}
	ix.Close()
	if p, l, _ := warm.state(); p != 100 || l != math.MaxInt64 {
		t.Errorf("after Close: percent %d limit %d", p, l)
	}

	repomaptest.WriteFiles(t, dir, map[string]string{"geo/conic.py": "def lambert_conformal_conic(lat, lon):\n    return lat\n"})
	stale := newFakeCollector(100, math.MaxInt64)
	ix = open1(stale)
	defer ix.Close()
	if _, _, ps := stale.state(); len(ps) == 0 || ps[0] != -1 {
		t.Errorf("the query after an edit did not hold the collector on its guess: %v", ps)
	}
	if rs, err := ix.Rank("lambert conformal conic", 1, Options{}); err != nil || len(rs) == 0 || rs[0].Path != "geo/conic.py" {
		t.Fatalf("after the edit ranked %v %v", pathsOf(rs), err)
	}
	if p, l, _ := stale.state(); p != 100 || l != math.MaxInt64 {
		t.Errorf("the tree's index was built under the hold: percent %d limit %d", p, l)
	}
}
