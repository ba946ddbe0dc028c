package locate

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestOpenCachesIndex checks that a second query on an unchanged tree loads
// the saved index (and ranks exactly as the built one), and that an edit
// makes Open rebuild rather than answer from a stale index.
func TestOpenCachesIndex(t *testing.T) {
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	cache := t.TempDir()
	ctx := context.Background()
	opts := repomap.Options{CacheDir: cache}
	q := "Traceback:\n  File \"geo/io/reader.py\", line 5, in read_geojson\n`to_metres` and mercator projection are wrong"

	first, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.fromCache {
		t.Fatal("first open claims a cache hit")
	}
	idx, _ := filepath.Glob(filepath.Join(cache, "locate-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("index files = %v", idx)
	}
	if maps, _ := filepath.Glob(filepath.Join(cache, "repomap-*.gob")); len(maps) != 0 {
		t.Errorf("locate wrote a map cache too: %v", maps)
	}
	second, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !second.fromCache {
		t.Fatal("second open rebuilt the index")
	}
	want, err := first.Rank(q, 10, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := second.Rank(q, 10, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cached index ranks differently:\n got %+v\nwant %+v", got, want)
	}

	// An edit in the work tree changes the state key.
	repomaptest.WriteFiles(t, dir, map[string]string{"geo/projection.py": "def lambert(lat, lon):\n    return lat\n"})
	third, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Open loaded the index of the last query before the key was known;
	// once it is, the edited tree's own index takes its place.
	if err := waitKey(third); err != nil {
		t.Fatal(err)
	}
	if third.fromCache {
		t.Fatal("edited tree answered from the old index")
	}
	rs, err := third.Rank("lambert projection", 3, Options{})
	if err != nil || len(rs) == 0 || rs[0].Path != "geo/projection.py" {
		t.Errorf("after edit: %v %v", pathsOf(rs), err)
	}
}

// TestIndexFileDamage checks that a truncated or foreign index file is
// refused with an error (and Open rebuilds), never read as an index.
func TestIndexFileDamage(t *testing.T) {
	ix := NewIndex(buildProject(t))
	data := ix.encode()
	back, err := decodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.files, ix.files) || !reflect.DeepEqual(back.prior, ix.prior) {
		t.Error("file table does not survive encoding")
	}
	for name, pair := range map[string][2]*table{"content": {&ix.content, &back.content}, "paths": {&ix.pathTerms, &back.pathTerms},
		"symbols": {&ix.symTerms, &back.symTerms}, "definitions": {&ix.defs, &back.defs}, "modules": {&ix.modules, &back.modules},
		"base names": {&ix.bases, &back.bases}, "exports": {&ix.exports, &back.exports}} {
		sameTable(t, name, pair[0], pair[1])
	}
	for i := range ix.files {
		if !slices.Equal(back.deps(i), ix.deps(i)) || !slices.Equal(back.dependents(i), ix.dependents(i)) {
			t.Errorf("imports of %s do not survive encoding: %v %v, want %v %v", ix.files[i].path, back.deps(i), back.dependents(i), ix.deps(i), ix.dependents(i))
		}
	}
	for _, n := range []int{0, 10, len(indexMagic) + 3, len(data) / 2, len(data) - 1} {
		if _, err := decodeIndex(data[:n]); err == nil {
			t.Errorf("index truncated to %d bytes accepted", n)
		}
	}
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	cache := t.TempDir()
	opts := repomap.Options{CacheDir: cache}
	if _, err := Open(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(cache, "locate-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("index files = %v", idx)
	}
	if err := os.WriteFile(idx[0], data[:len(data)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.fromCache {
		t.Error("damaged index was loaded")
	}
	if rs, err := again.Rank("`to_metres`", 1, Options{}); err != nil || len(rs) == 0 || rs[0].Path != "geo/units.py" {
		t.Errorf("after rebuild: %v %v", pathsOf(rs), err)
	}
}

// sameTable checks that got, a table read back from an index file, holds
// exactly want's keys and values: each key of want, in order, and keys
// before, between and after them that it does not hold.
func sameTable(t *testing.T, name string, want, got *table) {
	t.Helper()
	if want.disk != nil || got.disk == nil {
		t.Fatalf("%s: want a built table and a loaded one", name)
	}
	absent := []string{"", "\x00", strings.Repeat("~", 40)}
	for i := 0; i < want.len(); i++ {
		k := want.key(i)
		if v := got.get(k); string(v) != string(want.val(i)) || v == nil {
			t.Errorf("%s[%q] = %x, want %x", name, k, v, want.val(i))
		}
		absent = append(absent, k+"\x00")
	}
	for _, k := range absent {
		if want.get(k) == nil && got.get(k) != nil {
			t.Errorf("%s holds %q, which it was not given", name, k)
		}
	}
	if err := got.disk.f.readErr(); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

// builtIndex is the index of dir built in memory, as Build builds it.
func builtIndex(t *testing.T, dir string) *Index {
	t.Helper()
	_, ix, err := Build(context.Background(), dir, repomap.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestFileTableDamage refuses a file table whose columns, read into the
// file entries as they stream, disagree with the number of files, or
// whose path offsets decrease, pass the paths or stop short of them.
func TestFileTableDamage(t *testing.T) {
	t.Parallel()
	data := NewIndex(buildProject(t)).encode()
	if _, err := decodeIndex(data); err != nil {
		t.Fatal(err)
	}
	// The file table: the paths' length and text, then the count of the
	// path offsets (files plus one), the offsets, and the count of the
	// lengths before them.
	total := binary.LittleEndian.Uint32(data[len(indexMagic):])
	offsAt := len(indexMagic) + 4 + int(total)
	n := int(binary.LittleEndian.Uint32(data[offsAt:])) - 1
	lengthsAt := offsAt + 4 + 4*(n+1)
	if n < 3 {
		t.Fatalf("the project has %d files, want at least 3", n)
	}
	for _, tc := range []struct {
		name     string
		at       int
		v        uint32
		disagree bool
	}{
		{"offsets decrease", offsAt + 4 + 4*1, total, false},
		{"an offset past the paths", offsAt + 4 + 4*1, total + 1, false},
		{"the last offset short of the paths", offsAt + 4 + 4*n, total - 1, false},
		{"fewer lengths than files", lengthsAt, uint32(n - 1), true},
		{"more lengths than files", lengthsAt, uint32(n + 1), true},
		{"more offsets than the file holds", offsAt, 1 << 30, false},
	} {
		d := slices.Clone(data)
		binary.LittleEndian.PutUint32(d[tc.at:], tc.v)
		_, err := decodeIndex(d)
		if err == nil {
			t.Errorf("%s: index accepted", tc.name)
			continue
		}
		if tc.disagree && !errors.Is(err, errFilesDisagree) {
			t.Errorf("%s: %v, want %v", tc.name, err, errFilesDisagree)
		}
	}
}
