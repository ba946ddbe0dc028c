package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Every git planex runs goes through this file. The repository, the user's
// git config and the inherited environment are all writable by whoever
// (agent or prompt injection) had a shell on the machine before planex ran
// git, and planex runs git with secrets in its environment. So no git
// planex starts may run a program any of them names: hooks, fsmonitor,
// clean/smudge/process filters, diff and merge drivers, textconv,
// credential helpers, ssh commands, ext:: remotes, gpg, auto gc.
//
// Configuration given on the command line (GIT_CONFIG_COUNT here) outranks
// every config file, so the protections are passed that way; system and
// global config are not read at all, and inherited GIT_* variables that
// redirect git are dropped.

type setting struct{ key, value string }

// protections are the settings on every call. Empty values switch a
// program off: git skips an empty filter, and runs nothing for an empty
// alternateRefsCommand or askPass.
func protections() []setting {
	return []setting{
		{"core.hooksPath", os.DevNull},
		{"core.fsmonitor", "false"},
		{"core.askPass", ""},
		{"core.sshCommand", "ssh"},
		{"core.alternateRefsCommand", ""},
		{"core.pager", "cat"},
		{"core.editor", ":"},
		{"sequence.editor", ":"},
		// Reset the helper list: helpers from any file come before this.
		{"credential.helper", ""},
		{"diff.external", ""},
		// Only the transports planex uses; ext:: and git:// (whose
		// core.gitProxy cannot be overridden) and remote helpers are refused.
		// A local repository (file://, a path) is allowed only for the
		// fetches, listings and pushes planex makes itself (remoteCall),
		// which name their upload and receive programs: any other git
		// that reaches a missing object fetches it lazily from the
		// configuration's promisor remote, running that remote's
		// remote.<name>.uploadpack, a command, when it is a local path.
		{"protocol.allow", "never"},
		{"protocol.https.allow", "always"},
		{"protocol.http.allow", "always"},
		{"protocol.ssh.allow", "always"},
		{"protocol.file.allow", "never"},
		{"commit.gpgSign", "false"},
		{"tag.gpgSign", "false"},
		{"push.gpgSign", "false"},
		{"log.showSignature", "false"},
		{"gpg.program", "gpg"},
		{"gpg.openpgp.program", "gpg"},
		{"gpg.x509.program", "gpgsm"},
		{"gpg.ssh.program", "ssh-keygen"},
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
		{"submodule.recurse", "false"},
		{"fetch.recurseSubmodules", "false"},
		{"push.recurseSubmodules", "no"},
		// A push carries only the refs planex names, and no options: a
		// writer's followTags pushed its tags along (a release workflow
		// runs on one), and push options ask some servers to act.
		{"push.followTags", "false"},
		{"push.pushOption", ""},
		// GIT_NO_REPLACE_OBJECTS is not enough: before git 2.42 a
		// repository's core.useReplaceRefs=true switched replace refs
		// back on after it.
		{"core.useReplaceRefs", "false"},
		// The commit-graph file caches each commit's parents and tree,
		// and git reads them from it in place of the commit: a rewritten
		// file gave a commit parents of the writer's choosing.
		{"core.commitGraph", "false"},
		// A sparse checkout the configuration turns on would be copied
		// into every task's worktree: the agent saw part of the base
		// tree, and a file it added outside the rules failed the
		// snapshot. planex's worktrees are whole; the user's checkout
		// keeps its skip-worktree entries, which git honours whatever
		// this says.
		{"core.sparseCheckout", "false"},
		{"index.sparse", "false"},
		// Files git opens by a setting's name: a git-directory writer's
		// FIFO there hung every diff, show or log planex ran. planex reads
		// none of them (the tree's own .gitattributes still counts);
		// diff.orderFile takes no empty value. No excludes file either,
		// the repository's or the one git reads by default
		// ($XDG_CONFIG_HOME/git/ignore): the listing of what is hidden
		// from agents names the user's when it is a regular file
		// (ignored.go), and nothing else reads one.
		{"diff.orderFile", os.DevNull},
		{"core.excludesFile", ""},
		{"core.attributesFile", ""},
		{"mailmap.file", ""},
		{"mailmap.blob", ""},
		// Every log and show reads the work tree's .mailmap by
		// default: a FIFO left there hung them.
		{"log.mailmap", "false"},
	}
}

