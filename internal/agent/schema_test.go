package agent

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		phase   Phase
		raw     string
		wantErr string
	}{
		{PhaseExecute, `{"id":"T1","status":"completed","findings":"ok","tests_passed":true}`, ""},
		{PhaseExecute, `{"id":"T1","status":"done","findings":"ok","tests_passed":true}`, "/status"},
		{PhaseExecute, `{"id":"T1","status":"completed","findings":"ok"}`, "tests_passed"},
		{PhaseAnalyze, `{"type":"feature","complexity":"Medium","angles":[{"id":"E1","angle":"patterns","description":"d","focus":"f"}]}`, ""},
		{PhaseAnalyze, `{"type":"feature","complexity":"Huge","angles":[]}`, "/complexity"},
		{PhasePlan, `{"summary":"s","approach":"a","tasks":[{"id":"X1","title":"t","description":"d","scope":"a/**"}]}`, "/tasks/0/id"},
		{PhaseExplore, `not json`, "not valid JSON"},
	}
	for _, c := range cases {
		err := Validate(c.phase, []byte(c.raw))
		if c.wantErr == "" {
			if err != nil {
				t.Errorf("%s %s: unexpected error %v", c.phase, c.raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s %s: error %v, want it to mention %q", c.phase, c.raw, err, c.wantErr)
		}
	}
	if _, err := Schema("nope"); err == nil {
		t.Error("Schema(nope) returned no error")
	}
}
