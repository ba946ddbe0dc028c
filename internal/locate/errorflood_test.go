package locate

import (
	"context"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestRedTeamErrorFloodBounded: anyone who can open an issue writes its
// text, which the Action ranks files for. An issue of 64 KiB of
// "ValueError: " lines of words every file holds made the error-text
// signal look up some 20,000 runs of three words, holding every run's
// candidate files at once: memory and time grew with the repository
// (328 MiB and 2.4 s on 8,000 files). The runs looked up are bounded
// (maxMessageWindows) and only their counts are held while they are
// ordered, so the query allocates little however long the error
// lines are. Not parallel: it measures the process's allocations.
func TestRedTeamErrorFloodBounded(t *testing.T) {
	ix := floodedIndex(t)
	vocab := strings.Fields(floodWords)
	r := rand.New(rand.NewSource(1)) // the same issue each run
	var b strings.Builder
	for i := 0; b.Len() < DefaultMaxQueryBytes-1024; i++ {
		if i%250 == 0 {
			b.WriteString("\nValueError: ")
		}
		b.WriteString(vocab[r.Intn(len(vocab))] + " ")
	}
	flood := b.String()
	plain := rankAllocs(t, ix, strings.ReplaceAll(flood, "ValueError:", "and then"))
	got := rankAllocs(t, ix, flood)
	t.Logf("a 64 KiB issue of error lines allocated %.1f MiB; the same words without them %.1f MiB", float64(got)/(1<<20), float64(plain)/(1<<20))
	if got > plain+24<<20 {
		t.Errorf("a 64 KiB issue of error lines allocated %.1f MiB, want at most 24 MiB more than the same words without them (%.1f MiB)", float64(got)/(1<<20), float64(plain)/(1<<20))
	}
}

// TestRedTeamQuoteFloodBounded: as TestRedTeamErrorFloodBounded, for the
// prose quotes of an issue: 64 KiB of short quotes of words every file
// holds were each looked up (some 2,800 posting-list intersections with
// files read, 776 MiB allocated and 1.1 s on 8,000 files). The quotes
// looked up are bounded (maxQuotedPhrases). Not parallel: it measures the
// process's allocations.
func TestRedTeamQuoteFloodBounded(t *testing.T) {
	ix := floodedIndex(t)
	vocab := strings.Fields(floodWords)
	r := rand.New(rand.NewSource(1)) // the same issue each run
	var b strings.Builder
	for b.Len() < DefaultMaxQueryBytes-1024 {
		b.WriteString("`" + vocab[r.Intn(len(vocab))] + " " + vocab[r.Intn(len(vocab))] + " " + vocab[r.Intn(len(vocab))] + "` ")
	}
	flood := b.String()
	plain := rankAllocs(t, ix, strings.ReplaceAll(flood, "`", " "))
	got := rankAllocs(t, ix, flood)
	t.Logf("a 64 KiB issue of quotes allocated %.1f MiB; the same words unquoted %.1f MiB", float64(got)/(1<<20), float64(plain)/(1<<20))
	if got > plain+16<<20 {
		t.Errorf("a 64 KiB issue of quotes allocated %.1f MiB, want at most 16 MiB more than the same words unquoted (%.1f MiB)", float64(got)/(1<<20), float64(plain)/(1<<20))
	}
}

// floodWords are words every file of a generated tree holds.
const floodWords = "return value self path join str none def func string name sprintf import struct count handles returns utilities keeps the of for os int"

// floodedIndex is the index of a generated tree of 400 files, warmed by
// one query, closed when t ends.
func floodedIndex(t *testing.T) *Index {
	t.Helper()
	dir := t.TempDir()
	repomaptest.GenerateRepo(t, dir, 400)
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Rank("warm up the index", 5, Options{}); err != nil {
		t.Fatal(err)
	}
	return ix
}

// rankAllocs is how many bytes the process allocated ranking q on ix.
func rankAllocs(t *testing.T, ix *Index, q string) uint64 {
	t.Helper()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if _, err := ix.Rank(q, 5, Options{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}
