// Package clis drives the coding-agent CLIs people already use (Claude
// Code, Codex, Gemini CLI) as planex agents. Each runs through the command
// agent (sh -c in the step directory, prompt on stdin, secrets scrubbed,
// contained by planex's sandbox); this package knows each CLI's
// non-interactive flags, the configuration it needs to reach a chosen
// endpoint, and how to read its JSON output: the final answer (which ends
// with the step's JSON result), the tokens and cost, and the refusals,
// permission denials and errors it reports.
//
// Versions, flags and output formats were checked against the CLIs
// themselves, run against scripted model servers (see Tested and the
// tests); docs/agents.md says how to move to newer versions.
package clis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/agent/command"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
)

// Names lists the supported CLIs.
func Names() []string { return []string{"claude", "codex", "gemini"} }

// Package is a CLI's npm package and the exact version planex is tested
// with.
type Package struct{ Name, Version string }

// Spec is what npm installs: name@version.
func (p Package) Spec() string { return p.Name + "@" + p.Version }

// Tested returns the npm package and tested version of a CLI.
func Tested(name string) (Package, bool) {
	switch name {
	case "claude":
		return Package{"@anthropic-ai/claude-code", "2.1.330"}, true
	case "codex":
		return Package{"@openai/codex", "0.169.0"}, true
	case "gemini":
		return Package{"@google/gemini-cli", "0.61.0"}, true
	}
	return Package{}, false
}

// Config selects a CLI and how it runs.
type Config struct {
	// Name is claude, codex or gemini.
	Name string
	// Model is passed to the CLI; empty means agent.DefaultModel(Name).
	Model string
	// BaseURL points the CLI at another endpoint (a gateway or a local
	// server speaking the CLI's wire format).
	BaseURL string
	// MaxTurns is passed to CLIs that support a turn limit (claude).
	MaxTurns int
	// Price overrides the price table for the cost of a step; without it
	// Claude Code's own cost is used, and the others' tokens are priced
	// by model from the built-in table.
	Price *builtin.Price
	// Contain holds the CLI's processes; the credential variables the CLI
	// itself needs are let through in addition to Contain.AllowEnv.
	Contain  agent.Containment
	Timeouts map[agent.Phase]time.Duration
	// Env is the environment to start from; nil means os.Environ().
	Env []string
	// LookPath finds the binary; nil means exec.LookPath.
	LookPath func(string) (string, error)
	// MCP lists the user's MCP servers, written into the CLI's own
	// configuration for each step.
	MCP mcp.Config
	// Logger receives warnings (a model without a known price); nil
	// discards them.
	Logger *slog.Logger
}

// setup is what a CLI's configuration is made from for one step.
type setup struct {
	phase   agent.Phase
	model   string
	baseURL string
	// home is a private, empty folder in the step's own folder for the
	// configuration planex writes for the CLI.
	home string
	// keyVar is the credential variable that is set, if any.
	keyVar string
	// mcp lists the user's MCP servers.
	mcp mcp.Config
}

// report is what a CLI's JSON output says about a step.
type report struct {
	// text is the model's final answer.
	text string
	// tokens per model; reportedCost is the CLI's own cost when it
	// reports one (costKnown).
	tokens       map[string]agent.Usage
	reportedCost float64
	costKnown    bool
	// problems are denials, refusals and errors the CLI recovered from;
	// failure, when set, says why the step failed.
	problems []string
	failure  string
	// tools counts the calls of each tool the CLI reports by name
	// (Codex: mcp__SERVER__TOOL; Gemini CLI: its own names).
	tools map[string]int
}

type cli struct {
	binary string
	// credentials are the variables the CLI authenticates with; they are
	// let through the secret filter because the CLI cannot work without.
	credentials []string
	args        func(s setup, maxTurns int) []string
	// configure writes the CLI's configuration into s.home and returns
	// the variables that point the CLI at it.
	configure func(s setup) ([]string, error)
	decode    func(stdout []byte) (report, error)
	// projectConfig lists the paths, relative to the step's working
	// directory, where the CLI reads configuration of its own in a phase
	// that no flag or variable turns off. They are the repository's
	// content, so a contained step sees them empty (nil: none).
	projectConfig func(agent.Phase) []string
	// aboveConfig lists the paths the CLI looks for in every folder above
	// its working directory, up to /, whatever its flags and settings
	// (nil: none). A contained step sees them empty; without the sandbox
	// a step is refused where one belongs to another user (a
	// /tmp/.gemini/.env planted above a task's worktree).
	aboveConfig []string
}