// keptGitVars are the inherited GIT_* variables git may see: identity and
// TLS trust. Everything else under GIT_ (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_EXEC_PATH, GIT_SSH*,
// GIT_ASKPASS, GIT_EXTERNAL_DIFF, GIT_CONFIG*, GIT_PROXY_COMMAND, …) is
// dropped unless planex sets it for the call.
var keptGitVars = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_SSL_CAINFO": true, "GIT_SSL_CAPATH": true,
}

// userConfigVars say where the user's own config is; they are honoured
// only when planex reads the user's identity.
var userConfigVars = map[string]bool{"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_NOSYSTEM": true}

// sanitizeEnv drops the inherited variables that could make git run a
// program or work on another repository than the one planex names.
func sanitizeEnv(environ []string, userConfig bool) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "SSH_ASKPASS":
			continue
		case strings.HasPrefix(name, "GIT_") && !keptGitVars[name] && !(userConfig && userConfigVars[name]):
			continue
		case name == "PATH":
			// git runs ssh, gpg and the shell's commands by name, from
			// the repository.
			kv = "PATH=" + AbsolutePath(strings.TrimPrefix(kv, "PATH="))
		}
		out = append(out, kv)
	}
	return out
}

// call is one git invocation.
type call struct {
	dir    string
	env    []string  // planex's own variables for this call (GIT_DIR, GIT_INDEX_FILE, …)
	config []setting // command-line config on top of the protections
	stdin  []byte
	// input, when set, is read as git's standard input in place of
	// stdin: what is too large to hold (a state's files, streamed).
	input io.Reader
	args  []string
	// userConfig reads the user's system and global config too; only for
	// `git config --get`, which runs nothing.
	userConfig bool
	// scans is the Repo's remembered config scans; nil scans every time.
	scans *scanCache
	// trustHTTP undoes the config's https trust settings for this call
	// (httpOverrides), read by the same scan as the drivers.
	trustHTTP bool
	// terminal keeps git in planex's process group: the ssh of a remote
	// call may ask the user for a host key's approval or a passphrase on
	// the terminal, which a process of another (background) group is
	// stopped for reading. Every other call gets a group of its own, all
	// killed when its context is cancelled (ownProcessGroup).
	terminal bool
}

// waitDelay is how long a git whose context is done, or which has ended,
// is waited for to close its output: past it the output is given up. A
// child git left behind (an upload-pack blocked on a git-directory
// writer's FIFO) held that output open, and the wait never ended.
const waitDelay = 10 * time.Second

// command builds the protected exec.Cmd for c. Commands that may read
// file contents or attributes first list the repository's filter, diff
// and merge drivers so that each can be switched off by name.
//
// The credential settings among them (an http extraheader, WithAuth's)
// are not put in git's environment, which every process of the user
// reads in /proc/<pid>/environ while git runs (an agent run without the
// sandbox, a detached process it left): they are written to a file of
// mode 0600 git includes, on Linux one without a name that git inherits
// (credentialFile); done closes or removes it, once git has ended.
func command(ctx context.Context, c call) (cmd *exec.Cmd, done func(), err error) {
	env := sanitizeEnv(os.Environ(), c.userConfig)
	// Never prompt (CI has no terminal), never page, never write the
	// user's index opportunistically, never swap objects through
	// refs/replace or info/grafts (which would change what planex reads
	// and commits: another commit's tree for an id, a parent of the
	// writer's choosing).
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "LC_ALL=C",
		"GIT_OPTIONAL_LOCKS=0", "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE="+os.DevNull, "GIT_ATTR_NOSYSTEM=1")
	if !c.userConfig {
		env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_SYSTEM="+os.DevNull, "GIT_CONFIG_GLOBAL="+os.DevNull)
	}
	env = append(env, c.env...)
	settings := protections()
	if c.userConfig {
		// A read of the user's config (`git config`, which opens no
		// excludes file) must see their core.excludesFile, not planex's.
		settings = slices.DeleteFunc(settings, func(s setting) bool { return s.key == "core.excludesFile" })
	}
	if !explicitGitDir(c) {
		// Discovery checks ownership; planex's own git is protected, so the
		// repository git would find from dir is trusted even when another
		// user owns it (CI containers).
		if root := discoverRoot(c.dir); root != "" {
			settings = append(settings, setting{"safe.directory", root})
		}
	}
	// git reads its config files before anything else, includes and all.
	included, err := checkConfigFiles(ctx, c.scans, configFiles(c))
	if err != nil {
		return nil, func() {}, err
	}
	if err := checkGitDirFiles(ctx, c); err != nil {
		return nil, func() {}, err
	}
	var scanned configScan
	if needsDriverScan(c.args) || c.trustHTTP {
		s, err := c.scans.scan(ctx, c)
		if err != nil {
			if c.trustHTTP {
				return nil, func() {}, unreadHTTPSettings(err)
			}
			return nil, func() {}, err
		}
		scanned = s
		settings = append(settings, neutralise(s.drivers)...)
		settings = append(settings, neutralise(included)...)
	}
	settings = append(settings, c.config...)
	if c.trustHTTP {
		// Last: of two settings under one name the later wins.
		over, err := scanned.httpOverrides()
		if err != nil {
			return nil, func() {}, err
		}
		if scanned.hasHTTPFiles() {
			if err := checkHTTPFiles(ctx, c); err != nil {
				return nil, func() {}, err
			}
		}
		settings = append(settings, over...)
	}
	settings, credFile, done, err := credentialsInFile(settings)
	if err != nil {
		return nil, done, err
	}
	env = append(env, configEnv(settings)...)
	env, gitProg := outsideRepoPath(env, c.dir, avoided(ctx)...)
	cmd = exec.CommandContext(ctx, gitProg, withDiffFlags(c.args)...)
	cmd.Dir = c.dir
	cmd.Env = env
	cmd.WaitDelay = waitDelay
	if !c.terminal {
		ownProcessGroup(cmd)
	}
	if credFile != nil {
		cmd.ExtraFiles = []*os.File{credFile}
	}
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	if c.input != nil {
		cmd.Stdin = c.input
	}
	return cmd, done, nil
}

