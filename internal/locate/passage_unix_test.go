//go:build unix

package locate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The passage stage's file swaps include a FIFO, which only Unix has.
func TestPassageStageReadsTheTree(t *testing.T) {
	dir, m := mapTree(t, spreadAndDense())
	ix := NewIndex(m)
	q := "shifting by an offset loses the timezone name of the calendar"

	ev := ix.evidence(q, dir)
	dense, _ := ix.byPath("pkg/dense.py")
	spread, _ := ix.byPath("pkg/spread.py")
	if ev.feats.at(fPassage, dense) != 1 || ev.feats.at(fPassage, spread) >= 1 {
		t.Errorf("passage: dense %.3f, spread %.3f; want the dense file best",
			ev.feats.at(fPassage, dense), ev.feats.at(fPassage, spread))
	}
	if ev.feats.at(fPassageRank, dense) != 1 {
		t.Errorf("passage rank of the dense file = %.3f", ev.feats.at(fPassageRank, dense))
	}
	// Both have "timezone name"; only the dense file's comment has more
	// of the word pairs ("offset loses", "loses the timezone").
	if ev.feats.at(fPhrase, dense) <= ev.feats.at(fPhrase, spread) {
		t.Errorf("phrase: dense %.3f, spread %.3f; the dense file shares more of the issue's word pairs",
			ev.feats.at(fPhrase, dense), ev.feats.at(fPhrase, spread))
	}
	if got := ev.noteOf(fPassage, dense); !strings.Contains(got, "closest passage at lines 161–200") {
		t.Errorf("passage note = %q", got)
	}

	// Without a root there is nothing to read: no second-stage signal.
	ev = ix.evidence(q, "")
	for _, f := range []feature{fPassage, fPassageRank, fPhrase, fTitlePassage} {
		if ev.feats.at(f, dense) != 0 {
			t.Errorf("%s set without a root", featureInfo[f].name)
		}
	}

	// A file turned into a FIFO or a link since the map was built is not
	// read (a FIFO would block, a link could point out of the tree).
	densePath := filepath.Join(dir, "pkg", "dense.py")
	outside := filepath.Join(t.TempDir(), "secret.py")
	if err := os.WriteFile(outside, []byte(spreadAndDense()["pkg/dense.py"]), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, swap := range []struct {
		name string
		make func() error
	}{
		{"fifo", func() error { return syscall.Mkfifo(densePath, 0o600) }},
		{"symlink", func() error { return os.Symlink(outside, densePath) }},
	} {
		if err := os.Remove(densePath); err != nil {
			t.Fatal(err)
		}
		if err := swap.make(); err != nil {
			t.Fatal(err)
		}
		ev = ix.evidence(q, dir)
		if ev.feats.at(fPassage, dense) != 0 || ev.feats.at(fPhrase, dense) != 0 {
			t.Errorf("%s was read: passage %.3f, phrase %.3f", swap.name, ev.feats.at(fPassage, dense), ev.feats.at(fPhrase, dense))
		}
	}

	// A file gone since the map was built is skipped, not an error.
	if err := os.Remove(filepath.Join(dir, "pkg", "dense.py")); err != nil {
		t.Fatal(err)
	}
	ev = ix.evidence(q, dir)
	if ev.feats.at(fPassage, dense) != 0 || ev.feats.at(fPassage, spread) != 1 {
		t.Errorf("after removal: dense %.3f, spread %.3f", ev.feats.at(fPassage, dense), ev.feats.at(fPassage, spread))
	}
}
