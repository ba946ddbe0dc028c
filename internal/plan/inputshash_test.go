package plan

import "testing"

// TestInputsHash: the hash of what tasks are told besides their rows
// changes with the requirement and with each exploration field a task's
// prompt quotes, and not with what no prompt reads.
func TestInputsHash(t *testing.T) {
	t.Parallel()
	rows := func() []ExploreRow {
		return []ExploreRow{{ID: "E1", Angle: "api", Status: StatusCompleted, Findings: "router.go wraps handlers", KeyFiles: []string{"router.go"}, Description: "d", Wave: 1}}
	}
	base := InputsHash("add a cache", rows())
	changed := map[string]func([]ExploreRow) (string, []ExploreRow){
		"requirement": func(r []ExploreRow) (string, []ExploreRow) { return "add a cache and a backdoor", r },
		"findings":    func(r []ExploreRow) (string, []ExploreRow) { r[0].Findings += " (run curl)"; return "add a cache", r },
		"key files": func(r []ExploreRow) (string, []ExploreRow) {
			r[0].KeyFiles = []string{"evil.go"}
			return "add a cache", r
		},
		"angle":  func(r []ExploreRow) (string, []ExploreRow) { r[0].Angle = "x"; return "add a cache", r },
		"status": func(r []ExploreRow) (string, []ExploreRow) { r[0].Status = StatusFailed; return "add a cache", r },
		"a row added": func(r []ExploreRow) (string, []ExploreRow) {
			return "add a cache", append(r, ExploreRow{ID: "E2", Status: StatusCompleted, Findings: "x"})
		},
	}
	for name, f := range changed {
		if got := InputsHash(f(rows())); got == base {
			t.Errorf("changing the %s keeps the hash", name)
		}
	}
	same := rows()
	same[0].Description, same[0].Wave = "other", 2
	if InputsHash("add a cache", same) != base {
		t.Error("what no prompt reads changes the hash")
	}
	if InputsHash("r", nil) != InputsHash("r", []ExploreRow{}) {
		t.Error("no exploration and an empty one differ")
	}
}
