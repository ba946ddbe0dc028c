// Package session owns a run's folder, <git common dir>/planex/sessions/{id}/:
// the CSVs (the source of truth), the discovery board, the report and a
// small session.json with what the CSVs do not hold, sealed with a key
// that never leaves the machine (see Store). Every write is atomic.
package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/usage"
)

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
	// Seal is the HMAC of the rest under the repository's session key
	// (Store): a session.json planex did not write here seals nothing.
	Seal string `json:"seal,omitempty"`
}

// Session is an open session folder.
type Session struct {
	Path string // absolute folder
	Meta Meta
	key  []byte
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

// Create makes a new session folder in st, adding a numeric suffix when
// the id is taken.
func Create(st Store, meta Meta) (*Session, error) {
	key, err := st.key(true)
	if err != nil {
		return nil, err
	}
	if err := st.ensure(); err != nil {
		return nil, err
	}
	id := meta.ID
	if !validID(id) {
		return nil, fmt.Errorf("session id %q is not a folder name", id)
	}
	for n := 2; ; n++ {
		err := os.Mkdir(filepath.Join(st.Dir, id), 0o700)
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
	s := &Session{Path: filepath.Join(st.Dir, id), Meta: meta, key: key}
	if err := s.SaveMeta(); err != nil {
		return nil, err
	}
	return s, nil
}

func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// Open loads a session of st by id, or the newest one when id is empty.
// It refuses (ErrUntrusted) a session reached through a symlink, one whose
// session.json this machine did not seal, and one found only in the work
// tree's old .workflow/.lite-plan folder.
func Open(st Store, id string) (*Session, error) {
	if id == "" {
		ids, err := List(st)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			if st.legacyCount() > 0 {
				return nil, st.legacyError("")
			}
			return nil, fmt.Errorf("no planex session in %s; start one with: planex \"<requirement>\"", st.Dir)
		}
		id = ids[len(ids)-1]
	}
	if !validID(id) {
		return nil, fmt.Errorf("session id %q is not a folder name", id)
	}
	s := &Session{Path: filepath.Join(st.Dir, id)}
	if _, err := os.Lstat(s.Path); errors.Is(err, os.ErrNotExist) {
		if _, lerr := os.Lstat(filepath.Join(st.Legacy, id)); lerr == nil {
			return nil, st.legacyError(id)
		}
		return nil, fmt.Errorf("no session %q in %s", id, st.Dir)
	}
	for _, d := range []string{st.private, st.Dir, s.Path} {
		if err := ownDir(d); err != nil {
			return nil, err
		}
	}
	key, err := st.key(false)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &UntrustedError{Path: s.Path, Reason: "this repository has no session key (" + st.keyPath + "), so planex made no session here"}
		}
		return nil, err
	}
	s.key = key
	b, err := readMeta(s.File(MetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no session %q in %s", id, st.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &s.Meta); err != nil {
		return nil, fmt.Errorf("%s: %w", s.File(MetaFile), err)
	}
	if err := checkUsage(s.File(MetaFile), s.Meta.Usage); err != nil {
		return nil, err
	}
	if err := s.verify(); err != nil {
		return nil, err
	}
	return s, nil
}

// Adopt seals the session.json of folder id in st with this machine's
// key, whoever wrote it. Only the Action calls it, for the session it
// restores from its own state ref, whose approval it checks against
// GitHub before anything runs (docs/security.md).
func Adopt(st Store, id string) error {
	key, err := st.key(true)
	if err != nil {
		return err
	}
	if !validID(id) {
		return fmt.Errorf("session id %q is not a folder name", id)
	}
	s := &Session{Path: filepath.Join(st.Dir, id), key: key}
	for _, d := range []string{st.private, st.Dir, s.Path} {
		if err := ownDir(d); err != nil {
			return err
		}
	}
	b, err := readMeta(s.File(MetaFile))
	if err != nil {
		return fmt.Errorf("reading session %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &s.Meta); err != nil {
		return fmt.Errorf("%s: %w", s.File(MetaFile), err)
	}
	if err := checkUsage(s.File(MetaFile), s.Meta.Usage); err != nil {
		return err
	}
	return s.SaveMeta()
}

// checkUsage refuses a session.json whose usage records could not have
// been planex's (usage.Usage.Check): the budget sums them, and a
// negative cost let every later step through whatever --max-cost-usd
// said. A state ref's session.json is written by whoever can push.
func checkUsage(file string, recs map[string]usage.Usage) error {
	keys := make([]string, 0, len(recs))
	for k := range recs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := recs[k].Check(); err != nil {
			return fmt.Errorf("%s: the usage of step %q: %w", file, k, err)
		}
	}
	return nil
}

