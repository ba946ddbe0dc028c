package review

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadSaveErrors: a review.json that cannot be read or parsed is an
// error naming the file; a failure is still recorded over a corrupt one
// (with a fresh result, never a half-read one); Save names where it could
// not write and leaves no partial file behind.
func TestLoadSaveErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte(`{"status": "running", "tasks": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := Load(corrupt); r != nil || err == nil || !strings.Contains(err.Error(), corrupt) {
		t.Errorf("Load(corrupt) = %v, %v; want an error naming %s", r, err, corrupt)
	}
	if r, err := Load(dir); r != nil || err == nil || !strings.Contains(err.Error(), "reading the review") {
		t.Errorf("Load(a folder) = %v, %v; want a reading error", r, err)
	}

	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := RecordFailure(corrupt, errors.New("disk\nfull"), now); err != nil {
		t.Fatal(err)
	}
	r, err := Load(corrupt)
	if err != nil || r.Status != StatusFailed || r.Kind != KindRun || r.Error != "disk full" || !r.Started.Equal(now) || !r.Finished.Equal(now) || r.Version != 1 {
		t.Errorf("after RecordFailure over a corrupt file: %+v, %v", r, err)
	}
	fresh := filepath.Join(dir, "fresh.json")
	if err := RecordFailure(fresh, errors.New("no agent"), now); err != nil {
		t.Fatal(err)
	}
	if r, err := Load(fresh); err != nil || r.Status != StatusFailed || r.Error != "no agent" || len(r.Tasks) != 0 {
		t.Errorf("RecordFailure with no file: %+v, %v", r, err)
	}

	missing := filepath.Join(dir, "no", "such", "review.json")
	err = Save(missing, &Result{Kind: KindRun})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Save into a missing folder: %v; want an error naming %s", err, missing)
	}
	if err := RecordFailure(missing, errors.New("x"), now); err == nil {
		t.Error("RecordFailure reported success for a file it could not write")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != "corrupt.json" && n != "fresh.json" {
			t.Errorf("left behind %s", n)
		}
	}
}

// TestBodiesAndMarkers: the batch body of a re-run counts its comments
// and is not taken for a summary; a fixed reply to a human's comment
// carries no marker; a summary marker whose payload is not base64 JSON
// is refused; a review without a verdict says so with a dash.
func TestBodiesAndMarkers(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1: "1 new inline finding.", 3: "3 new inline findings."} {
		b := BatchBody(n)
		if !strings.Contains(b, want) || IsSummary(b) || !strings.HasSuffix(b, batchMarker) {
			t.Errorf("BatchBody(%d) = %q", n, b)
		}
		if _, ok := ParseSummary(b); ok {
			t.Errorf("BatchBody(%d) parses as a summary", n)
		}
	}
	if got := FixedBody("Fixed in T5.", ""); got != "Fixed in T5." || len(FixedKeys(got)) != 0 {
		t.Errorf("FixedBody with no key = %q", got)
	}
	notJSON := "<!-- planex:review v1 " + base64.RawURLEncoding.EncodeToString([]byte("not json")) + " -->"
	if _, ok := ParseSummary("text\n" + notJSON + "\n"); ok {
		t.Error("a marker holding no JSON was accepted")
	}
	for v, want := range map[string]string{"": "**Verdict: —**", VerdictPass: "**Verdict: pass**", VerdictConcerns: "**Verdict: concerns**", "odd": "**Verdict: —**"} {
		if got := Summary(&Result{Kind: KindRun, Verdict: v}, SummaryOptions{}); !strings.Contains(got, want) {
			t.Errorf("verdict %q: summary lacks %q:\n%s", v, want, got)
		}
	}
	tasks := []TaskReview{{Task: "T1", Verdict: VerdictFail, Summary: "broken"}, {Task: "T2"}}
	got := Summary(&Result{Kind: KindRun, Tasks: tasks}, SummaryOptions{})
	if !strings.Contains(got, "- **T1** (fail): broken") || strings.Contains(got, "- **T2**") {
		t.Errorf("task verdicts: want T1's and none for T2 (no verdict, no summary):\n%s", got)
	}
}
