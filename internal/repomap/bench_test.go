package repomap

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// benchFiles is the size of the generated repository for benchmarks.
const benchFiles = 20000

// peakHeap samples the heap while a benchmark runs and reports the peak, so
// memory figures are available without external tools.
func peakHeap(b *testing.B) func() {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	}
}

func generated(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	start := time.Now()
	repomaptest.GenerateRepo(b, dir, benchFiles)
	repomaptest.AwaitSettled(b, dir)
	b.Logf("generated %d files in %s", benchFiles, time.Since(start))
	return dir
}

// BenchmarkGitLsFilesRead is the floor: listing the files with git and
// reading each of them (in parallel, as Build does) with no processing.
func BenchmarkGitLsFilesRead(b *testing.B) {
	dir := generated(b)
	b.Run("files=20k", func(b *testing.B) {
		stop := peakHeap(b)
		defer stop()
		for i := 0; i < b.N; i++ {
			b.SetBytes(repomaptest.ReadAll(b, dir))
		}
	})
}

// BenchmarkBuild maps the repository from scratch; x-floor is its time over
// BenchmarkGitLsFilesRead's, measured in the same run.
func BenchmarkBuild(b *testing.B) {
	dir := generated(b)
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"git-ls-files", Options{NoCache: true}},
		{"walk+gitignore", Options{NoCache: true, NoGit: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			floor := repomaptest.Floor(b, dir)
			stop := peakHeap(b)
			defer stop()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m, err := Build(context.Background(), dir, tc.opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(m.Entries) < benchFiles {
					b.Fatalf("mapped %d files", len(m.Entries))
				}
			}
			repomaptest.ReportRatio(b, floor)
		})
	}
}

// BenchmarkBuildCached loads the map of an unchanged tree from the cache.
func BenchmarkBuildCached(b *testing.B) {
	dir := generated(b)
	cache := b.TempDir()
	if _, err := Build(context.Background(), dir, Options{CacheDir: cache}); err != nil {
		b.Fatal(err)
	}
	b.Run("files=20k", func(b *testing.B) {
		floor := repomaptest.Floor(b, dir)
		stop := peakHeap(b)
		defer stop()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m, err := Build(context.Background(), dir, Options{CacheDir: cache})
			if err != nil {
				b.Fatal(err)
			}
			if !m.FromCache {
				b.Fatal("cache missed")
			}
		}
		repomaptest.ReportRatio(b, floor)
	})
}
