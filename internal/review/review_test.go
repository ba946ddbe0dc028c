package review

import (
	"strings"
	"testing"
)

const gitDiff = `diff --git a/src/new.go b/src/new.go
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/src/new.go
@@ -0,0 +1,3 @@
+package src
+
+func A() {}
diff --git a/README.md b/README.md
index 2222222..3333333 100644
--- a/README.md
+++ b/README.md
@@ -1,4 +1,5 @@
 # demo
-old line
+new line
+another
 keep
 end
@@ -10,2 +11 @@ section
-gone
 tail
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git "a/we ird.txt" "b/we ird.txt"
--- "a/we ird.txt"
+++ "b/we ird.txt"
@@ -1 +1 @@
--- not a header
+++ added, not a header
`

func TestParseUnified(t *testing.T) {
	d := ParseUnified(gitDiff)
	tests := []struct {
		path         string
		line         int
		added, shown bool
	}{
		{"src/new.go", 1, true, true},
		{"src/new.go", 3, true, true},
		{"src/new.go", 4, false, false},
		{"README.md", 1, false, true}, // context
		{"README.md", 2, true, true},
		{"README.md", 3, true, true},
		{"README.md", 4, false, true},
		{"README.md", 5, false, true},
		{"README.md", 6, false, false}, // between hunks
		{"README.md", 11, false, true}, // second hunk's context
		{"old.txt", 1, false, false},   // deleted file
		{"we ird.txt", 1, true, true},  // quoted name; "+++" inside a hunk is content
		{"missing.go", 1, false, false},
		{"./src/new.go", 2, true, true},
	}
	for _, tc := range tests {
		if got := d.Added(tc.path, tc.line); got != tc.added {
			t.Errorf("Added(%s, %d) = %v, want %v", tc.path, tc.line, got, tc.added)
		}
		if got := d.Shown(tc.path, tc.line); got != tc.shown {
			t.Errorf("Shown(%s, %d) = %v, want %v", tc.path, tc.line, got, tc.shown)
		}
	}
	if _, ok := d["old.txt"]; ok {
		t.Error("a deleted file has no new side to comment on")
	}
}

// A diff cut short (a byte limit, a lost connection) keeps the files
// before the cut; the file cut in its hunk is not guessed at.
func TestParseUnifiedCutShort(t *testing.T) {
	cut := gitDiff[:strings.Index(gitDiff, "+another")]
	d := ParseUnified(cut)
	if !d.Added("src/new.go", 3) {
		t.Error("the file before the cut is lost")
	}
	if d.Shown("README.md", 1) {
		t.Error("the file cut short should be left out")
	}
}

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		added []int
		not   []int
	}{
		{"one hunk", "@@ -1,2 +1,3 @@\n a\n+b\n c", []int{2}, []int{1, 3}},
		{"two hunks", "@@ -1 +1,2 @@\n a\n+b\n@@ -20,2 +21,2 @@\n x\n-y\n+z", []int{2, 22}, []int{1, 21, 20}},
		{"counts omitted", "@@ -5 +5 @@\n-old\n+new", []int{5}, []int{4, 6}},
		{"no newline marker", "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file", []int{1}, []int{2}},
		{"junk header", "@@ nonsense @@\n+x", nil, []int{1}},
	}
	for _, tc := range tests {
		f := ParsePatch("f.go", tc.patch)
		for _, l := range tc.added {
			if !f.Added[l] {
				t.Errorf("%s: line %d should be added", tc.name, l)
			}
		}
		for _, l := range tc.not {
			if f.Added[l] {
				t.Errorf("%s: line %d should not be added", tc.name, l)
			}
		}
	}
}

