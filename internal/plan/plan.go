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
	Hints               string
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

// HintFiles returns the reference files of the hints column
// ("tips || file1;file2").
func (t Task) HintFiles() []string {
	_, files, ok := strings.Cut(t.Hints, "||")
	if !ok {
		return nil
	}
	return SplitList(files)
}

// HintTips returns the tips part of the hints column.
func (t Task) HintTips() string {
	tips, _, _ := strings.Cut(t.Hints, "||")
	return strings.TrimSpace(tips)
}

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
