package locate

import (
	"math"
	"slices"
	"testing"
)

// TestFeatureColumnsAllocateOnFirstValue checks a signal's column exists
// only once some file holds a value other than zero for it, and that a
// file's row and explicit evidence read back what was set.
func TestFeatureColumnsAllocateOnFirstValue(t *testing.T) {
	t.Parallel()
	fs := newFeatureColumns(5)
	fs.set(fFrame, 2, 0) // zero everywhere: no column
	if fs.cols[fFrame] != nil {
		t.Fatal("setting zero allocated a column")
	}
	fs.set(fContent, 3, 0.5)
	fs.set(fQuoted, 3, 0.25)
	fs.set(fDefines, 3, 0.125)
	fs.set(fQuoted, 1, 1)
	allocated := 0
	for _, col := range fs.cols {
		if col != nil {
			allocated++
			if len(col) != 5 {
				t.Errorf("a column of %d files, want 5", len(col))
			}
		}
	}
	if allocated != 3 {
		t.Errorf("%d columns allocated, want 3 (content, quoted, defines)", allocated)
	}
	var want features
	want[fContent], want[fQuoted], want[fDefines] = 0.5, 0.25, 0.125
	if got := fs.row(3); got != want {
		t.Errorf("row 3 = %v, want %v", got, want)
	}
	w := DefaultWeights()
	if got, want := fs.scorer(w)(3), w.score(&want); got != want {
		t.Errorf("score of file 3 = %v, want the row's %v", got, want)
	}
	if got := fs.explicit(3); got != 0.375 {
		t.Errorf("explicit evidence of file 3 = %v, want 0.375", got)
	}
	if got := fs.at(fFrame, 3); got != 0 {
		t.Errorf("an unset signal reads %v", got)
	}
	fs.clear(3)
	if got := fs.row(3); got != (features{}) {
		t.Errorf("row 3 after clear = %v", got)
	}
	if got := fs.at(fQuoted, 1); got != 1 {
		t.Errorf("clearing file 3 changed file 1: %v", got)
	}
}

// TestSetScaledAsSetLoop checks that setScaled leaves every column as the
// loop it replaced (set(f, i, v/top) for each positive score) did, to the
// bit: with no column yet (scores become the column), with one already
// holding values, with no positive score (no column at all), and with
// scores that are zero, negative or not a number.
func TestSetScaledAsSetLoop(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name   string
		scores []float64
		before map[int]float64 // values set on the column first
	}{
		{"fresh", []float64{0, 3, 1.5, 0, 0.1}, nil},
		{"none positive", []float64{0, 0, -1, 0, nan}, nil},
		{"odd values", []float64{nan, 2, -0.5, math.SmallestNonzeroFloat64, 0}, nil},
		{"infinite", []float64{inf, 1, 0, 0, 0}, nil},
		{"existing column", []float64{0, 3, 0, 1, 0}, map[int]float64{0: 0.7, 3: 0.2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			top := maxOf(tc.scores)
			want, got := newFeatureColumns(len(tc.scores)), newFeatureColumns(len(tc.scores))
			for i, v := range tc.before {
				want.set(fPath, i, v)
				got.set(fPath, i, v)
			}
			for i, v := range tc.scores {
				if v > 0 {
					want.set(fPath, i, v/top)
				}
			}
			got.setScaled(fPath, slices.Clone(tc.scores), top)
			if (want.cols[fPath] == nil) != (got.cols[fPath] == nil) {
				t.Fatalf("column made: %v, want %v", got.cols[fPath] != nil, want.cols[fPath] != nil)
			}
			for i := range tc.scores {
				if w, g := want.at(fPath, i), got.at(fPath, i); math.Float64bits(w) != math.Float64bits(g) {
					t.Errorf("file %d: %v, want %v", i, g, w)
				}
			}
		})
	}
}

// TestFeatureColumnsSparseAsDense checks that a signal set on a few files
// of many is kept by file, not as an array of every file, until more than
// one file in denseShare holds it, and that every read (at, row, score to
// the bit, explicit, clear) gives what an array of every file gives,
// before and after the column becomes one.
func TestFeatureColumnsSparseAsDense(t *testing.T) {
	t.Parallel()
	const n = 1000
	fs := newFeatureColumns(n)
	want := make([]features, n) // every file's row, as set
	set := func(f feature, i int, v float64) {
		fs.set(f, i, v)
		want[i][f] = v
	}
	w := DefaultWeights()
	check := func(stage string) {
		t.Helper()
		score := fs.scorer(w)
		for i := range n {
			if got := fs.row(i); got != want[i] {
				t.Fatalf("%s: row %d = %v, want %v", stage, i, got, want[i])
			}
			if got, wantS := score(i), w.score(&want[i]); math.Float64bits(got) != math.Float64bits(wantS) {
				t.Fatalf("%s: score of file %d = %v, want %v", stage, i, got, wantS)
			}
			r := want[i]
			if got, wantE := fs.explicit(i), r[fQuoted]+r[fFrame]+r[fInnermost]+r[fDefines]+r[fModule]+r[fMethod]; got != wantE {
				t.Fatalf("%s: explicit evidence of file %d = %v, want %v", stage, i, got, wantE)
			}
		}
	}
	set(fContent, 7, 0.5)
	fs.setScaled(fPath, []float64{n - 1: 2}, 4)
	want[n-1][fPath] = 0.5
	for i := 0; i < n/denseShare; i++ {
		set(fQuoted, 3*i, 1/float64(i+1))
	}
	set(fFrame, 10, -0.25)
	set(fFrame, 11, 1)
	set(fFrame, 11, 0) // back to zero
	if fs.cols[fQuoted] != nil || fs.cols[fFrame] != nil || fs.sparse[fQuoted] == nil {
		t.Fatalf("a signal held by %d of %d files made an array of every file", n/denseShare, n)
	}
	check("sparse")
	fs.clear(3)
	want[3] = features{}
	check("cleared")
	set(fQuoted, 3, 0.75)
	set(fQuoted, 4, 0.5) // one more than n/denseShare files
	if fs.cols[fQuoted] == nil || fs.sparse[fQuoted] != nil {
		t.Fatalf("a signal held by more than one file in %d is still kept by file", denseShare)
	}
	check("dense")
}
