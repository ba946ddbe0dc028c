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
	ev := ix.evidence(query, ix.root)
	gold := map[string]bool{}
	for _, g := range in.GoldFiles {
		gold[g] = true
	}
	for _, c := range ev.cands {
		p := ix.files[c].path
		s.Paths = append(s.Paths, p)
		s.Feats = append(s.Feats, ev.feats.row(c))
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

// startWeights are hand-set: one full signal of explicit evidence is
// worth more than full lexical similarity, and tests, docs and data files
// are held back. They choose the candidates a fit looks at and the files
// the second stage reads, so neither depends on fitted weights.
var startWeights = Weights{
	fContent: 1, fPath: 0.6, fSymbol: 0.6, fQuoted: 1.5, fFrame: 1.5, fDefines: 1, fModule: 0.8, fMethod: 0.8,
	fTestLink: 0.5, fNeighbour: 0.15, fPrior: 0.1, fTest: -0.4, fDoc: -0.5, fData: -0.3, fTitle: 0.3, fInnermost: 0.5, fContentRank: 0.2, fPackageInit: -0.2,
	fPassage: 0.3, fPhrase: 0.3, fOtherLang: -0.3, fPassageRank: 0.1, fTitlePassage: 0.1,
	fTitleContent: 0.1, fCodeContent: 0.1,
}

// FitOptions tune Fit.
type FitOptions struct {
	// Steps of gradient descent in each of Fit's two stages; 0 means 300
	// (more fit the tuning set better and the left-out repositories no
	// better).
	Steps int
}

// Fit learns weights from samples by minimising, over all samples, the
// listwise cross-entropy of the gold files (each repository's samples
// weighed down by their number, repoBalance): -log of the share the gold
// candidates take of a softmax over every candidate's score. That is a
// smooth stand-in for "put a gold file first" that every candidate
// informs, so unlike a search on Acc@1 itself it does not stall on
// plateaus. Plain Adam steps from zero weights, with the samples in a
// fixed order: the result is deterministic. Samples whose gold file is
// no candidate carry no information and are ignored.
func Fit(samples []Sample, opts FitOptions) *Weights {
	return fit(samples, opts, repoBalance)
}

// fit is Fit with each repository's samples counted 1/n^balance.
func fit(samples []Sample, opts FitOptions, balance float64) *Weights {
	steps := opts.Steps
	if steps <= 0 {
		steps = 300
	}
	// Only the head of each ranking matters: fit on the best candidates
	// under the hand-set weights, plus the gold files.
	var use []*Sample
	start := startWeights
	for i := range samples {
		if s := samples[i].head(&start, fitCandidates); s != nil {
			use = append(use, s)
		}
	}
	var w Weights
	if len(use) == 0 {
		w = startWeights
		return &w
	}
	// Two stages: the late features (at zero) first stay out while the
	// others are fitted, then they are fitted with the others held.
	sw := sampleWeights(use, balance)
	adam(use, sw, &w, steps, func(k int) bool { return !lateFeature[k] && !unweighted[k] })
	adam(use, sw, &w, steps, func(k int) bool { return lateFeature[k] && !unweighted[k] })
	for k := range w {
		w[k] = roundTo(w[k], 4)
	}
	return &w
}

// lateFeature marks the features Fit fits after the others, with the
// others held: each fires on few issues (cited_issue: an issue that cites
// an earlier one; error_text and message_template: an issue showing an
// error its repository prints), and fitted together with the rest it moves their
// weights, and with them the ranking of the many issues it never touches.
var lateFeature = [numFeatures]bool{fIssueRefs: true, fErrorText: true, fMsgTemplate: true}

// unweighted marks the features Fit keeps at weight zero: they still
// feed other signals, but add nothing to a score of their own.
// traceback_frame: a traceback frame in a file is evidence for it, yet
// fitted on the 17 tuning issues with frames it took a negative weight
// (what it says, the innermost frame, the tests and neighbours it feeds
// already say), which would hold back the files a traceback names in a
// repository it never saw. Kept at zero it scored better both fitted and
// in-fold (bench/repomap-locate.md).
var unweighted = [numFeatures]bool{fFrame: true}

// direction is the sign each weight must keep, known before any fit: +1
// for evidence that a file is at fault (a match of the issue's words, a
// name or path it quotes, a link to such a file), -1 for what holds a file
// back (a test, documentation, data, another language, a package's
// __init__.py), 0 where either sign has a reason (the import graph's
// centrality; the rank transforms, which reshape the scores they restate).
// A fit that wants a weight across zero is trading one correlated signal
// against another on the issues it sees; on a repository it never saw,
// that trade would push down the very files an issue names. Fit keeps such
// a weight at zero instead.
var direction = [numFeatures]int8{
	fContent: 1, fPath: 1, fSymbol: 1, fQuoted: 1, fFrame: 1, fDefines: 1, fModule: 1, fTestLink: 1,
	fNeighbour: 1, fTitle: 1, fInnermost: 1, fPassage: 1, fPhrase: 1, fTitlePassage: 1, fTitleContent: 1,
	fCodeContent: 1, fExported: 1, fTitleName: 1, fHistory: 1, fTitleHistory: 1, fQuotedText: 1, fMethod: 1,
	fIssueRefs: 1, fErrorText: 1, fMsgTemplate: 1,
	fTest: -1, fDoc: -1, fData: -1, fOtherLang: -1, fPackageInit: -1,
}

// keepDirection sets w to zero when it has crossed to the sign direction
// forbids for feature k.
func keepDirection(k int, w float64) float64 {
	if float64(direction[k])*w < 0 {
		return 0
	}
	return w
}

// adam takes steps Adam steps on the listwise loss from w, changing only
// the weights free reports.
func adam(use []*Sample, sw []float64, w *Weights, steps int, free func(k int) bool) {
	const (
		rate         = 0.05
		beta1, beta2 = 0.9, 0.999
	)
	var m, v Weights
	for t := 1; t <= steps; t++ {
		g := listwiseGradient(use, sw, w)
		c1 := 1 - math.Pow(beta1, float64(t))
		c2 := 1 - math.Pow(beta2, float64(t))
		for k := range w {
			if !free(k) {
				continue
			}
			m[k] = beta1*m[k] + (1-beta1)*g[k]
			v[k] = beta2*v[k] + (1-beta2)*g[k]*g[k]
			w[k] = keepDirection(k, w[k]-rate*(m[k]/c1)/(math.Sqrt(v[k]/c2)+1e-8))
		}
	}
}

// listwiseGradient is the mean over samples, each weighed by sw, of the gradient of
// -log(sum over gold of p_i), where p is the softmax of the scores: per
// candidate, its feature vector times (p_i - q_i), q being p renormalised
// over the gold candidates.
func listwiseGradient(samples []*Sample, sw []float64, w *Weights) Weights {
	var g Weights
	var scores []float64
	for si, s := range samples {
		scores = scores[:0]
		top := math.Inf(-1)
		for i := range s.Feats {
			scores = append(scores, w.score(&s.Feats[i]))
			top = math.Max(top, scores[i])
		}
		z, zGold := 0.0, 0.0
		for i := range scores {
			scores[i] = math.Exp(scores[i] - top) // shifted: no overflow
			z += scores[i]
			if s.Gold[i] {
				zGold += scores[i]
			}
		}
		for i, e := range scores {
			d := e / z
			if s.Gold[i] {
				d -= e / zGold
			}
			d *= sw[si]
			for k := range g {
				g[k] += d * s.Feats[i][k]
			}
		}
	}
	for k := range g {
		g[k] /= float64(len(samples))
	}
	return g
}

// repoBalance is how far Fit weighs a repository's instances down by
// their number: each counts 1/n^repoBalance for a repository with n
// instances. Counted alike (0), the repository with the most instances
// sets the weights for its own style of issue and code (a third of the
// tuning set is sympy's, 82 of 241, against 2 of flask's), and the
// repositories the weights are used on are others; weighed alike (1),
// two or three instances of a small repository would count as much as
// eighty. The square root lies between. It was chosen between the three
// on the in-fold score (for each repository held out, leave-one-out among
// the other eight; no left-out repository seen): Acc@1 / Acc@5 / MRR
// 0.714 / 0.891 / 0.788 counted alike, 0.720 / 0.887 / 0.793 at 0.5,
// 0.721 / 0.889 / 0.793 at 1 (bench/repomap-locate.md).
const repoBalance = 0.5

// sampleWeights weighs each sample 1/n^balance for a repository of n
// samples, scaled so that the weights average one.
func sampleWeights(use []*Sample, balance float64) []float64 {
	per := map[string]int{}
	for _, s := range use {
		per[s.Repo]++
	}
	sw := make([]float64, len(use))
	sum := 0.0
	for i, s := range use {
		sw[i] = math.Pow(float64(per[s.Repo]), -balance)
		sum += sw[i]
	}
	for i := range sw {
		sw[i] *= float64(len(sw)) / sum
	}
	return sw
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

// repoOrder lists the samples' repositories in the order they first appear.
func repoOrder(samples []Sample) []string {
	var repos []string
	seen := map[string]bool{}
	for _, s := range samples {
		if !seen[s.Repo] {
			seen[s.Repo] = true
			repos = append(repos, s.Repo)
		}
	}
	return repos
}

// InFold is the score to choose a change on without seeing any left-out
// repository: for each repository held out, leave-one-repository-out
// among the others only. Each remaining repository's samples are ranked
// with weights fitted on the rest of that fold, so a sample is scored once
// per repository held out but its own (system SystemInFold), and the held
// out repository's samples are never used, neither to fit nor to score.
func InFold(samples []Sample, k int, opts FitOptions) []Outcome {
	var out []Outcome
	for _, held := range repoOrder(samples) {
		var rest []Sample
		for _, s := range samples {
			if s.Repo != held {
				rest = append(rest, s)
			}
		}
		for _, o := range LeaveOneRepoOut(rest, k, opts) {
			o.System = SystemInFold
			out = append(out, o)
		}
	}
	return out
}

// LeaveOneRepoOut scores each repository's samples with weights fitted on
// the other repositories' samples only.
func LeaveOneRepoOut(samples []Sample, k int, opts FitOptions) []Outcome {
	repos := repoOrder(samples)
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
