package locate

import (
	"context"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// BenchmarkLocate measures what a planex locate query costs on a generated
// 20,000-file repository, each as a multiple of the read-all floor (git
// ls-files + read every file) measured in the same run (x-floor):
//
//   - cold: no cache; map the tree, build the index, save both, rank.
//   - cached: a second query on the same tree; load the ready index, rank.
//   - rank: rank alone on an open index.
//   - baseline: plain BM25 on an open index.
func BenchmarkLocate(b *testing.B) {
	dir := b.TempDir()
	target, query := repomaptest.GenerateRepo(b, dir, 20000)
	repomaptest.AwaitSettled(b, dir)
	ctx := context.Background()
	check := func(b *testing.B, rs []Ranked) {
		if len(rs) == 0 || rs[0].Path != target {
			b.Fatalf("top = %v, want %s", pathsOf(rs), target)
		}
	}
	query1 := func(b *testing.B, cache string) {
		ix, err := Open(ctx, dir, repomap.Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		rs, err := ix.Rank(query, 10, Options{})
		if err != nil {
			b.Fatal(err)
		}
		check(b, rs)
	}
	b.Run("cold", func(b *testing.B) {
		floor := repomaptest.Floor(b, dir)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			cache := b.TempDir()
			b.StartTimer()
			query1(b, cache)
		}
		repomaptest.ReportRatio(b, floor)
	})
	warm := b.TempDir()
	query1(b, warm)
	b.Run("cached", func(b *testing.B) {
		floor := repomaptest.Floor(b, dir)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			query1(b, warm)
		}
		repomaptest.ReportRatio(b, floor)
	})
	ix, err := Open(ctx, dir, repomap.Options{CacheDir: warm})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
	}{{"rank", Options{}}, {"baseline", Options{Baseline: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			floor := repomaptest.Floor(b, dir)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ix.Rank(query, 10, tc.opts); err != nil {
					b.Fatal(err)
				}
			}
			repomaptest.ReportRatio(b, floor)
		})
	}
}
