package event

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var fuzzEvents = []string{"issue_comment", "issues", "pull_request_review", "pull_request_review_comment", "workflow_dispatch", "workflow_run", "schedule", "push"}

// FuzzParse: any payload under any event name decodes or fails with an
// error naming the event; a decoded event has the name it was given and a
// decoded comment the body it carried.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(uint8(0), b)
		}
	}
	f.Add(uint8(5), []byte(`{"workflow_run":{"id":1,"path":".github/workflows/ci.yml","pull_requests":[{"number":2}]}}`))
	f.Add(uint8(1), []byte(`{"issue":{"number":-1,"labels":[null]},"sender":null}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		name := fuzzEvents[int(which)%len(fuzzEvents)]
		ev, err := Parse(name, data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if ev == nil || ev.Name != name {
			t.Fatalf("Parse(%q) = %+v", name, ev)
		}
		// The repository planex acts on is the payload's, whole.
		var raw struct {
			Repository *struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		if json.Unmarshal(data, &raw) == nil && raw.Repository != nil && strings.Contains(raw.Repository.FullName, "/") {
			if ev.Owner+"/"+ev.Repo != raw.Repository.FullName || ev.Owner == "" || ev.Repo == "" {
				t.Fatalf("repository %q read as %q / %q", raw.Repository.FullName, ev.Owner, ev.Repo)
			}
		}
	})
}
