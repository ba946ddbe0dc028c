package session

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRedTeamDiscoveryBoardBounded: whoever can push writes a state ref
// whose discovery board is 63 MiB of tiny, distinct, valid lines (within
// the 64 MiB a state file may hold): every line was kept, 778,000
// discoveries (1.2 GiB allocated, 340 MiB held), and each went into the
// run's report. At most MaxDiscoveries are read, in the board's order.
// Not parallel: it measures the process's allocations.
func TestRedTeamDiscoveryBoardBounded(t *testing.T) {
	var b strings.Builder
	typ := DiscoveryTypes()[0]
	for i := 0; b.Len() < 63<<20; i++ {
		fmt.Fprintf(&b, `{"ts":"2025-01-01T00:00:00Z","worker":"E","type":%q,"data":{"a":%d}}`+"\n", typ, i)
	}
	p := filepath.Join(t.TempDir(), DiscoveriesFile)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ds, err := ReadDiscoveries(p, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runtime.ReadMemStats(&after)
	if err != nil || len(ds) != MaxDiscoveries {
		t.Fatalf("read %d discoveries, %v; want the first %d", len(ds), err, MaxDiscoveries)
	}
	if string(ds[0].Data) != `{"a":0}` || string(ds[len(ds)-1].Data) != fmt.Sprintf(`{"a":%d}`, MaxDiscoveries-1) {
		t.Errorf("not the board's first discoveries: %s … %s", ds[0].Data, ds[len(ds)-1].Data)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Errorf("reading the board allocated %d MiB; want at most 256 MiB", got>>20)
	}
}