// run executes c and returns its stdout.
func run(ctx context.Context, c call) (string, error) {
	cmd, done, err := command(ctx, c)
	if err != nil {
		return "", err
	}
	defer done()
	// Git's warnings come once for each file (an agent's attributes make
	// it warn about every line ending it converts): only their start is
	// kept, for the error.
	var stdout bytes.Buffer
	stderr := &headBuffer{max: 64 << 10}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		// A call cut short by ctx says so in a way errors.Is can tell
		// (the CLI reports an interrupted run by it), not only in text.
		if cerr := ctx.Err(); cerr != nil {
			return stdout.String(), fmt.Errorf("git %s: %w", strings.Join(c.args, " "), cerr)
		}
		msg := strings.TrimSpace(stderr.b.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), fmt.Errorf("git %s: %s", strings.Join(c.args, " "), msg)
	}
	return stdout.String(), nil
}

// runCapped is run keeping at most max bytes of stdout: once git has
// written more it is stopped, and the output is what came before the
// last line break within max, with cut set. A patch is as large as what
// an agent committed (many files just under core.bigFileThreshold, each
// diffed as text), which planex must not hold in memory whole.
func runCapped(ctx context.Context, c call, max int) (out string, cut bool, err error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cmd, done, err := command(ctx, c)
	if err != nil {
		return "", false, err
	}
	defer done()
	stdout := &cappedBuffer{max: max, full: stop}
	stderr := &cappedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	if stdout.cut {
		text := stdout.b.String()
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i+1]
		}
		return text, true, nil
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.b.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.b.String(), false, fmt.Errorf("git %s: %s", strings.Join(c.args, " "), msg)
	}
	return stdout.b.String(), false, nil
}

// cappedBuffer keeps the first max bytes written to it and drops the
// rest, calling full (when set) the first time it drops any.
type cappedBuffer struct {
	b    bytes.Buffer
	max  int
	cut  bool
	full func()
}

func (w *cappedBuffer) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room < len(p) {
		w.b.Write(p[:max(room, 0)])
		if !w.cut && w.full != nil {
			w.full()
		}
		w.cut = true
		return len(p), nil
	}
	return w.b.Write(p)
}

func configEnv(settings []setting) []string {
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(settings))}
	for i, s := range settings {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, s.key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, s.value))
	}
	return env
}

// splitArgs separates git's global options from the subcommand and its
// arguments.
func splitArgs(args []string) (global []string, sub string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return args[:i], a, args[i+1:]
		}
		switch a {
		case "-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env":
			i++
		}
	}
	return args, "", nil
}

