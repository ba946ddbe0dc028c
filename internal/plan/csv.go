package plan

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/planexhq/planex/internal/usage"
	"io"
	"strconv"
	"strings"
)

// ExploreColumns is the header of explore.csv, in order.
var ExploreColumns = []string{"id", "angle", "description", "focus", "deps", "wave", "status", "findings", "key_files", "error"}

// TaskColumns is the design's header of tasks.csv, in order.
var TaskColumns = []string{"id", "title", "description", "test", "acceptance_criteria", "scope", "hints", "execution_directives", "deps", "context_from", "wave", "status", "findings", "files_modified", "tests_passed", "acceptance_met", "error"}

// TaskExtraColumns follow the design's columns; files without them are
// accepted. The cache columns are the parts of input_tokens read from
// and written to the provider's prompt cache.
var TaskExtraColumns = []string{"input_tokens", "output_tokens", "cost_usd", "commit", "cache_read_tokens", "cache_write_tokens", "network_refused"}

// FileError locates a problem in a CSV file.
type FileError struct {
	File  string
	Line  int
	Row   string // row id, when known
	Field string
	Msg   string
}

// Location is the file and line of the problem (line 0: not known).
func (e *FileError) Location() (string, int) { return e.File, e.Line }

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Row != "" {
		fmt.Fprintf(&b, " (%s)", e.Row)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ", field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// readTable parses a CSV whose header must start with cols (extra may
// follow). It returns each record as a column→value map and its line.
// MaxRows bounds the rows of a tasks.csv or explore.csv. Such a file may
// come from a clone (a plan the user imports) or a state ref whoever can
// push wrote, and each row costs a map and a task beside its text: a
// 16 MiB file of 900,000 empty rows held 1.6 GiB (a state's 64 MiB, four
// times that). A plan of more tasks than this is no plan anyone approves.
const MaxRows = 5000

func readTable(file string, data []byte, cols, extra []string) ([]map[string]string, []int, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // spreadsheets add a BOM
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err == io.EOF {
		return nil, nil, &FileError{File: file, Msg: "file is empty; expected a header line"}
	}
	if err != nil {
		return nil, nil, csvErr(file, err)
	}
	for i, c := range cols {
		if i >= len(header) {
			return nil, nil, &FileError{File: file, Line: 1, Msg: fmt.Sprintf("header has %d columns; column %d must be %q (expected %s)", len(header), i+1, c, strings.Join(cols, ","))}
		}
		if h := strings.TrimSpace(header[i]); h != c {
			return nil, nil, &FileError{File: file, Line: 1, Msg: fmt.Sprintf("column %d is %q, expected %q (expected %s)", i+1, h, c, strings.Join(cols, ","))}
		}
	}
	known := map[string]bool{}
	for _, c := range extra {
		known[c] = true
	}
	for _, h := range header[len(cols):] {
		if !known[strings.TrimSpace(h)] {
			return nil, nil, &FileError{File: file, Line: 1, Msg: fmt.Sprintf("unknown column %q", h)}
		}
	}
	var rows []map[string]string
	var lines []int
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, csvErr(file, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != len(header) {
			return nil, nil, &FileError{File: file, Line: line, Msg: fmt.Sprintf("row has %d fields, header has %d", len(rec), len(header))}
		}
		if len(rows) == MaxRows {
			return nil, nil, &FileError{File: file, Line: line, Msg: fmt.Sprintf("more than %d rows: no plan has that many tasks or angles", MaxRows)}
		}
		m := make(map[string]string, len(header))
		for i, h := range header {
			m[strings.TrimSpace(h)] = rec[i]
		}
		rows = append(rows, m)
		lines = append(lines, line)
	}
	return rows, lines, nil
}

func csvErr(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{File: file, Line: pe.Line, Msg: fmt.Sprintf("malformed CSV: %v", pe.Err)}
	}
	return &FileError{File: file, Msg: err.Error()}
}

func atoi(file string, line int, id, field, s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &FileError{File: file, Line: line, Row: id, Field: field, Msg: fmt.Sprintf("%q is not a whole number", s)}
	}
	return n, nil
}

// ReadExplore parses explore.csv.
func ReadExplore(file string, data []byte) ([]ExploreRow, error) {
	recs, lines, err := readTable(file, data, ExploreColumns, nil)
	if err != nil {
		return nil, err
	}
	rows := make([]ExploreRow, 0, len(recs))
	for i, m := range recs {
		id := strings.TrimSpace(m["id"])
		w, err := atoi(file, lines[i], id, "wave", m["wave"])
		if err != nil {
			return nil, err
		}
		rows = append(rows, ExploreRow{
			ID: id, Angle: m["angle"], Description: m["description"], Focus: m["focus"],
			Deps: SplitList(m["deps"]), Wave: int(w), Status: parseStatus(m["status"]),
			Findings: m["findings"], KeyFiles: SplitList(m["key_files"]), Error: m["error"],
			Line: lines[i],
		})
	}
	return rows, nil
}

