// Package tools is the tool set the built-in agent offers a model. Every
// tool works inside one step's directory: paths that leave it, symlinks
// that resolve outside it and anything under .git/ are refused with an
// error text the model can read and act on. Read-only phases get no
// write tools and no shell; an execute step may write only inside its
// task's scope.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// Tool names.
const (
	ListFiles      = "list_files"
	ReadFile       = "read_file"
	Search         = "search"
	WriteFile      = "write_file"
	EditFile       = "edit_file"
	RunCommand     = "run_command"
	AppendDiscover = "append_discovery"
	ReportResult   = "report_result"
)

// Defaults for Config fields left at zero.
const (
	DefaultMaxReadBytes     = 64 << 10
	DefaultMaxReadLines     = 2000
	DefaultMaxWriteBytes    = 2 << 20
	DefaultMaxOutputBytes   = 16 << 10
	DefaultMaxSearchResults = 100
	DefaultMaxListEntries   = 1000
	DefaultMaxWalkEntries   = 200_000
	DefaultCommandTimeout   = 2 * time.Minute
)

// Config describes the step the tools serve.
type Config struct {
	Phase agent.Phase
	// Worker names the row in discoveries (Step.ID, or the phase when empty).
	Worker string
	// Dir is the directory every path is relative to.
	Dir string
	// DiscoveriesFile is the step's own discoveries file (Step.DiscoveriesFile);
	// empty disables append_discovery.
	DiscoveriesFile string
	// Scope bounds writes in the execute phase (see package scope).
	Scope string
	// Env is the base environment for run_command; nil means os.Environ().
	// Contain removes secrets from it and, with a sandbox, holds the
	// command to the step's directory.
	Env     []string
	Contain agent.Containment

	MaxReadBytes     int
	MaxReadLines     int
	MaxWriteBytes    int
	MaxOutputBytes   int
	MaxSearchResults int
	MaxListEntries   int
	// MaxWalkEntries bounds the folder entries one list_files or
	// search_files reads, whatever an agent made in the worktree.
	MaxWalkEntries int
	CommandTimeout time.Duration

	// Now stamps discoveries; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Def describes one tool to a model provider.
type Def struct {
	Name        string
	Description string
	// InputSchema is a JSON Schema object for the tool's arguments.
	InputSchema json.RawMessage
}

// Output is what a tool call gives back to the model.
type Output struct {
	Text    string
	IsError bool
}

// ErrResultRejected ends a step whose model sent an invalid result twice.
var ErrResultRejected = errors.New("the model reported an invalid result twice")

// Set is the tool set of one step. It is not safe for concurrent calls;
// the agent loop calls tools one at a time.
type Set struct {
	cfg     Config
	dir     string // Dir with symlinks resolved
	root    *os.Root
	schema  json.RawMessage // the phase's result schema, for report_result
	result  json.RawMessage
	invalid int
	defs    []Def
	// listed is the checkout's listing of hidden entries, for a
	// read-only step (hidden).
	listed []string
}

// New opens the step directory and prepares the tools for cfg.Phase.
func New(cfg Config) (*Set, error) { return NewContext(context.Background(), cfg) }

// NewContext is New, listing a read-only step's hidden files under ctx.
func NewContext(ctx context.Context, cfg Config) (*Set, error) {
	if cfg.Dir == "" {
		return nil, errors.New("tool set needs a working directory")
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolving working directory: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolving working directory: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("opening working directory: %w", err)
	}
	schema, err := agent.Schema(cfg.Phase)
	if err != nil {
		root.Close()
		return nil, err
	}
	setDefaults(&cfg)
	s := &Set{cfg: cfg, dir: real, root: root}
	if cfg.Phase.ReadOnly() {
		s.listed = listedHidden(ctx, cfg.Contain.Ignored, real)
	}
	s.schema, err = resultInputSchema(schema)
	if err != nil {
		root.Close()
		return nil, err
	}
	if s.defs, err = s.buildDefs(); err != nil {
		root.Close()
		return nil, err
	}
	return s, nil
}

func setDefaults(c *Config) {
	positiveOr(&c.MaxReadBytes, DefaultMaxReadBytes)
	positiveOr(&c.MaxReadLines, DefaultMaxReadLines)
	positiveOr(&c.MaxWriteBytes, DefaultMaxWriteBytes)
	positiveOr(&c.MaxOutputBytes, DefaultMaxOutputBytes)
	positiveOr(&c.MaxSearchResults, DefaultMaxSearchResults)
	positiveOr(&c.MaxListEntries, DefaultMaxListEntries)
	positiveOr(&c.MaxWalkEntries, DefaultMaxWalkEntries)
	positiveOr(&c.CommandTimeout, DefaultCommandTimeout)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Worker == "" {
		c.Worker = string(c.Phase)
	}
}

// positiveOr sets a cap that is not positive (unset) to its default.
func positiveOr[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Close releases the directory handle.
func (s *Set) Close() error { return s.root.Close() }

// Defs lists the tools offered in this step's phase.
func (s *Set) Defs() []Def { return s.defs }

// Result returns the validated result once report_result accepted one.
func (s *Set) Result() (json.RawMessage, bool) { return s.result, s.result != nil }

// Call runs one tool. Problems the model can fix come back as an Output
// with IsError set; the error return is reserved for faults that end the
// step (ErrResultRejected, or ctx ending).
func (s *Set) Call(ctx context.Context, name string, input json.RawMessage) (Output, error) {
	if err := ctx.Err(); err != nil {
		return Output{}, err
	}
	if !s.offered(name) {
		return fail("tool %q is not available in the %s phase", name, s.cfg.Phase), nil
	}
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	var out Output
	var err error
	switch name {
	case ListFiles:
		out = s.listFiles(input)
	case ReadFile:
		out = s.readFile(input)
	case Search:
		out = s.search(ctx, input)
	case WriteFile:
		out = s.writeFile(input)
	case EditFile:
		out = s.editFile(input)
	case RunCommand:
		out, err = s.runCommand(ctx, input)
	case AppendDiscover:
		out = s.appendDiscovery(input)
	case ReportResult:
		out, err = s.reportResult(input)
	}
	s.cfg.Logger.Debug("tool call", "tool", name, "error", out.IsError)
	return out, err
}

func (s *Set) offered(name string) bool {
	for _, d := range s.defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

func fail(format string, args ...any) Output {
	return Output{Text: "error: " + fmt.Sprintf(format, args...), IsError: true}
}

func ok(format string, args ...any) Output {
	return Output{Text: fmt.Sprintf(format, args...)}
}

// decode unmarshals tool arguments, rejecting unknown fields so that a
// misspelt argument is reported rather than ignored.
func decode(input json.RawMessage, v any) error {
	if err := json.Unmarshal(input, v); err != nil {
		return fmt.Errorf("arguments are not valid JSON for this tool: %v", err)
	}
	return nil
}
