package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/planexhq/planex/internal/agent"
)

// TestInputSchemas: the schemas generated from the argument types are the
// ones the model was offered when they were written by hand (the same
// required arguments, types, bounds, enums and descriptions).
func TestInputSchemas(t *testing.T) {
	want := map[string]string{
		ListFiles: `{"type":"object","properties":{
			"path":{"type":"string","description":"Directory relative to the repository root; default \".\""},
			"glob":{"type":"string","description":"Optional doublestar glob on the repository-relative path, e.g. src/**/*.ts"}}}`,
		ReadFile: `{"type":"object","required":["path"],"properties":{
			"path":{"type":"string","description":"File path relative to the repository root"},
			"start_line":{"type":"integer","minimum":1,"description":"First line to return (1-based); default 1"},
			"end_line":{"type":"integer","minimum":1,"description":"Last line to return (inclusive); default end of file"}}}`,
		Search: `{"type":"object","required":["pattern"],"properties":{
			"pattern":{"type":"string","description":"RE2 regular expression"},
			"path":{"type":"string","description":"Directory or file to search, relative to the repository root; default \".\""},
			"glob":{"type":"string","description":"Optional doublestar glob restricting which files are searched, e.g. **/*.go"},
			"ignore_case":{"type":"boolean"}}}`,
		WriteFile: `{"type":"object","required":["path","content"],"properties":{
			"path":{"type":"string","description":"File path relative to the repository root"},
			"content":{"type":"string","description":"The complete new content of the file"}}}`,
		EditFile: `{"type":"object","required":["path","old_text","new_text"],"properties":{
			"path":{"type":"string","description":"File path relative to the repository root"},
			"old_text":{"type":"string","description":"Exact text to replace; must occur exactly once"},
			"new_text":{"type":"string","description":"Replacement text"}}}`,
		RunCommand: `{"type":"object","required":["command"],"properties":{
			"command":{"type":"string","description":"Shell command line"},
			"timeout_seconds":{"type":"integer","minimum":1,"description":"Optional shorter or longer limit, capped by the step's own time limit"}}}`,
		AppendDiscover: `{"type":"object","required":["type","data"],"properties":{
			"type":{"type":"string","enum":["code_pattern","integration_point","convention","blocker","tech_stack","test_command"]},
			"data":{"type":"object","description":"The finding as a small JSON object, e.g. {\"command\":\"go test ./...\"}"}}}`,
	}
	s, err := New(Config{Phase: agent.PhaseExecute, Dir: t.TempDir(), DiscoveriesFile: "d.ndjson", Scope: "a/**"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := 0
	for _, d := range s.Defs() {
		w, ok := want[d.Name]
		if !ok {
			continue
		}
		seen++
		var got, exp any
		if err := json.Unmarshal(d.InputSchema, &got); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if err := json.Unmarshal([]byte(w), &exp); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s schema\n got %s\nwant %s", d.Name, d.InputSchema, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d tools offered", seen, len(want))
	}
}
