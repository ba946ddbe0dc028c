package locate

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/repomap"
)

// The second stage reads the best first-stage candidates from disk and
// looks at them closer than whole-file statistics can: a fix sits in one
// function, and a large file whose words are spread thin scores as well
// as a small one that holds the words in one place.
const (
	// passageFiles is how many first-stage candidates are read.
	passageFiles = 40
	// passageLines is the window's height; windows overlap by half.
	passageLines = 40
	// phraseScale is the summed rarity of shared phrases that sets the
	// phrase signal to 1-1/e.
	phraseScale = 10.0
	// passageMaxBytes skips larger files (more than the map keeps by
	// default, so only maps built with a higher limit have any).
	passageMaxBytes = 1 << 20
)

// passages sets the passage and phrase signals on the best candidates
// under the hand-set starting weights (fixed, so that fitting never
// changes which files get the signals). root is the tree the index
// describes; without one the stage is skipped.
func (ix *Index) passages(root, query string, qts []queryTerm, ev *evidence) {
	if root == "" || len(ev.cands) == 0 {
		return
	}
	idfs := ix.termIDFs(qts)
	tidfs := map[string]float64{}
	for _, t := range repomap.Terms(title(query)) {
		if v, ok := idfs[t]; ok {
			tidfs[t] = v
		}
	}
	phrases := queryPhrases(query, idfs)
	body, head := newWindowScorer(idfs), newWindowScorer(tidfs)
	best, tbest := make(map[int]float64), make(map[int]float64)
	maxBest, maxT := 0.0, 0.0
	var buf []byte
	for _, c := range ix.firstStage(ev, passageFiles) {
		// Regular files only, no link followed, no wait on a FIFO: the
		// tree may have changed since it was mapped.
		text, _, skip, err := repomap.ReadRegular(buf, root, ix.files[c].path, passageMaxBytes)
		buf = text
		if err != nil || skip != "" {
			continue // gone, replaced or unreadable since the map: no signal
		}
		lines := bytes.Split(text, []byte("\n"))
		terms := lineTerms(lines) // copies the terms out: buf is reused
		if s, at := body.best(terms); s > 0 {
			best[c] = s
			maxBest = math.Max(maxBest, s)
			ev.note(fPassage, c, fmt.Sprintf("closest passage at lines %d–%d", at+1, min(at+passageLines, len(lines))))
		}
		if s, at := head.best(terms); s > 0 {
			tbest[c] = s
			maxT = math.Max(maxT, s)
			ev.note(fTitlePassage, c, fmt.Sprintf("closest passage to the title at lines %d–%d", at+1, min(at+passageLines, len(lines))))
		}
		if v, n := phraseHits(terms, phrases); n > 0 {
			ev.feats.set(fPhrase, c, saturate(v/phraseScale))
			ev.note(fPhrase, c, fmt.Sprintf("a line shares words in the issue's order (%s)", plural.Count(n, "phrase", "phrases")))
		}
	}
	for c, s := range best {
		ev.feats.set(fPassage, c, s/maxBest)
	}
	read := slices.Collect(maps.Keys(best))
	for r, b := range bestFiles(read, func(c int) float64 { return best[c] }, len(read)) {
		ev.feats.set(fPassageRank, b.file, 1/math.Sqrt(float64(r+1)))
	}
	for c, s := range tbest {
		ev.feats.set(fTitlePassage, c, s/maxT)
	}
}

// firstStage returns up to k candidates, best first under startWeights.
func (ix *Index) firstStage(ev *evidence, k int) []int {
	w := startWeights
	best := bestFiles(ev.cands, ev.feats.scorer(&w), k)
	out := make([]int, len(best))
	for i, b := range best {
		out[i] = b.file
	}
	return out
}

// termIDFs weighs each query term by its rarity among the repository's
// contents, as the content BM25 does.
func (ix *Index) termIDFs(qts []queryTerm) map[string]float64 {
	n := len(ix.files)
	out := make(map[string]float64, len(qts))
	for _, q := range qts {
		df := 0
		eachPosting(ix.content.get(q.term), func(int, uint32) { df++ })
		if df > 0 {
			out[q.term] = q.weight * idf(n, df)
		}
	}
	return out
}

// lineTerms is each line's terms, as the index tokenises contents.
func lineTerms(lines [][]byte) [][]string {
	out := make([][]string, len(lines))
	for i, l := range lines {
		repomap.EachTerm(l, func(t string) { out[i] = append(out[i], t) })
	}
	return out
}

// windowScorer scores windows of passageLines lines (half overlapping)
// with BM25 over a fixed set of query terms; one is built per query.
type windowScorer struct {
	// keys are the terms in a fixed order: a float sum in map order
	// differs in its last bits from run to run, and so could ties.
	keys []string
	idfs map[string]float64
	id   map[string]int
	tf   []int
}

func newWindowScorer(idfs map[string]float64) *windowScorer {
	w := &windowScorer{keys: slices.Sorted(maps.Keys(idfs)), idfs: idfs, id: make(map[string]int, len(idfs))}
	for i, k := range w.keys {
		w.id[k] = i
	}
	w.tf = make([]int, len(w.keys))
	return w
}

// best returns the best window's score and its first line.
func (w *windowScorer) best(terms [][]string) (float64, int) {
	step := passageLines / 2
	best, at := 0.0, 0
	for start := 0; start < len(terms); start += step {
		clear(w.tf)
		end := min(start+passageLines, len(terms))
		for _, ts := range terms[start:end] {
			for _, t := range ts {
				if i, ok := w.id[t]; ok {
					w.tf[i]++
				}
			}
		}
		s := 0.0
		for i, n := range w.tf {
			if n > 0 {
				// Every window has the same height, so no length norm.
				s += w.idfs[w.keys[i]] * float64(n) * (bm25K1 + 1) / (float64(n) + bm25K1)
			}
		}
		if s > best {
			best, at = s, start
		}
		if end == len(terms) {
			break
		}
	}
	return best, at
}

// queryPhrases are the pairs of consecutive terms (in code
// quoted from the repository or an error message it prints, most often),
// keyed as the terms joined by a space, each worth the lesser rarity of
// its two terms.
func queryPhrases(query string, idfs map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(query, "\n") {
		ts := repomap.Terms(line)
		for i := 0; i+2 <= len(ts); i++ {
			out[ts[i]+" "+ts[i+1]] = math.Min(idfs[ts[i]], idfs[ts[i+1]])
		}
	}
	return out
}

// phraseHits sums the worth of the distinct query phrases that stand on
// one line of the file.
func phraseHits(terms [][]string, phrases map[string]float64) (float64, int) {
	if len(phrases) == 0 {
		return 0, 0
	}
	seen := map[string]bool{}
	total := 0.0
	for _, ts := range terms {
		for i := 0; i+2 <= len(ts); i++ {
			k := ts[i] + " " + ts[i+1]
			if v, ok := phrases[k]; ok && !seen[k] {
				seen[k] = true
				total += v
			}
		}
	}
	return total, len(seen)
}