func explicitGitDir(c call) bool {
	for _, kv := range c.env {
		if strings.HasPrefix(kv, "GIT_DIR=") {
			return true
		}
	}
	global, _, _ := splitArgs(c.args)
	for _, a := range global {
		if a == "--git-dir" || strings.HasPrefix(a, "--git-dir=") {
			return true
		}
	}
	return false
}

type avoidKey struct{}

// AvoidingFolders returns ctx under which planex's git finds neither
// itself nor the programs it runs by name (ssh, gpg) in dirs or below
// them: the folders contained steps may write (--sandbox-write). A step
// may leave a git or an ssh there, and with one of them on PATH (a
// shared ~/.cargo, whose bin is; ~/go and its bin) planex's own git,
// which runs uncontained with the token in its environment, would run
// it.
func AvoidingFolders(ctx context.Context, dirs []string) context.Context {
	out := avoided(ctx)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs // relative to planex's working directory, as the sandbox reads it
		}
		out = append(out, d)
	}
	if len(out) == len(avoided(ctx)) {
		return ctx
	}
	return context.WithValue(ctx, avoidKey{}, out)
}

// avoided is what AvoidingFolders put in ctx.
func avoided(ctx context.Context) []string {
	dirs, _ := ctx.Value(avoidKey{}).([]string)
	return dirs
}

// outsideRepoPath drops from env's PATH the folders inside the
// repository the call works on (dir's, and the work tree and main
// checkout its variables name): a workflow may put one on PATH by its
// absolute name ($GITHUB_WORKSPACE/node_modules/.bin), and the ssh, gpg
// or git committed there would run in place of the system's; and those
// inside the folders avoid names (AvoidingFolders). It also returns the
// git found on that PATH ("git" when none is).
func outsideRepoPath(env []string, dir string, avoid ...string) ([]string, string) {
	roots := append([]string{discoverRoot(dir)}, avoid...)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "GIT_WORK_TREE":
			roots = append(roots, value)
		case name == "GIT_COMMON_DIR" && filepath.Base(value) == ".git":
			roots = append(roots, filepath.Dir(value))
		}
	}
	var real []string
	for _, r := range roots {
		if r == "" {
			continue
		}
		if abs, err := filepath.EvalSymlinks(r); err == nil {
			real = append(real, abs)
		}
	}
	out := make([]string, 0, len(env))
	prog := "git"
	for _, kv := range env {
		value, isPath := strings.CutPrefix(kv, "PATH=")
		if !isPath {
			out = append(out, kv)
			continue
		}
		var keep []string
		for _, d := range filepath.SplitList(value) {
			if inAny(d, real) {
				continue
			}
			keep = append(keep, d)
			if fi, err := os.Stat(filepath.Join(d, "git")); prog == "git" && err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				prog = filepath.Join(d, "git")
			}
		}
		out = append(out, "PATH="+strings.Join(keep, string(filepath.ListSeparator)))
	}
	return out, prog
}

