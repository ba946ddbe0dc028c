package repomap

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
			out, err := exec.Command("git", "-C", dir, "ls-files", "-co", "--exclude-standard", "-z").Output()
			if err != nil {
				b.Fatal(err)
			}
			paths := bytes.Split(out, []byte{0})
			var wg sync.WaitGroup
			var total atomic.Int64
			next := make(chan string)
			for w := 0; w < runtime.GOMAXPROCS(0); w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for p := range next {
						data, err := os.ReadFile(filepath.Join(dir, p))
						if err == nil {
							total.Add(int64(len(data)))
						}
					}
				}()
			}
			for _, p := range paths {
				if len(p) > 0 {
					next <- string(p)
				}
			}
			close(next)
			wg.Wait()
			b.SetBytes(total.Load())
		}
	})
}

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
			stop := peakHeap(b)
			defer stop()
			for i := 0; i < b.N; i++ {
				m, err := Build(context.Background(), dir, tc.opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(m.Entries) < benchFiles {
					b.Fatalf("mapped %d files", len(m.Entries))
				}
			}
		})
	}
}

func BenchmarkBuildCached(b *testing.B) {
	dir := generated(b)
	if _, err := Build(context.Background(), dir, Options{}); err != nil {
		b.Fatal(err)
	}
	b.Run("files=20k", func(b *testing.B) {
		stop := peakHeap(b)
		defer stop()
		for i := 0; i < b.N; i++ {
			m, err := Build(context.Background(), dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if !m.FromCache {
				b.Fatal("cache missed")
			}
		}
	})
}
