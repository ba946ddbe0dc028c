package locate

import (
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
	query := in.ProblemStatement
	if len(query) > DefaultMaxQueryBytes {
		query = query[:DefaultMaxQueryBytes]
	}
	ev := ix.evidence(query, queryTerms(query))
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
	fTestLink: 0.5, fNeighbour: 0.15, fPrior: 0.1, fTest: -0.4, fDoc: -0.5, fData: -0.3, fTitle: 0.3, fInnermost: 0.5,
}

// FitOptions tune Fit.
type FitOptions struct {
	// Iterations of gradient descent; 0 means 400.
	Iterations int
	// L2 is the ridge penalty towards zero; 0 means 0.01.
	L2 float64
}

// Fit learns weights from samples by minimising the listwise softmax loss
// (the negative log-probability that the top candidate is a gold file),
// a smooth stand-in for Acc@1, with a small ridge penalty. Samples whose
// gold file is no candidate carry no information and are ignored. The
// result is deterministic.
func Fit(samples []Sample, opts FitOptions) *Weights {
	iters := opts.Iterations
	if iters <= 0 {
		iters = 400
	}
	l2 := opts.L2
	if l2 <= 0 {
		l2 = 0.01
	}
	// Only the head of each ranking matters to the loss: fit on the
	// best candidates under the starting weights, plus the gold files.
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
	// Adam on the mean loss.
	var m1, m2 Weights
	const lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
	for it := 1; it <= iters; it++ {
		var grad Weights
		for _, s := range use {
			scores := make([]float64, len(s.Feats))
			hi := math.Inf(-1)
			for i := range s.Feats {
				scores[i] = w.score(&s.Feats[i])
				hi = math.Max(hi, scores[i])
			}
			var z, zg float64
			for i := range scores {
				scores[i] = math.Exp(scores[i] - hi)
				z += scores[i]
				if s.Gold[i] {
					zg += scores[i]
				}
			}
			for i := range s.Feats {
				p := scores[i] / z
				var q float64
				if s.Gold[i] {
					q = scores[i] / zg
				}
				for k := range grad {
					grad[k] += (p - q) * s.Feats[i][k]
				}
			}
		}
		for k := range grad {
			g := grad[k]/float64(len(use)) + l2*w[k]
			m1[k] = b1*m1[k] + (1-b1)*g
			m2[k] = b2*m2[k] + (1-b2)*g*g
			mh := m1[k] / (1 - math.Pow(b1, float64(it)))
			vh := m2[k] / (1 - math.Pow(b2, float64(it)))
			w[k] -= lr * mh / (math.Sqrt(vh) + eps)
		}
	}
	return &w
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
