package locate

import "testing"

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
	if got, want := fs.score(w, 3), w.score(&want); got != want {
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
