package locate

// featureColumns holds every signal of every file, one column of the
// files per signal. A column is made when its signal is first set to a
// value other than zero on some file: most signals (a quoted path, a
// traceback frame, a named definition, history, passages) hold zero for
// nearly every file of a large tree, and a row of all 30 for each file
// cost 240 bytes a file (24 MB at 100,000 files) on every query. A
// column starts sparse, the files holding a value other than zero by
// file, and becomes an array of every file once more than one file in
// denseShare holds one: a dense column of every file for each signal
// that named a few files was 800 KB a signal at 100,000 files, seven of
// them live while a query ranked.
type featureColumns struct {
	n      int
	cols   [numFeatures][]float64
	sparse [numFeatures]map[int32]float64
	// held marks, a bit a file, the files a sparse column holds, so
	// reading a file it does not hold (most reads: every file is read
	// while candidates are picked, every candidate while scored) costs
	// no map lookup.
	held [numFeatures][]uint64
}

// denseShare is the share of the files (one in denseShare) a sparse
// column may hold before it becomes an array: a map entry costs a few
// times a float64's eight bytes, and a signal that ends up on most
// files (a rank, the prior) pays a map insertion for each of the first
// n/denseShare (with 16, 6% of a ranking's CPU at 20,000 files).
const denseShare = 64

func newFeatureColumns(n int) featureColumns { return featureColumns{n: n} }

// len is the number of files.
func (c *featureColumns) len() int { return c.n }

// at is signal f of file i.
func (c *featureColumns) at(f feature, i int) float64 {
	if col := c.cols[f]; col != nil {
		return col[i]
	}
	if h := c.held[f]; h != nil && h[i>>6]&(1<<(i&63)) != 0 {
		return c.sparse[f][int32(i)]
	}
	return 0
}

// set sets signal f of file i to v.
func (c *featureColumns) set(f feature, i int, v float64) {
	if col := c.cols[f]; col != nil {
		col[i] = v
		return
	}
	m := c.sparse[f]
	if v == 0 {
		c.unset(f, i)
		return
	}
	if m == nil {
		m = map[int32]float64{}
		c.sparse[f], c.held[f] = m, make([]uint64, (c.n+63)/64)
	}
	m[int32(i)] = v
	c.held[f][i>>6] |= 1 << (i & 63)
	if len(m) > c.n/denseShare {
		col := make([]float64, c.n)
		for j, x := range m {
			col[j] = x
		}
		c.cols[f], c.sparse[f], c.held[f] = col, nil, nil
	}
}

// unset sets signal f of file i to zero in f's sparse column.
func (c *featureColumns) unset(f feature, i int) {
	if h := c.held[f]; h != nil && h[i>>6]&(1<<(i&63)) != 0 {
		delete(c.sparse[f], int32(i))
		h[i>>6] &^= 1 << (i & 63)
	}
}

// setScaled sets signal f of every file whose score is positive to that
// score over top (the largest score), as set(f, i, scores[i]/top) would,
// others staying zero. When f has no column yet, scores itself is
// scaled in place and becomes the column (the caller must not read it as
// scores afterwards): no second array of every file for each BM25 signal.
func (c *featureColumns) setScaled(f feature, scores []float64, top float64) {
	if c.cols[f] != nil || c.sparse[f] != nil || len(scores) != c.n {
		for i, v := range scores {
			if v > 0 {
				c.set(f, i, v/top)
			}
		}
		return
	}
	// set makes the column at its first value other than zero.
	nonzero := false
	for i, v := range scores {
		if v > 0 {
			scores[i] = v / top
			nonzero = nonzero || scores[i] != 0
		} else {
			scores[i] = 0
		}
	}
	if nonzero {
		c.cols[f] = scores
	}
}

// row is file i's signals, as the weights score them.
func (c *featureColumns) row(i int) features {
	var r features
	for f := range c.cols {
		r[f] = c.at(feature(f), i)
	}
	return r
}

// scorer scores files under w: Weights.score of file i's row, without
// copying the row. The signals that have a column are found once, not
// checked at every file (all 30 for every candidate of a ranking were 5%
// of a query's CPU at 100,000 files). A signal with no column holds zero
// for every file, and adding its product (a zero) leaves the sum as it
// was, so the sum is the same to the last bit; a sparse column adds its
// file's value, or the product of a zero as a dense column would. No
// signal may be set while the scorer is used.
func (c *featureColumns) scorer(w *Weights) func(i int) float64 {
	type term struct {
		f   feature
		w   float64
		col []float64 // nil for a sparse column
	}
	terms := make([]term, 0, numFeatures)
	for f, col := range c.cols {
		if col != nil || c.sparse[f] != nil {
			terms = append(terms, term{feature(f), w[f], col})
		}
	}
	return func(i int) float64 {
		s := 0.0
		for _, t := range terms {
			if t.col != nil {
				s += t.w * t.col[i]
			} else {
				s += t.w * c.at(t.f, i)
			}
		}
		return s
	}
}

// clear sets every signal of file i to zero.
func (c *featureColumns) clear(i int) {
	for f, col := range c.cols {
		if col != nil {
			col[i] = 0
		} else {
			c.unset(feature(f), i)
		}
	}
}

// explicit is the evidence that names file i outright (features.explicit).
func (c *featureColumns) explicit(i int) float64 {
	return c.at(fQuoted, i) + c.at(fFrame, i) + c.at(fInnermost, i) + c.at(fDefines, i) + c.at(fModule, i) + c.at(fMethod, i)
}