func TestPlace(t *testing.T) {
	d := ParseUnified(gitDiff)
	mk := func(id, file string, line int, sev Severity) Finding {
		return Finding{ID: id, Key: FindingKey(file, line, id), File: file, Line: line, Severity: sev, Explanation: "problem " + id}
	}
	onAdded := mk("F1", "src/new.go", 3, High)
	onContext := mk("F2", "README.md", 4, Medium)
	outside := mk("F3", "other.go", 7, Low)
	noLine := mk("F4", "README.md", 0, Low)
	already := mk("F5", "README.md", 2, High)
	tests := []struct {
		name       string
		in         []Finding
		skip       map[string]bool
		wantInline []string
		wantBody   []string
	}{
		{"added line is inline", []Finding{onAdded}, nil, []string{"F1"}, nil},
		{"unchanged context line goes to body", []Finding{onContext}, nil, nil, []string{"F2"}},
		{"file outside the diff goes to body", []Finding{outside}, nil, nil, []string{"F3"}},
		{"no line goes to body", []Finding{noLine}, nil, nil, []string{"F4"}},
		{"already commented is skipped", []Finding{already, onAdded}, map[string]bool{already.Key: true}, []string{"F1"}, nil},
	}
	for _, tc := range tests {
		inline, body := Place(tc.in, d, tc.skip)
		var gi, gb []string
		for _, in := range inline {
			gi = append(gi, in.Finding.ID)
			if !d.Added(in.Path, in.Line) || !strings.Contains(in.Body, "planex:finding "+in.Finding.Key) {
				t.Errorf("%s: bad inline %+v", tc.name, in)
			}
		}
		for _, f := range body {
			gb = append(gb, f.ID)
		}
		if strings.Join(gi, ",") != strings.Join(tc.wantInline, ",") || strings.Join(gb, ",") != strings.Join(tc.wantBody, ",") {
			t.Errorf("%s: inline %v body %v, want %v %v", tc.name, gi, gb, tc.wantInline, tc.wantBody)
		}
	}
}

func TestSummaryRoundTripAndMarkers(t *testing.T) {
	a := AgentResult{ID: "T1", Verdict: VerdictFail, Summary: "half done", Criteria: []Criterion{{Criterion: "a | b", Met: false, Evidence: "x.go:3"}}}
	a.Findings = append(a.Findings, struct {
		Severity    Severity `json:"severity"`
		File        string   `json:"file"`
		Line        int      `json:"line"`
		Explanation string   `json:"explanation"`
		Suggestion  string   `json:"suggestion"`
	}{High, "./x.go", 3, "nil map write <!-- planex:finding 0123456789 -->", "make it"})
	r := &Result{Kind: KindRun, Status: StatusCompleted, Head: "abcdef0123456789", Tasks: []TaskReview{a.TaskReview("T1", "Add x", "c0ffee")}}
	r.Conclude()
	if r.Verdict != VerdictFail {
		t.Errorf("verdict %s", r.Verdict)
	}
	f := r.Findings()[0]
	if f.File != "x.go" || f.ID != "T1-F1" || len(f.Key) != 10 {
		t.Errorf("finding %+v", f)
	}
	body := Summary(r, SummaryOptions{Fixable: true, Trigger: "/planex"})
	for _, want := range []string{"**Verdict: fail**", "| T1 Add x | a \\| b | ❌ no | `x.go:3` |", "Findings not on a changed line", "`/planex fix`"} {
		if !strings.Contains(body, want) {
			t.Errorf("summary lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<!-- planex:finding") {
		t.Error("an agent's text smuggled a marker into the summary")
	}
	if !IsSummary(body) {
		t.Fatal("no summary marker")
	}
	d, ok := ParseSummary(body)
	if !ok || len(d.Findings) != 1 || d.Findings[0].Key != f.Key || d.Findings[0].Severity != High || d.Findings[0].Inline {
		t.Errorf("marker data %+v %v", d, ok)
	}
	if k, ok := FindingKeyOf(InlineBody(f)); !ok || k != f.Key {
		t.Errorf("inline marker %q %v", k, ok)
	}
	if strings.Count(InlineBody(f), "<!-- planex:finding") != 1 {
		t.Error("inline body carries a smuggled marker")
	}
	if got := FixedKeys(FixedBody("done", f.Key)); len(got) != 1 || got[0] != f.Key {
		t.Errorf("fixed keys %v", got)
	}
	if _, ok := ParseSummary("<!-- planex:review v1 !!! -->"); ok {
		t.Error("junk marker accepted")
	}
}

func TestSaveLoadAndRecordFailure(t *testing.T) {
	p := t.TempDir() + "/review.json"
	if r, err := Load(p); r != nil || err != nil {
		t.Fatalf("missing file: %v %v", r, err)
	}
	r := &Result{Kind: KindRun, Status: StatusRunning, Tasks: []TaskReview{{Task: "T1", Verdict: VerdictPass}}}
	if err := Save(p, r); err != nil {
		t.Fatal(err)
	}
	if err := RecordFailure(p, errString("agent\ntimed out"), r.Started); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil || got.Status != StatusFailed || got.Error != "agent timed out" || len(got.Tasks) != 1 {
		t.Errorf("after failure: %+v %v", got, err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
