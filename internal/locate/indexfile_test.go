package locate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// diskTableOf encodes t alone and reads it back as a table left in its
// file, as readIndex does.
func diskTableOf(t *testing.T, tb table) (table, []byte) {
	t.Helper()
	e := &encoder{}
	e.table(tb)
	f := &indexFile{r: bytes.NewReader(e.buf), size: int64(len(e.buf))}
	c := &cursor{f: f}
	got := c.table()
	if c.err != nil || c.pos != f.size {
		t.Fatalf("reading the table back: %v (at %d of %d)", c.err, c.pos, f.size)
	}
	return got, e.buf
}

// TestDiskTableLookups reads tables of every size around a block's from a
// file: each key finds its value, whichever block it falls in, and keys
// the table does not hold find nothing.
func TestDiskTableLookups(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, tableBlock - 1, tableBlock, tableBlock + 1, 5*tableBlock + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			b := tableBuilder{}
			for i := 0; i < n; i++ {
				// Keys of differing lengths, some empty values.
				b[fmt.Sprintf("k%0*d", 1+i%4, i)] = bytes.Repeat([]byte{byte(i)}, i%3)
			}
			built := b.build()
			got, _ := diskTableOf(t, built)
			sameTable(t, "table", &built, &got)
		})
	}
}

// TestDiskTableDamage changes one stored offset of a table left in its
// file: a lookup through it finds nothing, records the damage for Rank to
// report, and never reads outside the file.
func TestDiskTableDamage(t *testing.T) {
	t.Parallel()
	b := tableBuilder{}
	for i := 0; i < 3*tableBlock; i++ {
		b[fmt.Sprintf("key%03d", i)] = []byte{byte(i), 1}
	}
	built := b.build()
	_, data := diskTableOf(t, built)
	for _, tc := range []struct {
		name string
		// at finds the 4 bytes to overwrite in the encoded table.
		at func(d *diskTable) int64
	}{
		{"key offset past the keys", func(d *diskTable) int64 { return d.koffAt + 4*(tableBlock+3) }},
		{"value offset past the values", func(d *diskTable) int64 { return d.voffAt + 4*(tableBlock+4) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := bytes.Clone(data)
			probe, _ := diskTableOf(t, built)
			binary.LittleEndian.PutUint32(bad[tc.at(probe.disk):], 1<<30)
			f := &indexFile{r: bytes.NewReader(bad), size: int64(len(bad))}
			c := &cursor{f: f}
			got := c.table()
			if c.err != nil {
				t.Fatalf("the damage is in a part read lazily, yet loading failed: %v", c.err)
			}
			if v := got.get("key035"); v != nil {
				t.Errorf("damaged lookup returned %x", v)
			}
			if err := f.readErr(); !errors.Is(err, errIndexDamaged) && !errors.Is(err, errShortIndex) {
				t.Errorf("damage recorded as %v", err)
			}
			if v := got.get("key001"); v == nil {
				t.Error("a lookup in an undamaged block failed")
			}
		})
	}
}

// TestLoadedIndexClosed checks that a loaded index reads its file until
// Close and that ranking after Close fails rather than ranking on nothing.
func TestLoadedIndexClosed(t *testing.T) {
	t.Parallel()
	ix := reopenProject(t)
	if !ix.fromCache || ix.src == nil {
		t.Fatal("second open did not load the saved index")
	}
	if rs, err := ix.Rank("`to_metres`", 1, Options{}); err != nil || len(rs) == 0 || rs[0].Path != "geo/units.py" {
		t.Fatalf("loaded index: %v %v", pathsOf(rs), err)
	}
	closeThenRankFails(t, ix)
}

// reopenProject opens the project tree twice with one cache directory and
// returns the second index, the one that finds the first's saved state.
func reopenProject(t *testing.T) *Index {
	t.Helper()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	opts := repomap.Options{CacheDir: t.TempDir()}
	ctx := context.Background()
	if _, err := Open(ctx, dir, opts); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// closeThenRankFails closes ix and checks that ranking on it afterwards
// fails rather than ranking on nothing.
func closeThenRankFails(t *testing.T, ix *Index) {
	t.Helper()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if rs, err := ix.Rank("`to_metres`", 1, Options{}); err == nil {
		t.Errorf("ranking after Close gave %v and no error", pathsOf(rs))
	}
}

// TestLoadedIndexReadsLittle checks that a query on a saved index reads
// the parts its terms need, not the file: on a generated 2,000-file tree
// it reads under a quarter of the index file, the file table included
// (17% measured), and ranks exactly as the index it was saved from.
func TestLoadedIndexReadsLittle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target, query := repomaptest.GenerateRepo(t, dir, 2000)
	opts := repomap.Options{CacheDir: t.TempDir()}
	ctx := context.Background()
	built, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := built.Rank(query, 100, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !ix.fromCache {
		t.Fatal("second open did not load the saved index")
	}
	got, err := ix.Rank(query, 100, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].Path != target || !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded index ranked %v, want %v", pathsOf(got), pathsOf(want))
	}
	read, size := ix.src.bytesRead.Load(), ix.src.size
	t.Logf("read %d of %d bytes of the index file (%.1f%%)", read, size, 100*float64(read)/float64(size))
	if read > size/4 {
		t.Errorf("a query read %d of the index file's %d bytes, want at most a quarter", read, size)
	}
}
