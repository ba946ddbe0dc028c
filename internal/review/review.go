// Package review is planex's first review of a change: the result types an
// agent's review is decoded into, review.json in the session folder, the
// mapping of findings to inline comments on the lines a diff adds, and the
// summary body planex posts as a pull request review (with a hidden marker
// so a later run finds and replaces its own summary).
package review

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/safefile"
)

// Severity of a finding.
type Severity string

const (
	High   Severity = "high"
	Medium Severity = "medium"
	Low    Severity = "low"
)

// rank orders severities, worst first.
func (s Severity) rank() int {
	switch s {
	case High:
		return 0
	case Medium:
		return 1
	}
	return 2
}

// Verdicts of a task and of a whole review.
const (
	VerdictPass     = "pass"
	VerdictConcerns = "concerns"
	VerdictFail     = "fail"
)

// Kinds of review.
const (
	KindRun         = "run"          // a planex run, task by task
	KindPullRequest = "pull_request" // any pull request, from its diff
)

// Statuses of a review.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Criterion is one acceptance criterion or test and whether it is met.
type Criterion struct {
	Criterion string `json:"criterion"`
	Met       bool   `json:"met"`
	Evidence  string `json:"evidence,omitempty"` // file:line
	Note      string `json:"note,omitempty"`
}

// Finding is one problem the reviewer found.
type Finding struct {
	// ID names the finding within its review ("T1-F2", "PR-F1").
	ID string `json:"id"`
	// Key is stable across re-runs for the same problem at the same place
	// (see FindingKey); markers in comments carry it.
	Key         string   `json:"key"`
	Task        string   `json:"task,omitempty"`
	Severity    Severity `json:"severity"`
	File        string   `json:"file"`
	Line        int      `json:"line"`
	Explanation string   `json:"explanation"`
	Suggestion  string   `json:"suggestion,omitempty"`
}

// Where is "file:line" (or just the file when the line is unknown).
func (f Finding) Where() string {
	if f.Line > 0 {
		return f.File + ":" + strconv.Itoa(f.Line)
	}
	return f.File
}

// TaskReview is the review of one task (or, for a pull request review, of
// the whole pull request, with Task "PR").
type TaskReview struct {
	Task     string      `json:"task"`
	Title    string      `json:"title"`
	Commit   string      `json:"commit,omitempty"`
	Verdict  string      `json:"verdict,omitempty"`
	Summary  string      `json:"summary,omitempty"`
	Criteria []Criterion `json:"criteria,omitempty"`
	Findings []Finding   `json:"findings,omitempty"`
	// Error is why this task could not be reviewed.
	Error string      `json:"error,omitempty"`
	Usage agent.Usage `json:"usage"`
}

// Result is review.json.
type Result struct {
	Version int    `json:"version"`
	Kind    string `json:"kind"`
	Status  string `json:"status"`
	Session string `json:"session,omitempty"`
	// PR and Title describe a pull request review.
	PR    int    `json:"pr,omitempty"`
	Title string `json:"title,omitempty"`
	// Head is the commit the review looked at.
	Head     string       `json:"head,omitempty"`
	Verdict  string       `json:"verdict,omitempty"`
	Tasks    []TaskReview `json:"tasks"`
	Error    string       `json:"error,omitempty"`
	Started  time.Time    `json:"started"`
	Finished time.Time    `json:"finished,omitempty"`
}

// AgentResult is the review phase's JSON result (schemas/review.json).
type AgentResult struct {
	ID       string      `json:"id"`
	Verdict  string      `json:"verdict"`
	Summary  string      `json:"summary"`
	Criteria []Criterion `json:"criteria"`
	Findings []struct {
		Severity    Severity `json:"severity"`
		File        string   `json:"file"`
		Line        int      `json:"line"`
		Explanation string   `json:"explanation"`
		Suggestion  string   `json:"suggestion"`
	} `json:"findings"`
}

// TaskReview turns an agent's answer into a task's review, numbering and
// keying its findings.
func (a AgentResult) TaskReview(task, title, commit string) TaskReview {
	tr := TaskReview{Task: task, Title: title, Commit: commit, Verdict: a.Verdict, Summary: strings.TrimSpace(a.Summary), Criteria: a.Criteria}
	for i, f := range a.Findings {
		file := strings.TrimPrefix(strings.TrimSpace(f.File), "./")
		tr.Findings = append(tr.Findings, Finding{
			ID: fmt.Sprintf("%s-F%d", task, i+1), Task: task, Severity: f.Severity, File: file, Line: f.Line,
			Explanation: strings.TrimSpace(f.Explanation), Suggestion: strings.TrimSpace(f.Suggestion),
			Key: FindingKey(file, f.Line, f.Explanation),
		})
	}
	return tr
}

// FindingKey is a short fingerprint of a finding's place and text.
func FindingKey(file string, line int, explanation string) string {
	h := sha256.Sum256([]byte(file + "\x00" + strconv.Itoa(line) + "\x00" + strings.Join(strings.Fields(explanation), " ")))
	return hex.EncodeToString(h[:5])
}

// Findings returns every finding, worst first (stable within a severity).
func (r *Result) Findings() []Finding {
	var out []Finding
	for _, t := range r.Tasks {
		out = append(out, t.Findings...)
	}
	sortFindings(out)
	return out
}

func sortFindings(fs []Finding) {
	// insertion sort: small lists, and it is stable.
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].Severity.rank() < fs[j-1].Severity.rank(); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// Conclude sets the overall verdict from the tasks': the worst of them, and
// "concerns" when a task could not be reviewed at all.
func (r *Result) Conclude() {
	v := VerdictPass
	worse := func(x string) {
		if x == VerdictFail || (x == VerdictConcerns && v == VerdictPass) {
			v = x
		}
	}
	for _, t := range r.Tasks {
		if t.Error != "" {
			worse(VerdictConcerns)
			continue
		}
		worse(t.Verdict)
	}
	r.Verdict = v
}

// Usage sums what the review's steps cost.
func (r *Result) Usage() agent.Usage {
	var u agent.Usage
	for _, t := range r.Tasks {
		u = u.Add(t.Usage)
	}
	return u
}

// Save writes review.json atomically.
func Save(path string, r *Result) error {
	if r.Version == 0 {
		r.Version = 1
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the review: %w", err)
	}
	if err := safefile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// maxReviewFile bounds the review.json Load reads (a session folder the
// Action restored from a state ref anyone who can push may have written).
const maxReviewFile = 16 << 20

// Load reads review.json; a missing file is (nil, nil).
func Load(path string) (*Result, error) {
	b, err := safefile.ReadRegularNoFollow(path, maxReviewFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the review: %w", err)
	}
	r := &Result{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// RecordFailure marks the review in path failed with err, keeping what it
// had already found; it creates the file when there is none.
func RecordFailure(path string, err error, now time.Time) error {
	r, lerr := Load(path)
	if lerr != nil || r == nil {
		r = &Result{Kind: KindRun, Started: now}
	}
	r.Status, r.Error, r.Finished = StatusFailed, abbrev.OneLine(err.Error()), now
	return Save(path, r)
}
