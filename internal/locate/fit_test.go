package locate

import (
	"encoding/json"
	"fmt"
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
