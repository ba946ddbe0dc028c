package locate

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBestFiles checks the heap's head against sorting every file, with
// ties in score (broken by file number) and k below, at and above the
// number of files.
func TestBestFiles(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(33, 1))
	for _, tc := range []struct {
		name     string
		n, k     int
		distinct int // how many different scores there are
	}{
		{"none", 0, 10, 1},
		{"k zero", 50, 0, 5},
		{"k above n", 7, 40, 3},
		{"k equals n", 40, 40, 40},
		{"many ties", 5000, 100, 4},
		{"all different", 5000, 40, 5000},
		{"one of many", 3000, 1, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := rng.Perm(tc.n)
			scores := make([]float64, tc.n)
			for i := range scores {
				scores[i] = float64(rng.IntN(tc.distinct)) / 3
			}
			score := func(f int) float64 { return scores[f] }
			want := make([]scoredFile, len(files))
			for i, f := range files {
				want[i] = scoredFile{f, score(f)}
			}
			slices.SortFunc(want, compareScored)
			want = want[:min(tc.k, len(want))]
			if got := bestFiles(files, score, tc.k); !slices.Equal(got, want) {
				t.Errorf("bestFiles gave %v, want %v", head(got), head(want))
			}
		})
	}
}

func head(s []scoredFile) []scoredFile { return s[:min(5, len(s))] }