// inAny reports whether folder d, resolved, is one of roots or lies
// below one.
func inAny(d string, roots []string) bool {
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	for _, root := range roots {
		if d == root || strings.HasPrefix(d, root+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// discoverRoot finds the directory git's discovery will stop at from dir:
// the nearest one holding a .git entry.
func discoverRoot(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// objectOnly are subcommands that touch neither the index nor a file's
// contents, attributes or a remote, so no driver can run in them. Index
// writers are not among them: writing an index re-reads "racily clean"
// files through their clean filter.
var objectOnly = map[string]bool{
	"rev-parse": true, "update-ref": true, "for-each-ref": true, "symbolic-ref": true,
	"commit-tree": true, "ls-tree": true, "mktree": true, "merge-base": true,
	"rev-list": true, "config": true, "diff-tree": true, "cat-file": true, "version": true,
	// fast-import writes the objects and ref its input names, nothing of
	// a work tree (planex's state saves, statesave.go).
	"fast-import": true,
}

// listingOptions are the options with which ls-files and check-ignore
// only list names: they read the index, the ignore files and folders,
// never a file's contents (ls-files compares contents, through a clean
// filter, only for --modified). A call with any other option (an
// abbreviation, --modified, -m in a group, --format, --eol,
// --recurse-submodules) is scanned as before.
var listingOptions = map[string]map[string]bool{
	"ls-files": {
		"-z": true, "-c": true, "--cached": true, "-o": true, "--others": true, "-co": true,
		"-s": true, "--stage": true, "-i": true, "--ignored": true, "--directory": true,
		"--no-empty-directory": true, "--exclude-standard": true, "--deduplicate": true,
		"--full-name": true,
	},
	"check-ignore": {"-z": true, "--stdin": true, "-v": true, "--verbose": true, "-n": true, "--non-matching": true, "--no-index": true},
}

// listingOnly reports whether sub with rest lists names only (see
// listingOptions). Everything after "--" is a path; anything else
// starting with "-" must be a known option.
func listingOnly(sub string, rest []string) bool {
	allowed := listingOptions[sub]
	if allowed == nil {
		return false
	}
	for _, a := range rest {
		if a == "--" {
			return true
		}
		if strings.HasPrefix(a, "-") && !allowed[a] {
			return false
		}
	}
	return true
}

func needsDriverScan(args []string) bool {
	_, sub, rest := splitArgs(args)
	if listingOnly(sub, rest) {
		return false
	}
	if !objectOnly[sub] {
		return true
	}
	for _, a := range rest {
		if a == "--filters" || a == "--textconv" || strings.HasPrefix(a, "--path=") { // cat-file
			return true
		}
	}
	return false
}

// diffCommands produce diffs; external diff and textconv are never used.
var diffCommands = map[string]bool{"diff": true, "show": true, "log": true, "whatchanged": true, "format-patch": true}

func withDiffFlags(args []string) []string {
	global, sub, rest := splitArgs(args)
	if !diffCommands[sub] {
		return args
	}
	out := append(append([]string{}, global...), sub, "--no-ext-diff", "--no-textconv")
	return append(out, rest...)
}

var driverKey = regexp.MustCompile(`^(filter|diff|merge)\.(.+)\.[^.]+$`)

// scanPattern is what the config scan lists: the keys naming filter, diff
// and merge drivers, include directives, the https trust settings
// (httpTrustKey), url rewrites and remotes' settings (refuseRewrite). One git process answers both the driver scan and the
// https trust read, which were two before every fetch, push and listing.
const scanPattern = `^(filter|diff|merge|include|includeif)\.|^http\..*(sslverify|sslcainfo|sslcapath|curloptresolve|sslversion|sslcipherlist|cookiefile|savecookies|sslcert|sslkey|pinnedpubkey|proxysslcert|proxysslkey|proxysslcainfo)$|^url\..*\.(insteadof|pushinsteadof)$|^remote\..+\.`

// maxScan bounds what a config scan reads of git's answer: a config
// listing more is refused, never read in part (a driver or https setting
// past the cut would keep its effect).
const maxScan = 1 << 20

// ErrConfigTooLarge is returned when the repository's config lists more
// driver, include and https trust keys than planex reads (maxScan).
var ErrConfigTooLarge = errors.New("the repository's git config lists more driver, include and https settings than planex reads")

// configScan is what one scan of c's config found.
type configScan struct {
	drivers  map[string][]string // filter, diff and merge drivers by kind
	httpKeys []string            // https trust settings, as git names them
	includes bool                // the config has include directives
	rewrites bool                // the config has url.<base>.insteadOf or pushInsteadOf
	remotes  map[string]bool     // the names of the remotes the config configures
}

// scanConfig lists the filter, diff and merge drivers and the https trust
// settings c's repository defines, reading config the way c itself will,
// and whether the config has include directives (which name files beyond
// the repository's own).
func scanConfig(ctx context.Context, c call) (configScan, error) {
	global, _, _ := splitArgs(c.args)
	scan := c
	scan.stdin, scan.input = nil, nil
	scan.trustHTTP = false
	// The credentials are none of the keys listed; included from a file
	// of their own (credentialsInFile), they would mark every scan as
	// having includes, never remembered.
	scan.config = slices.DeleteFunc(slices.Clone(c.config), isCredentialSetting)
	scan.args = append(append([]string{}, global...), "config", "-z", "--name-only", "--get-regexp", scanPattern)
	cmd, done, err := command(ctx, scan)
	if err != nil {
		return configScan{}, err
	}
	defer done()
	stdout := &headBuffer{max: maxScan + 1}
	stderr := &headBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.b.Len() == 0 {
			return configScan{}, nil // no such keys
		}
		msg := strings.TrimSpace(stderr.b.String())
		if msg == "" {
			msg = err.Error()
		}
		return configScan{}, fmt.Errorf("listing the repository's git drivers and https settings: %s", msg)
	}
	if stdout.b.Len() > maxScan {
		return configScan{}, fmt.Errorf("%w: they pass %d bytes", ErrConfigTooLarge, maxScan)
	}
	return parseScan(stdout.b.String()), nil
}

// parseScan reads the NUL-separated key names of a config scan.
func parseScan(out string) configScan {
	s := configScan{drivers: map[string][]string{}, remotes: map[string]bool{}}
	seen := map[string]bool{}
	for _, key := range strings.Split(out, "\x00") {
		if strings.HasPrefix(key, "include.") || strings.HasPrefix(key, "includeif.") {
			s.includes = true
		}
		if strings.HasPrefix(key, "url.") && (strings.HasSuffix(key, ".insteadof") || strings.HasSuffix(key, ".pushinsteadof")) {
			s.rewrites = true
			continue
		}
		if name, ok := strings.CutPrefix(key, "remote."); ok {
			if dot := strings.LastIndex(name, "."); dot > 0 {
				s.remotes[name[:dot]] = true
			}
			continue
		}
		if httpTrustKey.MatchString(key) {
			if !seen[key] {
				s.httpKeys = append(s.httpKeys, key)
			}
			seen[key] = true
			continue
		}
		m := driverKey.FindStringSubmatch(key)
		if m == nil || seen[m[1]+"."+m[2]] {
			continue
		}
		seen[m[1]+"."+m[2]] = true
		s.drivers[m[1]] = append(s.drivers[m[1]], m[2])
	}
	return s
}

// neutralise switches off every driver by name. An empty command is no
// command to git; a required filter without one would fail instead.
func neutralise(names map[string][]string) []setting {
	var out []setting
	for _, n := range names["filter"] {
		out = append(out, setting{"filter." + n + ".clean", ""}, setting{"filter." + n + ".smudge", ""},
			setting{"filter." + n + ".process", ""}, setting{"filter." + n + ".required", "false"})
	}
	for _, n := range names["diff"] {
		out = append(out, setting{"diff." + n + ".command", ""}, setting{"diff." + n + ".textconv", ""})
	}
	for _, n := range names["merge"] {
		out = append(out, setting{"merge." + n + ".driver", ""})
	}
	return out
}

// Command returns a git command with all of planex's protections, for
// code outside this package that streams git's output (the repository
// map, the locate benchmark). The repository is found from dir, or named
// by --git-dir in args. The caller sets Stdin/Stdout and runs it.
func Command(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	// No setting of planex's, so no credential file to remove later.
	cmd, _, err := command(ctx, call{dir: dir, args: args})
	return cmd, err
}

// Output runs a protected git command (see Command) and returns stdout.
func Output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	out, err := run(ctx, call{dir: dir, args: args})
	return []byte(out), err
}

// stream runs c and hands git's stdout to fn as it comes, for output too
// large to hold (history). When fn fails, git is stopped.
func stream(ctx context.Context, c call, fn func(io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := c.args
	cmd, done, err := command(ctx, c)
	if err != nil {
		return err
	}
	defer done()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	stderr := &headBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	ferr := fn(stdout)
	if ferr != nil {
		cancel()
	} else {
		// Whatever fn left unread still has to drain for git to exit.
		_, ferr = io.Copy(io.Discard, stdout)
	}
	werr := cmd.Wait()
	if ferr != nil {
		return ferr
	}
	if werr != nil {
		msg := strings.TrimSpace(stderr.b.String())
		if msg == "" {
			msg = werr.Error()
		}
		return fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return nil
}

// headBuffer keeps the first max bytes written to it and drops the rest,
// so a chatty git cannot grow planex's memory.
type headBuffer struct {
	b   bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.b.Len(); room > 0 {
		h.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// AbsolutePath is a PATH value without its relative entries, the PATH
// every process planex starts gets (its git, an agent's step). An empty
// entry, ".", "bin" or "node_modules/.bin" names a folder below the
// working directory, which is the repository under work: a program
// committed there (an ssh for git, a node for every agent CLI's
// `#!/usr/bin/env node`, a cat for a script) would run in place of the
// one meant, with planex's environment or, for a step, before any plan
// was approved and, without the sandbox, with the user's rights.
func AbsolutePath(path string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}
