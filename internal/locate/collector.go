package locate

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// A query on a saved index allocates a few tens of megabytes at 100,000
// files (the file table, five score arrays, the key's chunks) and keeps
// most of it to the end; from the runtime's 4 MB starting goal the
// collector ran five times for it, scanning the growing heap each time and
// using every idle processor for marking, about a tenth of the query's
// CPU. A process that answers one query and exits (planex locate) needs
// none of that memory back. So OpenForOneQuery holds the collector off
// while a guessed index is loaded and ranked: no collection until the
// process's memory reaches queryHeapLimit. The hold ends at the first
// collection whatever caused it (the limit reached, or an explicit
// runtime.GC on the path that builds an index), when the guess proves
// wrong and an index is built, and at Close; the settings the process had
// are put back, so a larger tree than the limit suits costs one
// collection more than before, not a collector stuck at its limit.

// queryHeapLimit is the memory (the runtime's own measure: heap, stacks
// and their bookkeeping) a held query may reach before the collector runs.
// A second query at 100,000 files reached 45-58 MiB of peak RSS with no
// collection; 96 MiB keeps a query under issue 33's 128 MiB with the
// binary's own pages.
const queryHeapLimit = 96 << 20

// collector is the runtime's collector settings a hold changes.
type collector interface {
	// setPercent is debug.SetGCPercent: it sets the percent and
	// returns the one before.
	setPercent(percent int) int
	// setLimit is debug.SetMemoryLimit: it sets the limit (a negative
	// one reads it) and returns the one before.
	setLimit(bytes int64) int64
}

// runtimeCollector is the process's own collector.
type runtimeCollector struct{}

func (runtimeCollector) setPercent(percent int) int { return debug.SetGCPercent(percent) }
func (runtimeCollector) setLimit(bytes int64) int64 { return debug.SetMemoryLimit(bytes) }

// collectorHold is one hold on the collector; release puts back what
// was there before, once.
type collectorHold struct {
	gc      collector
	percent int
	limit   int64
	once    sync.Once
	// released is closed once the settings are put back.
	released chan struct{}
}

// holdCollector stops gc's collections below limit (or the lower limit
// the process already had) until the hold is released, which the first
// collection does.
func holdCollector(gc collector, limit int64) *collectorHold {
	h := &collectorHold{gc: gc, released: make(chan struct{})}
	h.limit = gc.setLimit(-1)
	gc.setLimit(min(h.limit, limit))
	h.percent = gc.setPercent(-1)
	// Unreachable at once, the sentinel's cleanup runs after the next
	// collection, whatever started it. It is larger than the tiny
	// allocator's blocks, whose cleanups may never run.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(h *collectorHold) { h.release() }, h)
	return h
}

// release puts the collector's settings back; a nil hold has none.
func (h *collectorHold) release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		h.gc.setPercent(h.percent)
		h.gc.setLimit(h.limit)
		close(h.released)
	})
}
