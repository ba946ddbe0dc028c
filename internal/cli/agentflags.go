package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/agent/clis"
	"github.com/planexhq/planex/internal/agent/command"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/agent/registry"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/proc"
	"github.com/planexhq/planex/internal/sandbox"
	"github.com/planexhq/planex/internal/session"
)

// agentFlags choose and configure the agent.
type agentFlags struct {
	command   string
	name      string
	model     string
	baseURL   string
	apiKeyEnv string
	allowEnv  []string
	maxTurns  int
	maxOut    int
	priceIn   float64
	priceOut  float64
	sandbox   string
	readable  []string
	writable  []string
	limits    string
	mcpConfig string
	// mcpInput names where the configuration came from in errors; empty
	// means the flag.
	mcpInput string
	// mcpDir is what a relative --mcp-config path is relative to; empty
	// means the current directory.
	mcpDir string
	// network and allowHosts are --network and --allow-host (netflags.go).
	network    string
	allowHosts []string
	// probeNetwork asks whether the sandbox can contain the network; nil
	// means Sandbox.ProbeNetwork. Tests stand in a machine without
	// network namespaces.
	probeNetwork func(context.Context, *sandbox.Sandbox) error
	// scopesAbstract says whether the kernel has Landlock's scopes; nil
	// means sandbox.ScopesAbstractSockets. Tests stand in an older kernel.
	scopesAbstract func() bool
	// newSandbox makes the sandbox; nil means sandbox.New. Tests stand in
	// a machine that cannot make one.
	newSandbox func(context.Context, sandbox.Mode) (*sandbox.Sandbox, error)
	// hideSelf, when set (register, the Action), makes planex
	// non-dumpable once its agents are known to run uncontained, as its
	// own user (proc.HideFromSameUser); tests that call containment in
	// their own process leave it nil.
	hideSelf func() error
}

func (a *agentFlags) register(f *pflag.FlagSet) {
	a.hideSelf = proc.HideFromSameUser
	f.StringVar(&a.command, "agent-cmd", "", "run this command as the agent (sh -c; see docs/agent-contract.md); default $PLANEX_AGENT_CMD")
	f.StringVar(&a.name, "agent", "", "built-in agent: anthropic, openai, claude, codex, gemini, command")
	f.StringVar(&a.model, "model", "", "model for --agent anthropic|openai|claude|codex|gemini (defaults: docs/agents.md)")
	f.StringVar(&a.baseURL, "base-url", "", "API base URL for the agent's model (gateways, proxies, compatible or local servers)")
	f.StringVar(&a.apiKeyEnv, "api-key-env", "", "environment variable holding the API key")
	f.StringSliceVar(&a.allowEnv, "allow-env", nil, "more environment variables agent processes may see, besides the default allow-list (comma-separated names; never GITHUB_TOKEN, INPUT_*, ACTIONS_*)")
	f.IntVar(&a.maxTurns, "max-turns", 0, "model turns per step for the built-in agents and claude (default 40, 80 for execute; claude: its own)")
	f.IntVar(&a.maxOut, "max-output-tokens", 0, "output tokens per model reply for the built-in agents (default 8192)")
	f.Float64Var(&a.priceIn, "price-in", 0, "input price in dollars per million tokens (models missing from the built-in table)")
	f.Float64Var(&a.priceOut, "price-out", 0, "output price in dollars per million tokens")
	f.StringVar(&a.mcpConfig, "mcp-config", "", "MCP servers for the agent: a .mcp.json-shaped file ({\"mcpServers\": …}) or inline JSON (docs/agents.md)")
	f.StringVar(&a.sandbox, "sandbox", "auto", "contain agent processes: auto (when the machine allows; warn otherwise), on (fail without), off")
	f.StringSliceVar(&a.readable, "sandbox-read", nil, "more directories contained agents may read, although under your home or /tmp (comma-separated; also $PLANEX_SANDBOX_READ, a list like PATH)")
	f.StringVar(&a.limits, "sandbox-limits", "", "limits for each contained step: file-size=SIZE,processes=N,memory=SIZE,open-files=N (defaults 2G, 4096, none, 262144; off turns one off; docs/security.md; also $PLANEX_SANDBOX_LIMITS)")
	f.StringSliceVar(&a.writable, "sandbox-write", nil, "more directories contained agents may write, such as a build cache (comma-separated; also $PLANEX_SANDBOX_WRITE, a list like PATH)")
	f.StringVar(&a.network, "network", "contained", "agents' network: contained (only through planex's allow-list proxy) or open (this machine's network)")
	f.StringArrayVar(&a.allowHosts, "allow-host", nil, "let contained agents reach HOST[:PORT] through planex's proxy (repeatable; *.example.com wildcards; without a port, 80 and 443)")
}

