package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/termsafe"
)

var fuzzPhases = []Phase{PhaseAnalyze, PhaseExplore, PhasePlan, PhaseExecute, PhaseReview}

// FuzzResultJSON: what an agent hands in is cleaned (no control character
// survives in a string, cleaning twice changes nothing more, valid JSON
// stays valid) and a result the schema accepts always decodes.
func FuzzResultJSON(f *testing.F) {
	for _, s := range []string{
		`{"type":"feature","complexity":"Low","angles":[{"id":"E1","angle":"a","description":"d","focus":"f"}]}`,
		`{"status":"completed","findings":"ok\u001b[2J","files_modified":["a.go"],"tests_passed":true,"acceptance_met":"yes","error":""}`,
		`{"summary":"s","approach":"a","tasks":[]}`, `{"a":"\u0007\r"}`, `[1,2,{"x":"\u009b31m"}]`, `not json`, `{"a":1}{"b":2}`,
	} {
		f.Add(uint8(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, phase uint8, raw []byte) {
		p := fuzzPhases[int(phase)%len(fuzzPhases)]
		clean := CleanJSON(raw)
		if json.Valid(raw) {
			if !json.Valid(clean) {
				t.Fatalf("cleaning made %q invalid: %q", raw, clean)
			}
			var v any
			dec := json.NewDecoder(bytes.NewReader(clean))
			if dec.Decode(&v) == nil {
				checkClean(t, v)
			}
			if again := CleanJSON(clean); !bytes.Equal(again, clean) {
				t.Fatalf("cleaning twice changed %q to %q", clean, again)
			}
		}
		if Validate(p, clean) == nil {
			var v map[string]any
			if err := Decode(p, clean, &v); err != nil {
				t.Fatalf("%s result accepted by the schema does not decode: %v", p, err)
			}
		}
	})
}

func checkClean(t *testing.T, v any) {
	t.Helper()
	switch v := v.(type) {
	case string:
		if strings.ContainsFunc(v, func(r rune) bool { return termsafe.Drops(r) && r != '\n' && r != '\t' }) {
			t.Fatalf("%q keeps a control character", v)
		}
	case []any:
		for _, e := range v {
			checkClean(t, e)
		}
	case map[string]any:
		for k, e := range v {
			checkClean(t, k)
			checkClean(t, e)
		}
	}
}
