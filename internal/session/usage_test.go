package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/usage"
)

// TestRedTeamAdoptRefusesForgedUsage: the Action adopts the session.json
// of its state ref, which whoever can push may have written, and the
// budget sums its usage records. One whose plan step cost -1000000 (or
// whose tokens are negative, or large enough for two to wrap the sum)
// made every later budget check pass; adopting it is refused, naming the
// step, and an honest one is adopted.
func TestRedTeamAdoptRefusesForgedUsage(t *testing.T) {
	t.Parallel()
	cases := map[string]usage.Usage{
		"a negative cost":          {CostUSD: -1e6},
		"negative input tokens":    {InputTokens: -1 << 40},
		"tokens that wrap the sum": {OutputTokens: 1 << 62},
		"an honest plan step":      {InputTokens: 5000, OutputTokens: 800, CostUSD: 0.03},
	}
	for name, u := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			other, st := testStore(t), testStore(t)
			o, err := Create(other, Meta{ID: "s", Requirement: "r"})
			if err != nil {
				t.Fatal(err)
			}
			o.AddUsage("plan", u)
			if err := o.SaveMeta(); err != nil {
				t.Fatal(err)
			}
			copyMetaAs(t, st, "s", o)
			err = Adopt(st, "s")
			if name == "an honest plan step" {
				if err != nil {
					t.Fatalf("Adopt: %v", err)
				}
				if s, err := Open(st, "s"); err != nil || s.Meta.Usage["plan"] != u {
					t.Errorf("Open after Adopt: %v, %v", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), `the usage of step "plan"`) {
				t.Errorf("Adopt = %v, want the forged usage refused", err)
			}
			if _, err := Open(st, "s"); err == nil {
				t.Error("the forged session opens")
			}
		})
	}
}

// TestRedTeamMetaNeverSavedPastItsReadBound: whoever can push writes the
// state ref's session.json compact, just under the 8 MiB planex reads,
// with tens of thousands of usage records. Adopting it wrote it back
// indented, past the bound, so every later step failed to read its own
// session. It is now written back compact, and a record that cannot fit
// either way is refused with ErrMetaTooLarge, the file left as it was.
func TestRedTeamMetaNeverSavedPastItsReadBound(t *testing.T) {
	t.Parallel()
	other, st := testStore(t), testStore(t)
	o, err := Create(other, Meta{ID: "s", Requirement: "r"})
	if err != nil {
		t.Fatal(err)
	}
	// Each record is 72 bytes compact: enough of them for 8 MiB less
	// 128 KiB, checked below.
	o.Meta.Usage = map[string]usage.Usage{}
	for i := 0; i < (maxMeta-128<<10)/72; i++ {
		o.Meta.Usage[fmt.Sprintf("review T%06d", i)] = usage.Usage{InputTokens: 1, OutputTokens: 1, CostUSD: 0.01}
	}
	b, err := json.Marshal(o.Meta)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= maxMeta || len(b) < maxMeta-1<<20 {
		t.Fatalf("the forged session.json is %d bytes; want just under %d", len(b), maxMeta)
	}
	copyMetaAs(t, st, "s", o)
	dir, _ := st.Folder("s")
	if err := os.WriteFile(filepath.Join(dir, MetaFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Adopt(st, "s"); err != nil {
		t.Fatalf("Adopt of a %d-byte session.json: %v", len(b), err)
	}
	s, err := Open(st, "s")
	if err != nil {
		t.Fatalf("planex cannot read the session it saved: %v", err)
	}
	// Growing it past the bound is refused; what is on disk still opens.
	before, _ := os.ReadFile(s.File(MetaFile))
	seal := s.Meta.Seal
	for i := 0; i < 40000; i++ {
		s.AddUsage(fmt.Sprintf("review U%06d", i), usage.Usage{InputTokens: 1})
	}
	if err := s.SaveMeta(); !errors.Is(err, ErrMetaTooLarge) {
		t.Errorf("SaveMeta of a record past the bound: %v; want ErrMetaTooLarge", err)
	}
	// The refusal leaves the in-memory record as it was too: its seal is
	// still the one on disk, not one of a record never written.
	var onDisk Meta
	if err := json.Unmarshal(before, &onDisk); err != nil || s.Meta.Seal != seal || s.Meta.Seal != onDisk.Seal {
		t.Errorf("after the refused save the in-memory seal is %q; want the saved one %q (%v)", s.Meta.Seal, onDisk.Seal, err)
	}
	if after, _ := os.ReadFile(s.File(MetaFile)); string(after) != string(before) {
		t.Error("a refused SaveMeta changed session.json")
	}
	if _, err := Open(st, "s"); err != nil {
		t.Errorf("after the refused save: %v", err)
	}
}
