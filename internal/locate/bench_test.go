package locate

import (
	"context"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// BenchmarkRank measures ranking on a generated 20,000-file repository:
// "index+rank" is what one CLI query costs after the map is cached,
// "rank" is a further query on a prepared index.
func BenchmarkRank(b *testing.B) {
	dir := b.TempDir()
	target, query := repomaptest.GenerateRepo(b, dir, 20000)
	m, err := repomap.Build(context.Background(), dir, repomap.Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	check := func(b *testing.B, rs []Ranked) {
		if len(rs) == 0 || rs[0].Path != target {
			b.Fatalf("top = %v, want %s", pathsOf(rs), target)
		}
	}
	b.Run("index+rank", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rs, err := Rank(m, query, 10, Options{})
			if err != nil {
				b.Fatal(err)
			}
			check(b, rs)
		}
	})
	ix := NewIndex(m)
	b.Run("rank", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rs, err := ix.Rank(query, 10, Options{})
			if err != nil {
				b.Fatal(err)
			}
			check(b, rs)
		}
	})
	b.Run("baseline", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ix.Rank(query, 10, Options{Baseline: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