func lookup(name string) (cli, bool) {
	switch name {
	case "claude":
		return claudeCLI(), true
	case "codex":
		return codexCLI(), true
	case "gemini":
		return geminiCLI(), true
	}
	return cli{}, false
}

// Agent runs one of the CLIs for each step.
type Agent struct {
	cfg  Config
	cli  cli
	path string
}

// New checks that the CLI is installed and returns its agent.
func New(cfg Config) (*Agent, error) {
	c, ok := lookup(cfg.Name)
	if !ok {
		return nil, fmt.Errorf("unknown agent CLI %q (known: %s)", cfg.Name, strings.Join(Names(), ", "))
	}
	if cfg.Model == "" {
		cfg.Model = agent.DefaultModel(cfg.Name)
	}
	look := cfg.LookPath
	if look == nil {
		look = exec.LookPath
	}
	path, err := look(c.binary)
	if err != nil {
		pkg, _ := Tested(cfg.Name)
		return nil, fmt.Errorf("the %s CLI was not found on PATH: install it with `npm install -g %s` (the version planex is tested with), "+
			"or pick a built-in agent (--agent anthropic or --agent openai, which need only an API key)", c.binary, pkg.Spec())
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &Agent{cfg: cfg, cli: c, path: path}, nil
}

// CommandLine is the shell command run for a phase, with the CLI's own
// configuration in home.
func (a *Agent) CommandLine(phase agent.Phase, home string) string {
	parts := []string{shellQuote(a.path)}
	for _, arg := range a.cli.args(a.setup(phase, home), a.cfg.MaxTurns) {
		parts = append(parts, shellQuote(arg))
	}
	return strings.Join(parts, " ")
}

func (a *Agent) env() []string {
	if a.cfg.Env == nil {
		return os.Environ()
	}
	return a.cfg.Env
}

func (a *Agent) setup(phase agent.Phase, home string) setup {
	s := setup{phase: phase, model: a.cfg.Model, baseURL: a.cfg.BaseURL, home: home, mcp: a.cfg.MCP}
	env := a.env()
	for _, name := range a.cli.credentials {
		if lookupEnv(env, name) != "" {
			s.keyVar = name
			break
		}
	}
	return s
}

// Run executes one step through the command agent.
func (a *Agent) Run(ctx context.Context, step agent.Step) (agent.Result, error) {
	schema, err := agent.Schema(step.Phase)
	if err != nil {
		return agent.Result{}, err
	}
	if step.TempDir == "" {
		var cleanup func()
		if step, cleanup, err = agent.PrepareStep(step); err != nil {
			return agent.Result{}, err
		}
		defer cleanup()
	}
	home, err := os.MkdirTemp(step.TempDir, "cli-")
	if err != nil {
		return agent.Result{}, fmt.Errorf("%s agent: creating its configuration folder: %w", a.cli.binary, err)
	}
	s := a.setup(step.Phase, home)
	contain := a.cfg.Contain
	var keyEnv []string
	var gw *gatewayed
	meter := &egress.Meter{}
	if contain.NetworkContained() && s.keyVar != "" {
		// The key stays with planex: the CLI gets a placeholder and the
		// gateway's address, which swaps the key in outside the sandbox.
		if gw, err = a.startGateway(ctx, s, meter, a.admit(step.ID, step.Limit, meter), a.outputCap(step.ID, step.Limit, meter), a.worth(step.Limit, meter)); err != nil {
			return agent.Result{}, fmt.Errorf("%s agent: %w", a.cli.binary, err)
		}
		defer gw.stop()
		s.baseURL, keyEnv = gw.baseURL, []string{gw.keyEnv}
		contain.Forward = append(append([]sandbox.Forward(nil), contain.Forward...), gw.forward)
	} else {
		contain.AllowEnv = append(append([]string(nil), a.cli.credentials...), contain.AllowEnv...)
	}
	extra, err := a.cli.configure(s)
	if err != nil {
		return agent.Result{}, fmt.Errorf("%s agent: writing its configuration: %w", a.cli.binary, err)
	}
	extra = append(extra, keyEnv...)
	if contain.Sandbox != nil && a.cli.projectConfig != nil {
		contain.Conceal = append(append([]string(nil), contain.Conceal...), projectPaths(step.Dir, a.cli.projectConfig(step.Phase))...)
	}
	above := abovePaths(step.Dir, a.cli.aboveConfig)
	if contain.Sandbox != nil {
		contain.Conceal = append(append([]string(nil), contain.Conceal...), lastOf(above)...)
	} else if err := ownedHere(above, os.Getuid()); err != nil {
		return agent.Result{}, fmt.Errorf("%s agent: %w", a.cli.binary, err)
	} else if err := shutAbove(step.Dir, a.cli.aboveConfig, os.Getuid(), os.Getgid()); err != nil {
		return agent.Result{}, fmt.Errorf("%s agent: %w", a.cli.binary, err)
	}
	step.Prompt = step.Prompt + resultInstructions(step.Phase, schema)
	ca := command.New(command.Config{
		Command:  a.CommandLine(step.Phase, home),
		Contain:  contain,
		Timeouts: a.cfg.Timeouts,
		Env:      a.cfg.Env,
		ExtraEnv: extra,
		// The CLI's own files (a Node program and its packages) may live
		// under a home directory the sandbox hides.
		Readable: installDirs(a.path, a.env()),
		Decode:   a.decode,
	})
	res, err := ca.Run(ctx, step)
	if gw != nil {
		// The step spent at least what its calls through the gateway
		// cost, whatever the CLI (or a program in its place) reports.
		gw.stop()
		res.Usage = res.Usage.Max(a.metered(meter.Totals()))
	}
	if err != nil {
		return res, fmt.Errorf("%s agent: %w", a.cli.binary, err)
	}
	return res, nil
}

// projectPaths are the paths of rel below dir (the sandbox resolves a
// link and skips what does not exist).
func projectPaths(dir string, rel []string) []string {
	out := make([]string, 0, len(rel))
	for _, r := range rel {
		p, err := filepath.Abs(filepath.Join(dir, r))
		if err != nil {
			continue // no working directory to be relative to: nothing read there either
		}
		out = append(out, p)
	}
	return out
}

// abovePaths are the paths of rel found in the folders above dir, each
// with the folders between (for .gemini/.env: the folder's .gemini, then
// its .env), where something exists there (a link counts).
func abovePaths(dir string, rel []string) [][]string {
	if len(rel) == 0 {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out [][]string
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		for _, r := range rel {
			var steps []string
			p := d
			for _, elem := range strings.Split(filepath.ToSlash(r), "/") {
				p = filepath.Join(p, elem)
				steps = append(steps, p)
			}
			if _, err := os.Lstat(p); err == nil {
				out = append(out, steps)
			}
		}
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// ErrForeignConfig is returned for a step without the sandbox when the
// CLI would read a file above its working directory that belongs to
// another user.
var ErrForeignConfig = errors.New("the CLI would read a file of another user's")

// ownedHere refuses a file found above the working directory when it,
// a folder on its way or what a link there leads to belongs to neither
// uid nor root: another user of the machine could write what the CLI
// reads.
func ownedHere(found [][]string, uid int) error {
	for _, steps := range found {
		last := steps[len(steps)-1]
		check := steps
		if r, err := filepath.EvalSymlinks(last); err == nil && r != last {
			check = append(append([]string(nil), steps...), r)
		}
		for _, q := range check {
			fi, err := os.Lstat(q)
			if err != nil {
				continue
			}
			if owner, ok := fileOwner(fi); ok && owner != uid && owner != 0 {
				return fmt.Errorf("%w: %s is read from %s, which belongs to uid %d; remove it, or run with the sandbox, which hides it", ErrForeignConfig, last, q, owner)
			}
		}
	}
	return nil
}

// shutAbove keeps another user from adding a file of rel above dir
// after ownedHere looked (the CLI starts later and reads the nearest
// one, so a .gemini/.env created in /tmp between the check and the
// start was read). Below the nearest folder above dir that another user
// may write, it puts an empty file of each rel, which the CLI finds
// first and which nobody else can change; where that folder holds dir
// itself, nothing can stand between them and the step is refused. uid
// and gid are the user's and its primary group.
func shutAbove(dir string, rel []string, uid, gid int) error {
	if len(rel) == 0 {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil // no working directory to be relative to: nothing read above it either
	}
	for child, d := abs, filepath.Dir(abs); ; child, d = d, filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err == nil && openToOthers(fi, uid, gid) {
			if child == abs {
				return fmt.Errorf("%w: %s, which holds the working directory %s, may be written by other users, who could put %s there while the step starts; run with the sandbox, which hides it, or work in a folder of your own", ErrForeignConfig, d, abs, rel[0])
			}
			return placeEmpty(child, rel, uid, gid)
		}
		if err == nil && foundIn(d, rel) {
			return nil // the CLI stops at this one, which ownedHere checked and only its owner can change
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// foundIn reports whether one of rel exists in folder d.
func foundIn(d string, rel []string) bool {
	for _, r := range rel {
		if _, err := os.Lstat(filepath.Join(d, r)); err == nil {
			return true
		}
	}
	return false
}

// sharedFolder reports whether a folder with permissions perm, owned by
// owner and group, lets a user other than uid and root add entries, for
// a user whose primary group is gid: it is writable by all; or another
// user's; or writable by its group, unless the folder is uid's own and
// its group uid's primary one (a umask-002 user-private group, whose
// only member is uid). Which users a group holds cannot be learnt
// portably, so any other group-writable folder counts as shared.
func sharedFolder(perm fs.FileMode, owner, group, uid, gid int) bool {
	switch {
	case perm&0o002 != 0:
		return true
	case owner != uid && owner != 0:
		return true
	case perm&0o020 != 0:
		return owner != uid || group != gid
	}
	return false
}

// placeEmpty creates each of rel below d as an empty file only its
// owner may change, each folder on the way with mode 0700. A folder or
// file already there is kept only if it is uid's own and no link, the
// folder is not shared (sharedFolder) and the file is empty and
// writable by nobody else; else another user may have put it there
// first, and the step is refused (ErrForeignConfig).
func placeEmpty(d string, rel []string, uid, gid int) error {
	for _, r := range rel {
		elems := strings.Split(filepath.ToSlash(r), "/")
		p := d
		for _, dir := range elems[:len(elems)-1] {
			p = filepath.Join(p, dir)
			err := os.Mkdir(p, 0o700)
			if errors.Is(err, fs.ErrExist) {
				err = keptFolder(p, uid, gid)
			}
			if err != nil {
				return fmt.Errorf("shutting %s against other users: %w", d, err)
			}
		}
		p = filepath.Join(p, elems[len(elems)-1])
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			err = keptFile(p, uid)
		} else if err == nil {
			err = f.Close()
		}
		if err != nil {
			return fmt.Errorf("shutting %s against other users: %w", d, err)
		}
	}
	return nil
}

// keptFolder accepts the folder p that placeEmpty found already there.
func keptFolder(p string, uid, gid int) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	owner, _ := fileOwner(fi)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a link (owned by uid %d), which another user may have planted; remove it, or run with the sandbox", ErrForeignConfig, p, owner)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a folder (owned by uid %d); remove it, or run with the sandbox", ErrForeignConfig, p, owner)
	case owner != uid || openToOthers(fi, uid, gid):
		return fmt.Errorf("%w: the folder %s, owned by uid %d with mode %v, may be written by other users; remove it, or run with the sandbox", ErrForeignConfig, p, owner, fi.Mode().Perm())
	}
	return nil
}

// keptFile accepts the file p that placeEmpty found already there.
func keptFile(p string, uid int) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	owner, _ := fileOwner(fi)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a plain file but %v (owned by uid %d), which another user may have planted; remove it, or run with the sandbox", ErrForeignConfig, p, fi.Mode().Type(), owner)
	case owner != uid || fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: %s, owned by uid %d with mode %v, may be written by other users; remove it, or run with the sandbox", ErrForeignConfig, p, owner, fi.Mode().Perm())
	case fi.Size() != 0:
		return fmt.Errorf("%w: %s, owned by uid %d, holds %d bytes where planex keeps an empty file; remove it, or run with the sandbox", ErrForeignConfig, p, owner, fi.Size())
	}
	return nil
}

