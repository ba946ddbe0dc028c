// Package session owns a run's folder, .workflow/.lite-plan/{id}/: the
// CSVs (the source of truth), the discovery board, the report and a small
// session.json with what the CSVs do not hold. Every write is atomic.
package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/usage"
)

// Dir is the sessions folder, relative to the repository root.
const Dir = ".workflow/.lite-plan"

// File names inside a session folder.
const (
	MetaFile        = "session.json"
	ExploreFile     = "explore.csv"
	TasksFile       = "tasks.csv"
	ResultsFile     = "results.csv"
	DiscoveriesFile = "discoveries.ndjson"
	ContextFile     = "context.md"
	// ReviewFile holds the review of the run's changes (package review).
	ReviewFile = "review.json"
)

// Gate names a confirmation point.
type Gate string

const (
	GateAngles Gate = "angles"
	GateTasks  Gate = "tasks"
)

// Meta is session.json.
type Meta struct {
	ID          string    `json:"id"`
	Requirement string    `json:"requirement"`
	Source      string    `json:"source,omitempty"` // file the requirement came from
	Created     time.Time `json:"created"`
	Base        string    `json:"base"`        // commit the run branch starts from
	BaseBranch  string    `json:"base_branch"` // branch checked out at start, if any
	Branch      string    `json:"branch"`      // run branch
	Type        string    `json:"type,omitempty"`
	Complexity  string    `json:"complexity,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	Approach    string    `json:"approach,omitempty"`
	// Imported is set when tasks came from the user's plan.json/tasks.csv.
	Imported bool `json:"imported,omitempty"`
	// Approved records passed gates; WaitingAt the gate the run stopped at.
	Approved  map[Gate]bool `json:"approved,omitempty"`
	WaitingAt Gate          `json:"waiting_at,omitempty"`
	// PlanHash pins the tasks the user approved.
	PlanHash string `json:"plan_hash,omitempty"`
	// Approval is what was approved at the tasks gate (see Approval).
	Approval *Approval `json:"approval,omitempty"`
	// AutoApprove remembers -y, so --continue keeps the run's mode.
	AutoApprove bool `json:"auto_approve,omitempty"`
	// CommitSigning is how the run's task commits are made (the CLI's
	// --commit-signing: "git" or "api"), so --continue makes the rest the
	// same way; empty in sessions written before it was recorded.
	CommitSigning string `json:"commit_signing,omitempty"`
	Cancelled     bool   `json:"cancelled,omitempty"`
	// Usage of steps that have no CSV row of their own (analyze, plan,
	// explore rows), keyed by step: "analyze", "plan", "E1", …
	Usage map[string]usage.Usage `json:"usage,omitempty"`
	// Finished is set once the report has been written.
	Finished time.Time `json:"finished,omitempty"`
}

// Session is an open session folder.
type Session struct {
	Path string // absolute folder
	Meta Meta
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

// NewID derives a session id from the requirement and date, as the design
// does: a 40-character slug and the day.
func NewID(requirement string, now time.Time) string {
	slug := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(requirement), "-"), "-")
	if len(slug) > 40 {
		slug = strings.Trim(slug[:40], "-")
	}
	if slug == "" {
		slug = "run"
	}
	return slug + "-" + now.Format("2006-01-02")
}

// Create makes a new session folder under root, adding a numeric suffix
// when the id is taken.
func Create(root string, meta Meta) (*Session, error) {
	base := filepath.Join(root, Dir)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", base, err)
	}
	id := meta.ID
	for n := 2; ; n++ {
		err := os.Mkdir(filepath.Join(base, id), 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("creating session folder: %w", err)
		}
		id = fmt.Sprintf("%s-%d", meta.ID, n)
	}
	meta.ID = id
	if meta.Branch == "" {
		meta.Branch = "planex/" + id
	}
	s := &Session{Path: filepath.Join(base, id), Meta: meta}
	if err := s.SaveMeta(); err != nil {
		return nil, err
	}
	return s, nil
}

// Open loads a session by id, or the newest one when id is empty.
func Open(root, id string) (*Session, error) {
	base := filepath.Join(root, Dir)
	if id == "" {
		ids, err := List(root)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("no planex session in %s; start one with: planex \"<requirement>\"", base)
		}
		id = ids[len(ids)-1]
	}
	if strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, fmt.Errorf("session id %q is not a folder name", id)
	}
	s := &Session{Path: filepath.Join(base, id)}
	b, err := os.ReadFile(s.File(MetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no session %q in %s", id, base)
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &s.Meta); err != nil {
		return nil, fmt.Errorf("%s: %w", s.File(MetaFile), err)
	}
	return s, nil
}

// List returns session ids, oldest first.
func List(root string) ([]string, error) {
	base := filepath.Join(root, Dir)
	ents, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	type item struct {
		id string
		t  time.Time
	}
	var items []item
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(base, e.Name(), MetaFile))
		if err != nil {
			continue
		}
		var m Meta
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		items = append(items, item{e.Name(), m.Created})
	}
	sort.SliceStable(items, func(i, j int) bool {
		if !items[i].t.Equal(items[j].t) {
			return items[i].t.Before(items[j].t)
		}
		return items[i].id < items[j].id
	})
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.id
	}
	return ids, nil
}

// File returns the path of a file in the session folder.
func (s *Session) File(name string) string { return filepath.Join(s.Path, name) }

// Exists reports whether a session file exists.
func (s *Session) Exists(name string) bool {
	_, err := os.Stat(s.File(name))
	return err == nil
}

// SaveMeta writes session.json atomically.
func (s *Session) SaveMeta() error {
	b, err := json.MarshalIndent(s.Meta, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding session: %w", err)
	}
	return safefile.Write(s.File(MetaFile), append(b, '\n'), 0o644)
}

// AddUsage records a step's usage under key.
func (s *Session) AddUsage(key string, u usage.Usage) {
	if s.Meta.Usage == nil {
		s.Meta.Usage = map[string]usage.Usage{}
	}
	s.Meta.Usage[key] = s.Meta.Usage[key].Add(u)
}

// ReadExplore reads explore.csv.
func (s *Session) ReadExplore() ([]plan.ExploreRow, error) {
	b, err := os.ReadFile(s.File(ExploreFile))
	if err != nil {
		return nil, fmt.Errorf("reading explore.csv: %w", err)
	}
	return plan.ReadExplore(s.File(ExploreFile), b)
}

// WriteExplore writes explore.csv atomically.
func (s *Session) WriteExplore(rows []plan.ExploreRow) error {
	return safefile.Write(s.File(ExploreFile), plan.WriteExplore(rows), 0o644)
}

// ReadTasks reads tasks.csv.
func (s *Session) ReadTasks() ([]plan.Task, error) {
	b, err := os.ReadFile(s.File(TasksFile))
	if err != nil {
		return nil, fmt.Errorf("reading tasks.csv: %w", err)
	}
	return plan.ReadTasks(s.File(TasksFile), b)
}

// WriteTasks writes tasks.csv atomically.
func (s *Session) WriteTasks(tasks []plan.Task) error {
	return safefile.Write(s.File(TasksFile), plan.WriteTasks(tasks), 0o644)
}