// containment builds what holds agent processes: the secret filter and,
// unless turned off, the sandbox. Without a sandbox, `auto` warns once
// locally; in the Action (strict) it fails and names the opt-out, since a
// job there holds a write token.
// checkAgentVisible refuses, before any step, a command agent the
// sandbox cannot see (a script under /tmp or a hidden home).
func (a *agentFlags) checkAgentVisible(ctx context.Context, read []string, getenv func(string) string) error {
	cmd := cmp.Or(a.command, getenv("PLANEX_AGENT_CMD"))
	if cmd == "" || (a.name != "" && a.name != "command") {
		return nil
	}
	network, err := sandbox.ParseNetwork(a.network)
	return checkCommandVisible(ctx, cmd, read, getenv, err == nil && !network.Open())
}

// writeDirs are the folders every contained step may write
// (--sandbox-write and $PLANEX_SANDBOX_WRITE, a path list).
func (a *agentFlags) writeDirs(getenv func(string) string) []string {
	return append(append([]string(nil), a.writable...), filepath.SplitList(getenv("PLANEX_SANDBOX_WRITE"))...)
}

func (a *agentFlags) containment(ctx context.Context, repo *gitrepo.Repo, strict bool, warn io.Writer, getenv func(string) string) (agent.Containment, error) {
	if extra := getenv("PLANEX_ALLOW_ENV"); extra != "" {
		a.allowEnv = append(a.allowEnv, strings.Split(extra, ",")...)
	}
	c := agent.Containment{AllowEnv: a.allowEnv, RepoDirs: []string{repo.Root, repo.CommonDir}}
	// Path lists, like PATH: directory names may hold commas.
	read := append(a.readable, filepath.SplitList(getenv("PLANEX_SANDBOX_READ"))...)
	write := a.writeDirs(getenv)
	if a.apiKeyEnv != "" {
		c.SecretEnv = []string{a.apiKeyEnv}
	}
	mode, err := sandbox.ParseMode(a.sandbox)
	if err != nil {
		return c, &exitError{code: 2, msg: "planex: --" + err.Error()}
	}
	spec := a.limits
	if spec == "" {
		spec = getenv("PLANEX_SANDBOX_LIMITS")
	}
	if c.Limits, err = sandbox.ParseLimits(spec); err != nil {
		return c, &exitError{code: 2, msg: "planex: --sandbox-limits (or PLANEX_SANDBOX_LIMITS): " + err.Error()}
	}
	newSandbox := a.newSandbox
	if newSandbox == nil {
		newSandbox = sandbox.New
	}
	box, err := newSandbox(ctx, mode)
	switch {
	case err == nil:
	case mode == sandbox.ModeOn:
		return c, fmt.Errorf("--sandbox on: %w", err)
	case strict:
		return c, fmt.Errorf("%w; planex will not run an agent uncontained with a write token. Allow user namespaces on the runner (see docs/security.md), or set the input `sandbox: off` to run without one", err)
	default:
		fmt.Fprintf(warn, "planex: warning: %v; agents run uncontained (only secrets are removed from their environment). Pass --sandbox off to run so without this warning; see docs/security.md\n", err)
	}
	c.Sandbox = box
	if box == nil {
		a.hideFromUncontained(warn)
	}
	if box != nil {
		// Its warnings name files agents made: they go where planex's
		// other messages go (through the Action log's defusing).
		box.Log = logger(warn, false)
		c.Read = append([]string{repo.Root, repo.CommonDir}, read...)
		c.Write = write
		// The sessions and the key that seals them stay out of sight, and
		// so do the repository's other work trees.
		c.Conceal = append([]string{session.StoreFor(repo.Root, repo.CommonDir).Private()}, otherWorktrees(repo, c.Read, c.Write)...)
		if err := a.checkAgentVisible(ctx, c.Read, getenv); err != nil {
			return c, err
		}
		getenvs := envGetters(getenv, os.Environ())
		if err := checkRunnerFiles(write, getenvs); err != nil {
			return c, err
		}
		if err := checkTempHidden([]string{repo.Root, repo.CommonDir}, getenv); err != nil {
			return c, err
		}
		if err := hideIgnored(ctx, &c, repo, cmp.Or(a.command, getenv("PLANEX_AGENT_CMD")), append(append([]string(nil), read...), write...), getenv, strict, true); err != nil {
			return c, err
		}
		overlays, conceal, err := agentGitConfig(ctx, repo, getenvs)
		if err != nil {
			return c, err
		}
		c.Overlay = append(c.Overlay, overlays...)
		c.Conceal = append(c.Conceal, conceal...)
	}
	if box == nil {
		// The built-in agents' file tools hide what the sandbox would
		// (the user's excludes, the Action's untracked files), not only
		// what .gitignore files name.
		if err := hideIgnored(ctx, &c, repo, cmp.Or(a.command, getenv("PLANEX_AGENT_CMD")), append(append([]string(nil), read...), write...), getenv, strict, false); err != nil {
			return c, err
		}
	}
	if err := a.networkContainment(ctx, &c, mode, strict, err != nil, warn); err != nil {
		return c, err
	}
	return c, nil
}