// lastOf is the last path of each found file: what a contained step
// sees empty.
func lastOf(found [][]string) []string {
	out := make([]string, 0, len(found))
	for _, steps := range found {
		out = append(out, steps[len(steps)-1])
	}
	return out
}

// decode reads the CLI's JSON output into what the command agent needs.
func (a *Agent) decode(stdout []byte) (command.Output, error) {
	r, err := a.cli.decode(stdout)
	if err != nil {
		return command.Output{}, err
	}
	// The command agent adds the problems to any error.
	out := command.Output{Text: []byte(r.text), Problems: r.problems, Usage: a.usage(r), MCPCalls: mcpCalls(r.tools, a.cfg.MCP)}
	if r.failure != "" {
		return out, errors.New(r.failure)
	}
	return out, nil
}

// mcpCalls picks the calls of the configured servers' tools out of the
// tools a CLI reports, under planex's names for them (mcp__SERVER__TOOL).
// Gemini CLI calls them mcp_SERVER_TOOL.
func mcpCalls(tools map[string]int, c mcp.Config) []string {
	calls := map[string]int{}
	for name, n := range tools {
		for _, s := range c.Servers {
			if rest, ok := strings.CutPrefix(name, "mcp__"+s.Name+"__"); ok {
				calls[mcp.ToolName(s.Name, rest)] += n
			} else if rest, ok := strings.CutPrefix(name, "mcp_"+s.Name+"_"); ok {
				calls[mcp.ToolName(s.Name, rest)] += n
			}
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return mcp.FormatCalls(calls)
}

// usage totals a report's tokens and prices them: the user's price when
// given, else the CLI's own cost, else the price table by model.
func (a *Agent) usage(r report) agent.Usage {
	var u agent.Usage
	for model, t := range r.tokens {
		if model == "" {
			model = a.cfg.Model
		}
		u = u.Add(agent.Usage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
			CacheReadTokens: t.CacheReadTokens, CacheWriteTokens: t.CacheWriteTokens})
		switch {
		case a.cfg.Price != nil || r.costKnown:
		default:
			p, ok := builtin.LookupPrice(model)
			if !ok && (t.InputTokens > 0 || t.OutputTokens > 0) && a.cfg.Logger != nil {
				a.cfg.Logger.Warn("no price known for model; its cost is recorded as 0 (set --price-in/--price-out)", "agent", a.cfg.Name, "model", model)
			}
			u.CostUSD += p.Cost(tokenUsage(t))
		}
	}
	switch {
	case a.cfg.Price != nil:
		u.CostUSD = a.cfg.Price.Cost(tokenUsage(u))
	case r.costKnown:
		u.CostUSD = r.reportedCost
	}
	return u
}

func tokenUsage(u agent.Usage) builtin.TokenUsage {
	return builtin.TokenUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

func resultInstructions(p agent.Phase, schema []byte) string {
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		compact.Reset()
		compact.Write(schema)
	}
	return fmt.Sprintf("\n\n---\nWhen you are finished, end your final message with the %s result as one JSON object "+
		"that matches this JSON Schema, and nothing after it:\n%s\n", p, compact.String())
}

// installDirs are the directories a contained CLI must read to start:
// the node_modules folder its package lives in (npm links the binary
// there) and the installation of the node that runs it. A directory that
// is or holds a home directory is never among them: the sandbox hides
// homes, and only the CLI's own files are let through.
func installDirs(path string, env []string) []string {
	var dirs []string
	add := func(d string) {
		if d == "" || d == "/" || holdsHome(d, env) {
			return
		}
		dirs = append(dirs, d)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	sep := string(filepath.Separator)
	if i := strings.LastIndex(real, sep+"node_modules"+sep); i >= 0 {
		add(real[:i+len(sep+"node_modules")])
	} else {
		add(filepath.Dir(real))
	}
	if path != real {
		add(filepath.Dir(path))
	}
	if node, err := exec.LookPath("node"); err == nil {
		if rn, err := filepath.EvalSymlinks(node); err == nil {
			add(filepath.Dir(filepath.Dir(rn)))
		}
	}
	return dirs
}

// holdsHome reports whether dir is a home directory or contains one.
func holdsHome(dir string, env []string) bool {
	for _, h := range append([]string{lookupEnv(env, "HOME")}, agent.Homes(env)...) {
		if h == "" {
			continue
		}
		if rel, err := filepath.Rel(dir, h); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// writeFile writes a configuration file only its owner can read.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

// jsonDocument finds the JSON document a CLI prints on stdout, after any
// log lines: the whole output, or the last line starting an object
// through to the end.
func jsonDocument(stdout []byte) ([]byte, bool) {
	out := bytes.TrimSpace(stdout)
	if json.Valid(out) {
		return out, true
	}
	for i := bytes.LastIndex(out, []byte("\n{")); i >= 0; i = bytes.LastIndex(out[:i], []byte("\n{")) {
		if cand := out[i+1:]; json.Valid(cand) {
			return cand, true
		}
	}
	return nil, false
}

func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// shellQuote quotes s for sh unless it is made only of safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Credentials lists the variables any of the CLIs authenticates with
// (the built-in agents' keys, ANTHROPIC_API_KEY and OPENAI_API_KEY, are
// among them).
func Credentials() []string {
	var out []string
	for _, name := range Names() {
		c, _ := lookup(name)
		out = append(out, c.credentials...)
	}
	return out
}
