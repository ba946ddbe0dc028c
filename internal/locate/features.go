package locate

// featureColumns holds every signal of every file, one column of the
// files per signal. A column is allocated when its signal is first set
// to a value other than zero on some file: most signals (a quoted path,
// a traceback frame, a named definition, history, passages) hold zero
// for nearly every file of a large tree, and a row of all 30 for each
// file cost 240 bytes a file (24 MB at 100,000 files) on every query.
type featureColumns struct {
	n    int
	cols [numFeatures][]float64
}

func newFeatureColumns(n int) featureColumns { return featureColumns{n: n} }

// len is the number of files.
func (c *featureColumns) len() int { return c.n }

// at is signal f of file i.
func (c *featureColumns) at(f feature, i int) float64 {
	if col := c.cols[f]; col != nil {
		return col[i]
	}
	return 0
}

// set sets signal f of file i to v.
func (c *featureColumns) set(f feature, i int, v float64) {
	if c.cols[f] == nil {
		if v == 0 {
			return
		}
		c.cols[f] = make([]float64, c.n)
	}
	c.cols[f][i] = v
}

// setScaled sets signal f of every file whose score is positive to that
// score over top (the largest score), as set(f, i, scores[i]/top) would,
// others staying zero. When f has no column yet, scores itself is
// scaled in place and becomes the column (the caller must not read it as
// scores afterwards): no second array of every file for each BM25 signal.
func (c *featureColumns) setScaled(f feature, scores []float64, top float64) {
	if c.cols[f] != nil || len(scores) != c.n {
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
	for f, col := range c.cols {
		if col != nil {
			r[f] = col[i]
		}
	}
	return r
}

// score is file i's score under w: Weights.score of its row, without
// copying the row. A signal with no column holds zero for every file, and
// adding its product (a zero) leaves the sum as it was, so the sum is
// the same to the last bit.
func (c *featureColumns) score(w *Weights, i int) float64 {
	s := 0.0
	for f, col := range c.cols {
		if col != nil {
			s += w[f] * col[i]
		}
	}
	return s
}

// clear sets every signal of file i to zero.
func (c *featureColumns) clear(i int) {
	for _, col := range c.cols {
		if col != nil {
			col[i] = 0
		}
	}
}

// explicit is the evidence that names file i outright (features.explicit).
func (c *featureColumns) explicit(i int) float64 {
	return c.at(fQuoted, i) + c.at(fFrame, i) + c.at(fInnermost, i) + c.at(fDefines, i) + c.at(fModule, i) + c.at(fMethod, i)
}
