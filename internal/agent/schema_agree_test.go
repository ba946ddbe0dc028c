package agent

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
)

// libraryVerdict checks raw with a general JSON Schema (2020-12)
// implementation, the one planex used before it checked results itself:
// nil for a valid result, else the problems, one "at <where>: <what>"
// each, sorted. notJSON says raw was not one JSON value.
func libraryVerdict(t testing.TB, p Phase, raw []byte) (probs []string, notJSON bool) {
	t.Helper()
	b, err := Schema(p)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "planex://schemas/" + string(p) + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, true
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil, false
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		t.Fatalf("%s: %v", p, err)
	}
	printer := message.NewPrinter(message.MatchLanguage("en"))
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			probs = append(probs, "at /"+strings.Join(e.InstanceLocation, "/")+": "+e.ErrorKind.LocalizedString(printer))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(probs)
	return probs, false
}

// planexVerdict is Validate's answer in libraryVerdict's terms.
func planexVerdict(t testing.TB, p Phase, raw []byte) (probs []string, notJSON bool) {
	t.Helper()
	err := Validate(p, raw)
	if err == nil {
		return nil, false
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "result is not valid JSON: ") {
		return nil, true
	}
	rest, ok := strings.CutPrefix(msg, "result does not match the "+string(p)+" schema: ")
	if !ok {
		t.Fatalf("%s: unexpected error %v", p, err)
	}
	probs = strings.Split(rest, "; ")
	slices.Sort(probs)
	return probs, false
}

func checkAgrees(t testing.TB, p Phase, raw []byte) {
	t.Helper()
	want, wantNotJSON := libraryVerdict(t, p, raw)
	got, gotNotJSON := planexVerdict(t, p, raw)
	if wantNotJSON != gotNotJSON || !slices.Equal(want, got) {
		t.Errorf("%s %q:\nplanex  %v (not JSON: %v)\nlibrary %v (not JSON: %v)", p, raw, got, gotNotJSON, want, wantNotJSON)
	}
}

// agreeCases break each keyword the result schemas use, alone and
// several at once, at the top and nested in arrays of objects.
var agreeCases = []struct {
	phase Phase
	raw   string
}{
	{PhaseExecute, `{"id":"T1","status":"completed","findings":"ok","tests_passed":true}`},
	{PhaseExecute, `{"id":"T1","status":"done","findings":"ok","tests_passed":true}`},
	{PhaseExecute, `{"id":"T1","status":"completed","findings":"ok"}`},
	{PhaseExecute, `{"status":"completed"}`},
	{PhaseExecute, `{}`},
	{PhaseExecute, `[]`},
	{PhaseExecute, `null`},
	{PhaseExecute, `"text"`},
	{PhaseExecute, `12.5`},
	{PhaseExecute, `{"id":"T0","status":1,"findings":"` + strings.Repeat("é", 4001) + `","tests_passed":"yes","files_modified":"a.go"}`},
	{PhaseExecute, `{"id":"T1","status":"failed","findings":"","tests_passed":false,"files_modified":["a",2,null],"error":"it's \"bad\"\n"}`},
	{PhaseExecute, `{"id":"T12","status":"completed","findings":"` + strings.Repeat("é", 4000) + `","tests_passed":true,"extra":{"x":1}}`},
	{PhaseExecute, `{"id":"x T1","status":"completed","findings":"","tests_passed":true}`},
	{PhaseExecute, `{"id":"T1","status":"completed","findings":"","tests_passed":true} x`},
	{PhaseExecute, `{"id":"T1","status":"completed","findings":"","tests_passed":true}{}`},
	{PhaseExecute, `not json`},
	{PhaseExecute, ``},
	{PhaseAnalyze, `{"type":"feature","complexity":"Medium","angles":[{"id":"E1","angle":"patterns","description":"d","focus":"f"}]}`},
	{PhaseAnalyze, `{"type":"feature","complexity":"Huge","angles":[]}`},
	{PhaseAnalyze, `{"type":"x","complexity":"Low","angles":[{},{"id":"E01","angle":"","description":"","focus":3},{"id":"E2","angle":"` + strings.Repeat("a", 61) + `","description":"d","focus":"f"},1,2]}`},
	{PhaseAnalyze, `{"type":["feature"],"complexity":null,"angles":{}}`},
	{PhasePlan, `{"summary":"s","approach":"a","tasks":[{"id":"X1","title":"t","description":"d","scope":"a/**"}]}`},
	{PhasePlan, `{"summary":"s","approach":"a","tasks":[]}`},
	{PhasePlan, `{"summary":"s","approach":"a","tasks":[{"id":"T1","title":"","description":"d","scope":"","deps":["T0","T2",5],"context_from":["E1","T3","X1"]}]}`},
	{PhasePlan, `{"summary":"s","approach":"a","tasks":[{"id":"T1","title":"t","description":"d","scope":"s","deps":"T2"}]}`},
	{PhasePlan, `{"summary":1,"tasks":[{"title":"t"}]}`},
	{PhaseExplore, `{"id":"E1","status":"completed","findings":"f","key_files":["a.go"]}`},
	{PhaseExplore, `{"id":"T1","status":"completed","findings":"f","key_files":[1]}`},
	{PhaseExplore, `not json`},
	{PhaseReview, `{"id":"PR","verdict":"pass","criteria":[],"findings":[]}`},
	{PhaseReview, `{"id":"T3","verdict":"concerns","summary":"s","criteria":[{"criterion":"c","met":true,"evidence":"a.go:1","note":"n"}],"findings":[{"severity":"high","file":"a.go","line":3,"explanation":"e","suggestion":"s"}]}`},
	{PhaseReview, `{"id":"PRX","verdict":"maybe","criteria":[{"criterion":"","met":"yes"}],"findings":[{"severity":"urgent","file":"","line":-1,"explanation":""}]}`},
	{PhaseReview, `{"id":"T1","verdict":"fail","criteria":[],"findings":[{"severity":"low","file":"f","line":2.5,"explanation":"e"},{"severity":"low","file":"f","line":2.0,"explanation":"e"},{"severity":"low","file":"f","line":1e400,"explanation":"e"},{"severity":"low","file":"f","line":-1e-400,"explanation":"e"},{"severity":"low","file":"f","line":"2","explanation":"e"}]}`},
	{PhaseReview, `{"id":"T1","verdict":"pass","criteria":[` + strings.Repeat(`{"criterion":"c","met":true},`, 40) + `{"criterion":"c","met":true}],"findings":[]}`},
}

// TestValidateAgreesWithLibrary: planex's own check of a result gives the
// verdict, and names the same problems in the same words, as the general
// JSON Schema library planex used before, for every schema and keyword.
func TestValidateAgreesWithLibrary(t *testing.T) {
	for _, c := range agreeCases {
		checkAgrees(t, c.phase, []byte(c.raw))
	}
	for _, p := range fuzzPhases {
		if _, err := compile(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// FuzzValidateAgreesWithLibrary: the same, for what the fuzzer makes of
// those results.
func FuzzValidateAgreesWithLibrary(f *testing.F) {
	for _, c := range agreeCases {
		f.Add(uint8(slices.Index(fuzzPhases, c.phase)), []byte(c.raw))
	}
	f.Fuzz(func(t *testing.T, phase uint8, raw []byte) {
		checkAgrees(t, fuzzPhases[int(phase)%len(fuzzPhases)], raw)
	})
}