// ReadTasks parses tasks.csv.
func ReadTasks(file string, data []byte) ([]Task, error) {
	recs, lines, err := readTable(file, data, TaskColumns, TaskExtraColumns)
	if err != nil {
		return nil, err
	}
	tasks := make([]Task, 0, len(recs))
	for i, m := range recs {
		id := strings.TrimSpace(m["id"])
		line := lines[i]
		w, err := atoi(file, line, id, "wave", m["wave"])
		if err != nil {
			return nil, err
		}
		// input, output, cache read and cache write tokens
		var n [4]int64
		for j, col := range []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"} {
			if n[j], err = atoi(file, line, id, col, m[col]); err != nil {
				return nil, err
			}
		}
		var cost float64
		if s := strings.TrimSpace(m["cost_usd"]); s != "" {
			if cost, err = strconv.ParseFloat(s, 64); err != nil {
				return nil, &FileError{File: file, Line: line, Row: id, Field: "cost_usd", Msg: fmt.Sprintf("%q is not a number", s)}
			}
		}
		// The accounting columns feed the budget: a negative or NaN cost
		// (ParseFloat takes "NaN" and "-Inf") made every check pass.
		spent := usage.Usage{InputTokens: n[0], OutputTokens: n[1], CostUSD: cost, CacheReadTokens: n[2], CacheWriteTokens: n[3]}
		if err := spent.Check(); err != nil {
			return nil, &FileError{File: file, Line: line, Row: id, Field: "usage", Msg: err.Error()}
		}
		tp, err := ParseTestResult(m["tests_passed"])
		if err != nil {
			return nil, &FileError{File: file, Line: line, Row: id, Field: "tests_passed", Msg: err.Error()}
		}
		tasks = append(tasks, Task{
			ID: id, Title: m["title"], Description: m["description"], Test: m["test"],
			AcceptanceCriteria: m["acceptance_criteria"], Scope: strings.TrimSpace(m["scope"]), Hints: ParseHints(m["hints"]),
			ExecutionDirectives: m["execution_directives"], Deps: SplitList(m["deps"]),
			ContextFrom: SplitList(m["context_from"]), Wave: int(w), Status: parseStatus(m["status"]),
			Findings: m["findings"], FilesModified: SplitList(m["files_modified"]), TestsPassed: tp,
			AcceptanceMet: m["acceptance_met"], Error: m["error"],
			InputTokens: n[0], OutputTokens: n[1], CostUSD: cost, Commit: strings.TrimSpace(m["commit"]),
			CacheReadTokens: n[2], CacheWriteTokens: n[3], NetworkRefused: m["network_refused"],
			Line: line,
		})
	}
	return tasks, nil
}

func parseStatus(s string) Status {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return StatusPending
	}
	return Status(s)
}

// WriteExplore renders explore.csv.
func WriteExplore(rows []ExploreRow) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(ExploreColumns)
	for _, r := range rows {
		w.Write([]string{r.ID, r.Angle, r.Description, r.Focus, JoinList(r.Deps), itoa(int64(r.Wave)), string(r.Status), r.Findings, JoinList(r.KeyFiles), r.Error})
	}
	w.Flush()
	return b.Bytes()
}

// WriteTasks renders tasks.csv with the accounting columns.
func WriteTasks(tasks []Task) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(append(append([]string{}, TaskColumns...), TaskExtraColumns...))
	for _, t := range tasks {
		w.Write(append(taskCells(t), itoa(t.InputTokens), itoa(t.OutputTokens), costString(t.CostUSD), t.Commit,
			itoa(t.CacheReadTokens), itoa(t.CacheWriteTokens), t.NetworkRefused))
	}
	w.Flush()
	return b.Bytes()
}

// WriteResults renders results.csv: the final task rows, design columns
// plus accounting.
func WriteResults(tasks []Task) []byte { return WriteTasks(tasks) }

func taskCells(t Task) []string {
	return []string{t.ID, t.Title, t.Description, t.Test, t.AcceptanceCriteria, t.Scope, t.Hints.String(), t.ExecutionDirectives,
		JoinList(t.Deps), JoinList(t.ContextFrom), itoa(int64(t.Wave)), string(t.Status), t.Findings,
		JoinList(t.FilesModified), string(t.TestsPassed), t.AcceptanceMet, t.Error}
}

func itoa(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func costString(c float64) string {
	if c == 0 {
		return ""
	}
	return strconv.FormatFloat(c, 'f', 6, 64)
}