// refuseMCPLinkOut refuses an MCP configuration file in the checkout at
// root that is a link leading out of it: the repository decides what
// that name is, and its target (a server list of the runner's or the
// user's, with the tokens in it) would become the agent's servers.
// hideFromUncontained makes planex non-dumpable (hideSelf): an
// uncontained agent runs as planex's user and would read planex's
// environment (the tokens and keys it keeps from agents) in
// /proc/<pid>/environ.
func (a *agentFlags) hideFromUncontained(warn io.Writer) {
	if a.hideSelf == nil {
		return
	}
	if err := a.hideSelf(); err != nil {
		fmt.Fprintf(warn, "planex: warning: hiding planex's environment from its agents: %v\n", err)
	}
}

func (a *agentFlags) refuseMCPLinkOut(root string) error {
	p := strings.TrimSpace(a.mcpConfig)
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.mcpDir, p)
	}
	if out := linkOutOf(p, root); out != "" {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %s is a link out of the checkout (to %s): planex does not take a repository's link to a file elsewhere as the MCP configuration; name that file itself", a.mcpLabel(), a.mcpConfig, out)}
	}
	return nil
}

// mcpNetwork widens a contained network's allow-list (eg, when not nil)
// by the HTTP servers of the user's own MCP configuration: for a named
// CLI, which reaches them through the proxy, the proxy's rules; for a
// built-in agent, whose MCP client is planex outside the sandbox, the
// rules of that client alone (eg.ClientRules), which dials them held to
// the proxy's decision (agent.Egress.Client). A configuration in the
// checkout may not widen it: a task's commit (a follow-up runs on its
// branch) or any pusher could name a server of their own and open a way
// out for the repository's code, so its HTTP servers must already be
// allowed, whatever the agent: a built-in agent's MCP client is planex
// itself, which reaches them from this machine's network, past the
// proxy and the sandbox.
func (a *agentFlags) mcpNetwork(name string, servers mcp.Config, repoConfig bool, eg *agent.Egress) error {
	if eg == nil {
		return nil
	}
	if !repoConfig {
		rules, err := endpointRules(name, servers)
		if err != nil {
			return &exitError{code: exitUsage, msg: "planex: " + err.Error()}
		}
		eg.Rules = append(eg.Rules, rules...)
		if name == "anthropic" || name == "openai" {
			// planex's own MCP client reaches them, held to the proxy's
			// decision; the sandboxed programs get no way to them.
			own, err := mcpHTTPRules(servers)
			if err != nil {
				return &exitError{code: exitUsage, msg: "planex: " + err.Error()}
			}
			eg.ClientRules = append(eg.ClientRules, own...)
		}
		return nil
	}
	if name == "" || name == "command" {
		return nil // a command agent takes no MCP servers: refused by name
	}
	reached, err := mcpHTTPRules(servers)
	if err != nil {
		return &exitError{code: exitUsage, msg: "planex: " + err.Error()}
	}
	if r, ok := notAllowed(eg.Rules, reached); !ok {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %s lies in the checkout, so it is the repository's content, and may not widen the network: its HTTP server at %s is not among the allowed hosts; allow it with --allow-host %s (the Action's `allow-hosts` input) or keep the configuration outside the checkout", a.mcpLabel(), a.mcpConfig, r, r)}
	}
	return nil
}