// MaxStateFile bounds the other files of a session planex reads whole
// (the CSVs, the discovery board): far above what a plan of any size
// writes, and far below what would exhaust memory. The Action restores a
// session folder from a state ref whoever can push may have written.
const MaxStateFile = 64 << 20

// readStateFile reads a file of a session folder when it is a regular
// file, not a link, of at most MaxStateFile bytes; a missing file's error
// is fs.ErrNotExist's.
func readStateFile(path string) ([]byte, error) {
	f, err := safefile.OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxStateFile+1))
	if err == nil && len(b) > MaxStateFile {
		err = fmt.Errorf("%s is larger than %d bytes: %w", path, MaxStateFile, safefile.ErrTooLarge)
	}
	return b, err
}

// maxMeta bounds the session.json planex reads.
const maxMeta = 8 << 20

// readMeta reads a session.json that is a regular file, not a link.
func readMeta(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|safefile.NoFollow|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &UntrustedError{Path: path, Reason: "it is a symlink"}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &UntrustedError{Path: path, Reason: "it is not a regular file"}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMeta+1))
	if err == nil && len(b) > maxMeta {
		err = fmt.Errorf("%s is larger than %d bytes", path, maxMeta)
	}
	return b, err
}

// List returns the ids of st's sessions, oldest first.
func List(st Store) ([]string, error) {
	ents, err := os.ReadDir(st.Dir)
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
		b, err := readMeta(filepath.Join(st.Dir, e.Name(), MetaFile))
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
	if s.key == nil {
		return fmt.Errorf("session %s: session.json is written only through Create or Open", s.Meta.ID)
	}
	sl, err := seal(s.key, filepath.Base(s.Path), s.Meta)
	if err != nil {
		return err
	}
	// The record is encoded with its new seal, but memory keeps the old
	// one unless the file is written: a refused or failed save leaves
	// both the file and the record as they were.
	m := s.Meta
	m.Seal = sl
	if err := s.writeMeta(m); err != nil {
		return err
	}
	s.Meta.Seal = sl
	return nil
}

// writeMeta writes m as session.json, indented when that fits the bound
// planex reads back, compact otherwise, and refuses it (ErrMetaTooLarge)
// when neither does.
func (s *Session) writeMeta(m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil && len(b) >= maxMeta {
		// Indenting grows a record with many usage entries by a third:
		// a state ref's compact session.json just under the bound was
		// written back past it, and planex could not read its own state.
		b, err = json.Marshal(m)
	}
	if err != nil {
		return fmt.Errorf("encoding session: %w", err)
	}
	if len(b) >= maxMeta {
		return fmt.Errorf("saving %s: %d bytes, more than the %d planex reads back; the file is left as it was: %w",
			s.File(MetaFile), len(b), maxMeta, ErrMetaTooLarge)
	}
	return safefile.Write(s.File(MetaFile), append(b, '\n'), 0o600)
}

// ErrMetaTooLarge is returned for a session.json that would be too large
// for planex to read back.
var ErrMetaTooLarge = errors.New("session record too large")

// AddUsage records a step's usage under key.
func (s *Session) AddUsage(key string, u usage.Usage) {
	if s.Meta.Usage == nil {
		s.Meta.Usage = map[string]usage.Usage{}
	}
	s.Meta.Usage[key] = s.Meta.Usage[key].Add(u)
}

// ReadExplore reads explore.csv.
func (s *Session) ReadExplore() ([]plan.ExploreRow, error) {
	b, err := readStateFile(s.File(ExploreFile))
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
	b, err := readStateFile(s.File(TasksFile))
	if err != nil {
		return nil, fmt.Errorf("reading tasks.csv: %w", err)
	}
	return plan.ReadTasks(s.File(TasksFile), b)
}

// WriteTasks writes tasks.csv atomically.
func (s *Session) WriteTasks(tasks []plan.Task) error {
	return safefile.Write(s.File(TasksFile), plan.WriteTasks(tasks), 0o644)
}
