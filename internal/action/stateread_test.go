package action

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo"
)

func TestWithNote(t *testing.T) {
	t.Parallel()
	cases := []struct {
		note  string
		extra []string
		want  string
	}{
		{"Running.", nil, "Running."},
		{"Running.", []string{""}, "Running."},
		{"Running.", []string{"Tasks unreadable."}, "Running. Tasks unreadable."},
		{"", []string{"", "Explore unreadable."}, "Explore unreadable."},
		{"", []string{"A.", "B."}, "A. B."},
	}
	for _, c := range cases {
		if got := withNote(c.note, c.extra...); got != c.want {
			t.Errorf("withNote(%q, %q) = %q, want %q", c.note, c.extra, got, c.want)
		}
	}
}

// TestUnreadableIsLoggedAndShown: a failed read of session state is
// logged and comes back as a sentence for people, its text escaped.
func TestUnreadableIsLoggedAndShown(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	r := &Runner{Log: slog.New(slog.NewTextHandler(&log, nil))}
	got := r.flows().store.unreadable("the plan's tasks", "7-x", errors.New("reading tasks.csv: *bad* row"))
	if !strings.Contains(got, "could not read the plan's tasks of session 7-x") || strings.Contains(got, "*bad*") {
		t.Errorf("note = %q", got)
	}
	if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "bad") {
		t.Errorf("log = %q", log.String())
	}
}

// TestStatusTasksReportsAnUnreadableSession: when a record's session
// cannot be read, the status comment's tasks are empty and the note says
// why, and the log has it; nothing is silently dropped.
func TestStatusTasksReportsAnUnreadableSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	repo, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	r := &Runner{Log: slog.New(slog.NewTextHandler(&log, nil))}
	tasks, note := r.flows().store.statusTasks(&Record{SessionID: "9-missing", repo: repo})
	if tasks != nil || !strings.Contains(note, "could not read the plan's tasks of session 9-missing") {
		t.Errorf("tasks %v, note %q", tasks, note)
	}
	if !strings.Contains(log.String(), "9-missing") {
		t.Errorf("not logged: %q", log.String())
	}
	if got := withNote("Approved by @m; running.", note); !strings.HasPrefix(got, "Approved by @m; running. planex could not read") {
		t.Errorf("status note %q", got)
	}
}

// TestRecordForms: the values of a record that planex shows (replies, the
// status comment, the pull request body, step outputs) are refused unless
// of the forms planex writes; whoever can push may have written a state
// ref with Markdown or line breaks in any of them.
func TestRecordForms(t *testing.T) {
	t.Parallel()
	ok := func() *Record {
		return &Record{SessionID: "7-add-a-file-f2", ApprovedBy: "maintainer", PlanID: "0123456789", State: StateDone,
			PRURL: "https://github.com/o/r/pull/8", CIFix: &CIFailure{Runs: []CIRun{{ID: 1, URL: "https://github.com/o/r/actions/runs/1",
				Jobs: []CIJob{{Name: "test", URL: "https://github.com/o/r/actions/runs/1/job/2"}}}}}}
	}
	tests := []struct {
		name   string
		forge  func(*Record)
		refuse bool
	}{
		{"as planex writes it", func(*Record) {}, false},
		{"approved by the setting", func(r *Record) { r.ApprovedBy = "auto-approve" }, false},
		{"approved by an App", func(r *Record) { r.ApprovedBy = "planex-app[bot]" }, false},
		{"no CI fix", func(r *Record) { r.CIFix = nil }, false},
		{"session id with the output delimiter", func(r *Record) { r.SessionID = "7-x\n_GitHubActionsFileCommandDelimeter_\nstatus<<X" }, true},
		{"session id with a backtick", func(r *Record) { r.SessionID = "7-x`@org/team`" }, true},
		{"empty session id", func(r *Record) { r.SessionID = "" }, true},
		{"approver with a mention", func(r *Record) { r.ApprovedBy = "x (@org/team)" }, true},
		{"CI run address with Markdown", func(r *Record) { r.CIFix.Runs[0].URL = "https://x.example/ @org/team" }, true},
		{"CI job address with Markdown", func(r *Record) { r.CIFix.Runs[0].Jobs[0].URL = "https://x.example/)![i](https://t.example/p.png" }, true},
		{"plan id not hex", func(r *Record) { r.PlanID = "`@org/team`" }, true},
		{"a SHA-1 base and wave base", func(r *Record) {
			r.Base = strings.Repeat("a", 40)
			r.Matrix = &MatrixWave{Base: strings.Repeat("b", 40)}
		}, false},
		{"a SHA-256 base in a SHA-1 repository", func(r *Record) { r.Base = strings.Repeat("c", 64) }, true},
		{"a base that is an option", func(r *Record) { r.Base = "--output=/tmp/x" }, true},
		{"a short base", func(r *Record) { r.Base = "abc1234" }, true},
		{"a base that is a ref", func(r *Record) { r.Base = "refs/heads/main" }, true},
		{"a wave base that is an option", func(r *Record) { r.Matrix = &MatrixWave{Base: "--upload-pack=x"} }, true},
	}
	for _, tc := range tests {
		rec := ok()
		tc.forge(rec)
		if err := recordForms(rec, gitrepo.SHA1.IsID); (err != nil) != tc.refuse {
			t.Errorf("%s: err = %v, want refused %v", tc.name, err, tc.refuse)
		}
	}
}
