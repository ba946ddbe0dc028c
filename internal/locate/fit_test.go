package locate

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// synthetic builds samples in which the gold file is the one quoted in the
// issue, while content similarity points at a decoy, so the starting
// weights (content 1.0, quoted path 1.5 but saturating) get some wrong.
func synthetic(repo string, n int) []Sample {
	var out []Sample
	for q := 0; q < n; q++ {
		s := Sample{InstanceID: fmt.Sprintf("%s-%d", repo, q), Repo: repo}
		for c := 0; c < 6; c++ {
			var f features
			f[fContent] = float64((c+q)%6) / 5
			if c == q%6 {
				f[fQuoted] = 0.4
			}
			s.Paths = append(s.Paths, fmt.Sprintf("f%d.py", c))
			s.Feats = append(s.Feats, f)
			s.Gold = append(s.Gold, c == q%6)
		}
		out = append(out, s)
	}
	return out
}

func acc1(samples []Sample, w *Weights) float64 {
	hits := 0
	for i := range samples {
		if samples[i].outcome(w, 10, "t").Rank == 1 {
			hits++
		}
	}
	return float64(hits) / float64(len(samples))
}

func TestFitLearnsTheSignal(t *testing.T) {
	samples := append(synthetic("a/x", 30), synthetic("b/y", 30)...)
	start := startWeights
	before := acc1(samples, &start)
	w := Fit(samples, FitOptions{})
	after := acc1(samples, w)
	if before >= 1 || after != 1 {
		t.Fatalf("Acc@1 before %.2f, after fitting %.2f (weights %v)", before, after, w)
	}
	// The gold's quoted path (0.4) must now outweigh full content
	// similarity of a decoy.
	if 0.4*w[fQuoted] <= w[fContent] {
		t.Errorf("quoted path %.2f does not outweigh content %.2f", w[fQuoted], w[fContent])
	}
	// Leave-one-repo-out fits without the scored repository, and the
	// signal carries over.
	out := LeaveOneRepoOut(samples, 10, FitOptions{})
	if len(out) != len(samples) {
		t.Fatalf("outcomes = %d", len(out))
	}
	for _, o := range out {
		if o.Rank != 1 || o.System != SystemLOO {
			t.Fatalf("outcome %+v", o)
		}
	}
}

func TestWeightsFile(t *testing.T) {
	w := DefaultWeights()
	p := filepath.Join(t.TempDir(), "w.json")
	if err := SaveWeights(p, w); err != nil {
		t.Fatal(err)
	}
	back, err := LoadWeights(p)
	if err != nil {
		t.Fatal(err)
	}
	if *back != *w {
		t.Errorf("round trip: %v != %v", back, w)
	}
	var bad Weights
	err = json.Unmarshal([]byte(`{"content": 1, "colour": 2}`), &bad)
	if err == nil || !strings.Contains(err.Error(), "unknown features [colour]") || !strings.Contains(err.Error(), "missing [path") {
		t.Errorf("bad weights error = %v", err)
	}
}

// TestFitHoldsOtherWeightsForLateFeatures checks the second stage: a
// feature that fires on few issues is fitted with the others held, so the
// others come out as if it did not exist, and it still learns its weight.
func TestFitHoldsOtherWeightsForLateFeatures(t *testing.T) {
	samples := append(synthetic("a/x", 30), synthetic("b/y", 30)...)
	without := Fit(samples, FitOptions{})
	// In one sample in six the gold file is also marked by a citing
	// commit, which the content decoy never is.
	with := make([]Sample, len(samples))
	for i, s := range samples {
		s.Feats = append([]features(nil), s.Feats...)
		if i%6 == 0 {
			for c := range s.Feats {
				if s.Gold[c] {
					s.Feats[c][fIssueRefs] = 1
				}
			}
		}
		with[i] = s
	}
	w := Fit(with, FitOptions{})
	for k := range w {
		if !lateFeature[k] && w[k] != without[k] {
			t.Errorf("%s: %v with the late feature, %v without", featureInfo[k].name, w[k], without[k])
		}
	}
	if w[fIssueRefs] <= 0 {
		t.Errorf("cited_issue weight %v, want positive: it only ever marks gold files", w[fIssueRefs])
	}
}

