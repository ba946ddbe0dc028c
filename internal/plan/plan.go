// Package plan is the lite-plan data model: exploration rows, task rows,
// their CSV files, validation, dependency waves and the context a task is
// given from the rows it names. It does no I/O beyond reading and writing
// the CSV bytes it is handed.
package plan

import (
	"strings"
)

// Status of an exploration or task row.
type Status string

const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusSkipped   Status = "skipped"
)

// Done reports whether a row has reached a final state.
func (s Status) Done() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusSkipped
}

// ExploreRow is one line of explore.csv.
type ExploreRow struct {
	ID          string
	Angle       string
	Description string
	Focus       string
	Deps        []string
	Wave        int
	Status      Status
	Findings    string
	KeyFiles    []string
	Error       string

	// Line is the CSV line the row was read from (0 when built in memory).
	Line int
}

// Task is one line of tasks.csv: the design's columns, then planex's
// accounting columns.
type Task struct {
	ID                  string
	Title               string
	Description         string
	Test                string
	AcceptanceCriteria  string
	Scope               string
	Hints               Hints
	ExecutionDirectives string
	Deps                []string
	ContextFrom         []string
	Wave                int
	Status              Status
	Findings            string
	FilesModified       []string
	TestsPassed         TestResult
	AcceptanceMet       string
	Error               string

	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	Commit       string
	// CacheReadTokens and CacheWriteTokens are parts of InputTokens (see
	// usage.Usage).
	CacheReadTokens  int64
	CacheWriteTokens int64
	// NetworkRefused lists the destinations planex's egress proxy refused
	// the task's processes ("host:port (N times), …"; see egress).
	NetworkRefused string

	Line int
}

// Hints are what the plan tells a task's agent besides its description:
// tips in prose and reference files to read first. In tasks.csv, the
// approval record and the agent's plan result they are one cell,
// "tips || file1;file2" (either part optional); ParseHints and String
// convert, and nothing else looks inside that text.
type Hints struct {
	Tips  string
	Files []string
}

// ParseHints reads a hints cell: the tips before the first "||", the
// ';'-separated files after it.
func ParseHints(s string) Hints {
	tips, files, _ := strings.Cut(s, "||")
	return Hints{Tips: strings.TrimSpace(tips), Files: SplitList(files)}
}

// String is the hints cell: "tips || file1;file2", "tips" alone, or
// "|| file1;file2" when there are files and no tips.
func (h Hints) String() string {
	files := strings.Join(h.Files, ";")
	switch {
	case files == "":
		return h.Tips
	case h.Tips == "":
		return "|| " + files
	}
	return h.Tips + " || " + files
}

// Empty reports whether there are no hints.
func (h Hints) Empty() bool { return h.Tips == "" && len(h.Files) == 0 }

// SplitList splits a ';'-separated cell, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// JoinList is the inverse of SplitList.
func JoinList(items []string) string { return strings.Join(items, ";") }

// Index maps ids to positions.
func Index(tasks []Task) map[string]int {
	m := make(map[string]int, len(tasks))
	for i, t := range tasks {
		m[t.ID] = i
	}
	return m
}