// build selects the agent from the flags and environment.
func (a *agentFlags) build(getenv func(string) string, contain agent.Containment, log *slog.Logger) (agent.Agent, error) {
	cmd := a.command
	if cmd == "" {
		cmd = getenv("PLANEX_AGENT_CMD")
	}
	name := a.name
	if name == "" {
		name = getenv("PLANEX_AGENT")
	}
	// ${VAR}s in the MCP configuration are planex's own variables, read
	// here and given only to the server that names them. A configuration
	// in the checkout is the repository's: it may not take the model's
	// key, which planex keeps from every agent process.
	repoConfig := len(contain.RepoDirs) > 0 && mcpConfigInCheckout(a.mcpConfig, a.mcpDir, contain.RepoDirs[0])
	if repoConfig {
		if err := a.refuseMCPLinkOut(contain.RepoDirs[0]); err != nil {
			return nil, err
		}
	}
	var keyAsked string
	servers, err := mcp.Load(a.mcpConfig, a.mcpDir, func(k string) (string, bool) {
		if repoConfig && a.isModelKey(k) {
			keyAsked = k
			return "", false
		}
		v := getenv(k)
		return v, v != ""
	})
	if keyAsked != "" {
		return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %s lies in the checkout, so it is the repository's content, and may not expand ${%s}, a model key planex keeps from agents: give the server a key of its own under another name, or keep the configuration outside the checkout", a.mcpLabel(), a.mcpConfig, keyAsked)}
	}
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: a.mcpLabel() + ": " + err.Error()}
	}
	keepMCPServers(&contain, servers, a.mcpConfig, a.mcpDir)
	if err := a.mcpNetwork(name, servers, repoConfig, contain.Egress); err != nil {
		return nil, err
	}
	if name == "" || name == "command" {
		if !servers.Empty() {
			return nil, &exitError{code: exitUsage, msg: a.mcpLabel() + ": MCP servers work with --agent anthropic|openai|claude|codex|gemini, not with a command agent"}
		}
		if strings.TrimSpace(cmd) == "" {
			return nil, fmt.Errorf("no agent configured: pass --agent-cmd CMD (or set PLANEX_AGENT_CMD), or --agent %s; `planex explore` works without an agent", strings.Join(registry.Names()[:5], "|"))
		}
		return command.New(command.Config{Command: cmd, Contain: contain}), nil
	}
	if !slices.Contains(registry.Names(), name) {
		return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("planex: unknown agent %q (choose one of: %s)", name, strings.Join(registry.Names(), ", "))}
	}
	return registry.New(name, registry.Options{
		Model: a.model, BaseURL: a.baseURL, APIKeyEnv: a.apiKeyEnv, Command: cmd, Contain: contain,
		MaxTurns: a.maxTurns, MaxOutputTokens: a.maxOut, PricePerMTokIn: a.priceIn, PricePerMTokOut: a.priceOut,
		Getenv: getenv, MCP: servers, Logger: log,
	})
}

