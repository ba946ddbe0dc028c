package repomap

import (
	"testing"
)

// TestCacheRejectsDepsOutOfRange: a cached map whose file depends on a
// file number outside its entries (a planted or damaged cache) is not
// loaded, so nothing indexes Entries with it; the same map with numbers
// in range loads.
func TestCacheRejectsDepsOutOfRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		deps []int32
		ok   bool
	}{
		{name: "in range", deps: []int32{1}, ok: true},
		{name: "past the end", deps: []int32{2}},
		{name: "negative", deps: []int32{-1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			m := &Map{Entries: []File{{Path: "a.go", Deps: tc.deps}, {Path: "b.go"}}}
			if err := saveCache(dir, "k", m); err != nil {
				t.Fatal(err)
			}
			got, err := loadCache(dir, "k")
			if tc.ok && (err != nil || got.DepPath(got.Entries[0].Deps[0]) != "b.go") {
				t.Errorf("loading: %v", err)
			}
			if !tc.ok && err == nil {
				t.Errorf("a cache with deps %v loaded", tc.deps)
			}
		})
	}
}