// TestFitKeepsUnweightedFeaturesAtZero checks that a feature Fit keeps out
// of the score stays at weight zero even when it marks every gold file.
func TestFitKeepsUnweightedFeaturesAtZero(t *testing.T) {
	t.Parallel()
	samples := append(synthetic("a/x", 30), synthetic("b/y", 30)...)
	for i := range samples {
		s := &samples[i]
		s.Feats = append([]features(nil), s.Feats...)
		for c := range s.Feats {
			if s.Gold[c] {
				s.Feats[c][fFrame] = 1
			}
		}
	}
	w := Fit(samples, FitOptions{})
	for k := range w {
		if unweighted[k] && w[k] != 0 {
			t.Errorf("%s: weight %v, want 0", featureInfo[k].name, w[k])
		}
	}
	if w[fQuoted] == 0 {
		t.Error("the other weights were not fitted")
	}
}

// TestFitKeepsEachWeightsDirection checks that a feature whose direction is
// known stays on its side of zero even when, on the samples fitted, it
// points the wrong way; a feature with no direction fitted on the same
// samples does cross zero, so the samples do pull the weight across.
func TestFitKeepsEachWeightsDirection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		feat feature
		// onGold sets the feature on the gold file, else on the
		// strongest decoy (content 1.0).
		onGold bool
		want   func(w float64) bool
	}{
		{"evidence marking decoys stays at zero", fModule, false, func(w float64) bool { return w == 0 }},
		{"a definition marking decoys stays at zero", fDefines, false, func(w float64) bool { return w == 0 }},
		{"a hold-back marking gold files stays at zero", fTest, true, func(w float64) bool { return w == 0 }},
		{"a hold-back marking decoys goes negative", fDoc, false, func(w float64) bool { return w < 0 }},
		{"a free feature marking decoys goes negative", fPrior, false, func(w float64) bool { return w < 0 }},
		{"a free feature marking gold files goes positive", fContentRank, true, func(w float64) bool { return w > 0 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			samples := append(synthetic("a/x", 30), synthetic("b/y", 30)...)
			for i := range samples {
				s := &samples[i]
				s.Feats = append([]features(nil), s.Feats...)
				for j := range s.Feats {
					if (c.onGold && s.Gold[j]) || (!c.onGold && !s.Gold[j] && s.Feats[j][fContent] == 1) {
						s.Feats[j][c.feat] += 1
					}
				}
			}
			w := Fit(samples, FitOptions{})
			if !c.want(w[c.feat]) {
				t.Errorf("%s: weight %v (direction %d)", featureInfo[c.feat].name, w[c.feat], direction[c.feat])
			}
		})
	}
}