// isModelKey reports whether name holds a model provider's key: one the
// agents authenticate with, or the one --api-key-env names.
func (a *agentFlags) isModelKey(name string) bool {
	return name == a.apiKeyEnv || slices.Contains(clis.Credentials(), name)
}

func (a *agentFlags) mcpLabel() string {
	if a.mcpInput != "" {
		return a.mcpInput
	}
	return "planex: --mcp-config"
}

// checkPrice refuses a cost budget that cannot hold: with --max-cost-usd
// set, a named agent whose model has no price in planex's table (and no
// --price-in/--price-out) would count every step as $0 and never stop.
// It runs before any model call. A command agent reports its own cost.
func (a *agentFlags) checkPrice(maxCost float64, getenv func(string) string, how string) error {
	name := a.name
	if name == "" {
		name = getenv("PLANEX_AGENT")
	}
	if maxCost <= 0 || name == "" || name == "command" || a.priceIn > 0 || a.priceOut > 0 {
		return nil
	}
	model := a.model
	if model == "" {
		model = agent.DefaultModel(name)
	}
	if _, ok := builtin.LookupPrice(model); ok {
		return nil
	}
	return &exitError{code: exitUsage, msg: fmt.Sprintf("planex: the cost budget cannot be kept: model %q of agent %s has no price in planex's table, so its steps would count as $0. %s", model, name, how)}
}

// agentGitConfig is how a contained agent sees git's configuration: the
// repository's config and its submodules', and the system and global
// configs outside it (/etc/gitconfig, GIT_CONFIG_SYSTEM's and
// GIT_CONFIG_GLOBAL's files, $XDG_CONFIG_HOME/git/config), each shown
// without the credentials CI systems, images and tools keep there (a
// token in a remote's URL, an extraheader, a url.<token>.insteadOf, a
// credential helper); and the files those configs include or give their
// credential helpers, and the default credential stores, to conceal. A
// referenced file of the repository's work tree (a committed .gitconfig
// an include names) is the repository's content and stays visible.
// otherWorktrees are the repository's work trees other than the one
// planex works in (gitrepo.OtherWorktrees) that contained processes need
// not see: the main work tree of a checkout that is a linked worktree,
// the user's other linked worktrees. planex hides the checkout's
// git-ignored files, not theirs, so a contained agent read their .env
// by the path the git directory records, wherever they lie outside the
// hidden home. In one that holds a folder the step reads or writes (the
// git directory inside the main work tree, the checkout nested in it, a
// grant) everything else is covered (coverAround).
func otherWorktrees(repo *gitrepo.Repo, read, write []string) []string {
	// Compared as resolved paths: git records a worktree as it was
	// spelled when made, which may pass through a link.
	real := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	var keep []string
	for _, k := range append(append([]string{repo.Root, repo.CommonDir}, read...), write...) {
		keep = append(keep, real(k))
	}
	var out []string
	for _, wt := range gitrepo.OtherWorktrees(repo) {
		out = coverAround(out, real(wt), keep, 0)
	}
	return out
}

// maxCoverEntries bounds the entries coverAround lists in one folder,
// and maxCoverDepth how deep it follows the way to a kept folder.
const (
	maxCoverEntries = 4096
	maxCoverDepth   = 8
)

