package locate

import (
	"log/slog"
	"math"
	"sort"
)

// Sample is one instance's candidates and their features, enough to rank
// the instance again under any weights without the repository.
type Sample struct {
	InstanceID string
	Repo       string
	Paths      []string
	Feats      []features
	// Gold marks the candidates the real fix changed.
	Gold []bool
}

// sample computes the features of every candidate file for an instance.
func (ix *Index) sample(in Instance) Sample {
	s := Sample{InstanceID: in.InstanceID, Repo: in.Repo}
	query, err := prepareQuery(in.ProblemStatement, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		return s // an empty issue has no candidates
	}
	ev := ix.evidence(query)
	gold := map[string]bool{}
	for _, g := range in.GoldFiles {
		gold[g] = true
	}
	for _, c := range ev.cands {
		p := ix.files[c].path
		s.Paths = append(s.Paths, p)
		s.Feats = append(s.Feats, ev.feats[c])
		s.Gold = append(s.Gold, gold[p])
	}
	return s
}

// top returns the candidates' order under w, best first (ties by path, as
// Rank breaks them).
func (s *Sample) top(w *Weights, k int) []int {
	idx := make([]int, len(s.Paths))
	scores := make([]float64, len(s.Paths))
	for i := range idx {
		idx[i] = i
		scores[i] = w.score(&s.Feats[i])
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if scores[idx[a]] != scores[idx[b]] {
			return scores[idx[a]] > scores[idx[b]]
		}
		return s.Paths[idx[a]] < s.Paths[idx[b]]
	})
	return idx[:min(k, len(idx))]
}

func (s *Sample) outcome(w *Weights, k int, system string) Outcome {
	o := Outcome{InstanceID: s.InstanceID, Repo: s.Repo, System: system}
	for r, i := range s.top(w, k) {
		o.Top = append(o.Top, s.Paths[i])
		if o.Rank == 0 && s.Gold[i] {
			o.Rank = r + 1
		}
	}
	return o
}

// startWeights are where fitting begins: one full signal of explicit
// evidence is worth more than full lexical similarity, and tests, docs
// and data files are held back.
var startWeights = Weights{
	fContent: 1, fPath: 0.6, fSymbol: 0.6, fQuoted: 1.5, fFrame: 1.5, fDefines: 1, fModule: 0.8,
	fTestLink: 0.5, fNeighbour: 0.15, fPrior: 0.1, fTest: -0.4, fDoc: -0.5, fData: -0.3, fTitle: 0.3, fInnermost: 0.5, fContentRank: 0.2, fPackageInit: -0.2,
}

// FitOptions tune Fit.
type FitOptions struct {
	// Rounds of coordinate ascent over all weights; 0 means 2 (more fit
	// the tuning set better and the left-out repositories worse).
	Rounds int
}

// Fit learns weights from samples by coordinate ascent on MRR@10 (ties
// broken by Acc@1): starting from hand-set weights, it tries a few steps up
// and down on one weight at a time and keeps any that raises the score. It
// optimises the measure that is reported rather than a surrogate, and with
// under twenty weights it stays inspectable. Samples whose gold file is no
// candidate carry no information and are ignored. The result is
// deterministic.
func Fit(samples []Sample, opts FitOptions) *Weights {
	rounds := opts.Rounds
	if rounds <= 0 {
		rounds = 2
	}
	// Only the head of each ranking matters: fit on the best candidates
	// under the starting weights, plus the gold files.
	var use []*Sample
	for i := range samples {
		if s := samples[i].head(&startWeights, fitCandidates); s != nil {
			use = append(use, s)
		}
	}
	// Start from hand-set weights, not the checked-in fitted ones, so a
	// fit never sees the data those were fitted on.
	w := startWeights
	if len(use) == 0 {
		return &w
	}
	best := objective(use, &w)
	steps := []float64{-0.8, -0.4, -0.2, -0.1, -0.05, 0.05, 0.1, 0.2, 0.4, 0.8}
	for r := 0; r < rounds; r++ {
		improved := false
		for k := range w {
			scale := math.Max(math.Abs(w[k]), 0.5)
			orig, bestV := w[k], w[k]
			for _, st := range steps {
				w[k] = orig + st*scale
				if v := objective(use, &w); v > best+1e-9 {
					best, bestV, improved = v, w[k], true
				}
			}
			w[k] = bestV
		}
		if !improved {
			break
		}
	}
	return &w
}

// objective is MRR@10 plus small shares of Acc@1 and Acc@5 over samples
// under w.
func objective(samples []*Sample, w *Weights) float64 {
	total := 0.0
	for _, s := range samples {
		r := s.goldRank(w)
		if r <= 10 {
			total += 1 / float64(r)
			if r == 1 {
				total += 0.1
			}
			if r <= 5 {
				total += 0.2
			}
		}
	}
	return total / float64(len(samples))
}

// goldRank is the 1-based position of the best gold candidate under w, as
// top would order them, without sorting.
func (s *Sample) goldRank(w *Weights) int {
	scores := make([]float64, len(s.Feats))
	g := -1
	for i := range s.Feats {
		scores[i] = w.score(&s.Feats[i])
		if s.Gold[i] && (g < 0 || scores[i] > scores[g] || scores[i] == scores[g] && s.Paths[i] < s.Paths[g]) {
			g = i
		}
	}
	if g < 0 {
		return len(s.Feats) + 1
	}
	rank := 1
	for i := range scores {
		if scores[i] > scores[g] || scores[i] == scores[g] && s.Paths[i] < s.Paths[g] {
			rank++
		}
	}
	return rank
}

// fitCandidates bounds the candidates per sample that Fit looks at.
const fitCandidates = 150

// head returns the sample cut to its k best candidates under w plus its
// gold candidates, or nil when it has no gold candidate.
func (s *Sample) head(w *Weights, k int) *Sample {
	out := &Sample{InstanceID: s.InstanceID, Repo: s.Repo}
	keep := map[int]bool{}
	for _, i := range s.top(w, k) {
		keep[i] = true
	}
	hasGold := false
	for i, g := range s.Gold {
		if g {
			keep[i] = true
			hasGold = true
		}
	}
	if !hasGold {
		return nil
	}
	for i := range s.Paths {
		if keep[i] {
			out.Paths = append(out.Paths, s.Paths[i])
			out.Feats = append(out.Feats, s.Feats[i])
			out.Gold = append(out.Gold, s.Gold[i])
		}
	}
	return out
}

// LeaveOneRepoOut scores each repository's samples with weights fitted on
// the other repositories' samples only.
func LeaveOneRepoOut(samples []Sample, k int, opts FitOptions) []Outcome {
	var repos []string
	seen := map[string]bool{}
	for _, s := range samples {
		if !seen[s.Repo] {
			seen[s.Repo] = true
			repos = append(repos, s.Repo)
		}
	}
	var out []Outcome
	for _, r := range repos {
		var train []Sample
		for _, s := range samples {
			if s.Repo != r {
				train = append(train, s)
			}
		}
		w := Fit(train, opts)
		for i := range samples {
			if samples[i].Repo == r {
				out = append(out, samples[i].outcome(w, k, SystemLOO))
			}
		}
	}
	return out
}