func TestSampleWeights(t *testing.T) {
	t.Parallel()
	mk := func(repos ...string) []*Sample {
		var out []*Sample
		for _, r := range repos {
			out = append(out, &Sample{Repo: r})
		}
		return out
	}
	cases := []struct {
		name    string
		use     []*Sample
		balance float64
		want    []float64
	}{
		{"one repository", mk("a", "a", "a"), 0.5, []float64{1, 1, 1}},
		{"counted alike", mk("a", "a", "a", "a", "b"), 0, []float64{1, 1, 1, 1, 1}},
		// 1/sqrt(4) each for a, 1 for b, scaled to average one: b's one
		// instance counts twice as much as each of a's four.
		{"square root", mk("a", "a", "a", "a", "b"), 0.5, []float64{5.0 / 6, 5.0 / 6, 5.0 / 6, 5.0 / 6, 10.0 / 6}},
		{"repositories alike", mk("a", "a", "a", "a", "b"), 1, []float64{0.625, 0.625, 0.625, 0.625, 2.5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := sampleWeights(tc.use, tc.balance)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("weights = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestFitWeighsLargeRepositoriesDown fits two repositories whose issues
// disagree: in the large one (40 instances) the file at fault is the one
// whose path matches and a decoy's symbols match, in the small one (10)
// the other way round. A linear score must side with one; the listwise
// optimum sets the path weight above the symbols weight by the log of the
// ratio of the two repositories' total weights: ln 4 counting instances
// alike, ln 2 with each repository's counted 1/sqrt(n) (Fit's).
func TestFitWeighsLargeRepositoriesDown(t *testing.T) {
	t.Parallel()
	side := func(repo string, n int, goldFeat, decoyFeat feature) []Sample {
		var out []Sample
		for q := 0; q < n; q++ {
			var g, d features
			g[goldFeat], d[decoyFeat] = 1, 1
			out = append(out, Sample{InstanceID: fmt.Sprintf("%s-%d", repo, q), Repo: repo,
				Paths: []string{"a.py", "b.py"}, Feats: []features{g, d}, Gold: []bool{true, false}})
		}
		return out
	}
	samples := append(side("big/repo", 40, fPath, fSymbol), side("small/repo", 10, fSymbol, fPath)...)
	opts := FitOptions{Steps: 2000}
	alike := fit(samples, opts, 0)
	balanced := Fit(samples, opts)
	for _, c := range []struct {
		name string
		w    *Weights
		want float64
	}{{"counted alike", alike, math.Log(4)}, {"Fit", balanced, math.Log(2)}} {
		if d := c.w[fPath] - c.w[fSymbol]; math.Abs(d-c.want) > 0.1 {
			t.Errorf("%s: path − symbols = %.3f, want %.3f", c.name, d, c.want)
		}
	}
}

// InFold scores, for each repository held out, leave-one-out among the
// others: every other instance once per held-out repository, the held-out
// repository's own never, and each fold exactly as LeaveOneRepoOut over
// the other repositories alone would (so nothing of the held-out one
// reaches its weights).
func TestInFoldNeverSeesTheHeldOutRepository(t *testing.T) {
	t.Parallel()
	sizes := map[string]int{"a/x": 10, "b/y": 6, "c/z": 4}
	var samples []Sample
	for _, r := range []string{"a/x", "b/y", "c/z"} {
		samples = append(samples, synthetic(r, sizes[r])...)
	}
	// c's issues point the other way: fitted on, they would move weights.
	for i := range samples {
		if samples[i].Repo == "c/z" {
			for c := range samples[i].Gold {
				samples[i].Gold[c] = samples[i].Feats[c][fContent] == 1
			}
		}
	}
	got := InFold(samples, 10, FitOptions{Steps: 40})
	if len(got) != (20-10)+(20-6)+(20-4) {
		t.Fatalf("%d outcomes, want %d", len(got), (20-10)+(20-6)+(20-4))
	}
	at := 0
	for _, held := range []string{"a/x", "b/y", "c/z"} {
		var rest []Sample
		for _, s := range samples {
			if s.Repo != held {
				rest = append(rest, s)
			}
		}
		want := LeaveOneRepoOut(rest, 10, FitOptions{Steps: 40})
		for i, w := range want {
			g := got[at+i]
			if g.Repo == held {
				t.Errorf("fold holding %s scored its own instance %s", held, g.InstanceID)
			}
			if g.System != SystemInFold || g.InstanceID != w.InstanceID || g.Rank != w.Rank || strings.Join(g.Top, " ") != strings.Join(w.Top, " ") {
				t.Errorf("fold holding %s, outcome %d: %+v, want %+v as leave-one-out among the others", held, i, g, w)
			}
		}
		at += len(want)
	}
}

// Evaluate's refitted outcomes are the left-out ones, then the in-fold
// ones, each only when asked for.
func TestRefittedOutcomes(t *testing.T) {
	t.Parallel()
	var samples []Sample
	for _, r := range []string{"a/x", "b/y", "c/z"} {
		samples = append(samples, synthetic(r, 4)...)
	}
	count := func(os []Outcome) map[string]int {
		n := map[string]int{}
		for _, o := range os {
			n[o.System]++
		}
		return n
	}
	for _, c := range []struct {
		opts        EvalOptions
		loo, inFold int
	}{
		{EvalOptions{}, 0, 0},
		{EvalOptions{LeaveOneOut: true}, 12, 0},
		{EvalOptions{InFold: true}, 0, 24},
		{EvalOptions{LeaveOneOut: true, InFold: true}, 12, 24},
	} {
		got := refitted(samples, 10, c.opts)
		n := count(got)
		if n[SystemLOO] != c.loo || n[SystemInFold] != c.inFold || len(got) != c.loo+c.inFold {
			t.Errorf("%+v: %v, want %d left out and %d in-fold", c.opts, n, c.loo, c.inFold)
		}
		if c.loo > 0 && c.inFold > 0 && (got[0].System != SystemLOO || got[len(got)-1].System != SystemInFold) {
			t.Errorf("%+v: left-out outcomes do not come first", c.opts)
		}
	}
}