// coverAround appends dir to out when it holds no kept path; when it
// does (the main work tree holding the git directory, or the checkout
// nested in it), it covers dir's other entries one by one and goes on
// down the way to each kept path. A kept folder itself stays, and so do
// links.
func coverAround(out []string, dir string, keep []string, depth int) []string {
	holds := func(k string) bool { return strings.HasPrefix(k, dir+"/") }
	// A link is left alone: a cover would land where it leads.
	if fi, err := os.Lstat(dir); err != nil || fi.Mode()&os.ModeSymlink != 0 || slices.Contains(keep, dir) {
		return out
	}
	if !slices.ContainsFunc(keep, holds) {
		return append(out, dir)
	}
	if depth >= maxCoverDepth {
		return out
	}
	f, err := os.Open(dir)
	if err != nil {
		return out
	}
	names, _ := f.Readdirnames(maxCoverEntries)
	f.Close()
	for _, n := range names {
		out = coverAround(out, filepath.Join(dir, n), keep, depth+1)
	}
	return out
}

// getenvs are the readings of planex's environment (envGetters): a
// variable present twice names the configs and stores of each value.
func agentGitConfig(ctx context.Context, repo *gitrepo.Repo, getenvs []func(string) string) (overlays []agent.FileOverlay, conceal []string, err error) {
	// Each file is read once for both its view and what it references,
	// all of them with one git when they can be (gitrepo.ReadConfigFiles).
	files := gitrepo.ConfigFiles(repo)
	own := len(files)
	for _, getenv := range getenvs {
		for _, file := range gitrepo.OutsideConfigFiles(getenv) {
			if fi, statErr := os.Stat(file); statErr == nil && fi.Mode().IsRegular() && !slices.Contains(files, file) {
				files = append(files, file)
			}
		}
	}
	cfgs, errs := gitrepo.ReadConfigFiles(ctx, repo, files)
	for i, cfg := range cfgs {
		if errs[i] != nil {
			if i < own {
				return nil, nil, errs[i]
			}
			// One outside the repository planex cannot read is shown
			// empty: git would refuse it.
			overlays = append(overlays, agent.FileOverlay{Path: files[i]})
			continue
		}
		overlays = append(overlays, agent.FileOverlay{Path: files[i], Content: cfg.AgentView()})
		for _, getenv := range getenvs {
			refs, err := gitrepo.ReferencedFilesIn(ctx, repo, cfg, getenv("HOME"))
			if err != nil {
				return nil, nil, err
			}
			conceal = append(conceal, refs...)
		}
	}
	for _, getenv := range getenvs {
		conceal = append(conceal, gitrepo.CredentialStores(getenv)...)
	}
	kept := conceal[:0]
	for _, p := range conceal {
		// Files and sockets only: a folder named by mistake (an include
		// of /etc) is no credential store, and covering it would hide
		// what programs need.
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			continue
		}
		if (!within(p, repo.Root) || within(p, repo.CommonDir)) && !slices.Contains(kept, p) {
			kept = append(kept, p)
		}
	}
	return overlays, kept, nil
}

// envGetters are the readings of planex's environment a reader that
// names files to hide or refuse asks: getenv, and, where environ (the
// process's own) holds a name twice, each of its readings
// (agent.EnvGetters), as the agent's own checks read it.
func envGetters(getenv func(string) string, environ []string) []func(string) string {
	readings := agent.EnvGetters(environ)
	if len(readings) < 2 {
		return []func(string) string{getenv}
	}
	return append([]func(string) string{getenv}, readings...)
}

// checkRunnerFiles refuses writable folders holding a file the Actions
// runner reads after the step, by every reading of the environment.
func checkRunnerFiles(write []string, getenvs []func(string) string) error {
	for _, g := range getenvs {
		if err := agent.CheckRunnerFilesUnwritable(write, g); err != nil {
			return &exitError{code: 2, msg: "planex: --sandbox-write (or PLANEX_SANDBOX_WRITE): " + err.Error()}
		}
	}
	return nil
}
