package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/sandbox"
)

// Containment is how the processes of a step are held: which variables
// they may see and, with a sandbox, what they may read and write. The
// zero value passes only the default variables (see ScrubEnv) and
// contains nothing else (`--sandbox off`).
type Containment struct {
	// Sandbox is nil when processes run uncontained.
	Sandbox *sandbox.Sandbox
	// AllowEnv names more variables the user lets through (--allow-env),
	// besides those passed by default; never one of neverPass.
	AllowEnv []string
	// SecretEnv names more variables to remove whatever they are called
	// (the one --api-key-env names).
	SecretEnv []string
	// RepoDirs are the folders of the repository under work (the
	// checkout, its git directory): a PATH folder inside one of them, or
	// inside the step's own folder, is dropped from the step's PATH, as
	// the programs there are the repository's (a workflow's
	// $GITHUB_WORKSPACE/node_modules/.bin).
	RepoDirs []string
	// Read lists more directories contained processes may read although
	// a fresh /tmp or the hidden home would cover them (--sandbox-read).
	Read []string
	// Write lists more directories they may write (a build cache the
	// user chose to share: --sandbox-write).
	Write []string
	// Limits bound what each contained step may use (--sandbox-limits);
	// zero fields take the sandbox's defaults.
	Limits sandbox.Limits
	// Conceal lists directories and files contained processes may
	// neither read nor write, even below Read (the repository's session
	// store and its key, the files git's configs include or keep
	// credentials in).
	Conceal []string
	// Overlay lists files contained processes are shown, read-only, in
	// place of the real ones (the repository's git config without the
	// credentials CI systems leave there).
	Overlay []FileOverlay
	// Ignored are the user's checkout's git-ignored files, hidden from
	// contained processes but for what planex must show (ignored.go).
	Ignored Ignored

	// Network is what contained processes may reach; the zero value
	// gives each a network of its own (network.go).
	Network sandbox.Network
	// Egress is a contained network's way out; nil leaves loopback only.
	Egress *Egress
	// Forward lists more ports of a contained network that lead to
	// planex outside (a named CLI's model gateway).
	Forward []sandbox.Forward
	// account stands for the password database in tests (nil: the
	// machine's, accountHomes).
	account func(env []string) []string
	// environmentFile stands for the machine's /etc/environment in
	// tests ("": systemEnvironment).
	environmentFile string
	// passwdFile stands for /etc/passwd in tests, where the other
	// accounts' homes are looked for ("": the machine's).
	passwdFile string
	// nss stands for the machine's getent and /proc in tests that stand
	// in for /etc/passwd.
	nss nssSource
	// etcDir stands for /etc in tests, where the machine's other
	// environment files are looked for ("": systemEtc).
	etcDir string
	// homeRoot stands for /home in tests, whose folders are people's
	// homes whether the password file lists them or not ("": /home).
	homeRoot string
}

// NetworkContained reports whether prepared processes get a network of
// their own (a sandbox, and the network not opened).
func (c Containment) NetworkContained() bool {
	return c.Sandbox != nil && !c.Network.Open()
}

// Prepare readies cmd, not yet started, to run for a step: its
// environment is the part of base ScrubEnv lets through and, with a sandbox, it may write
// only the writable directories and a private home, and read the file
// system except the user's home, where only the readable directories
// stay visible. Call cleanup after the command ended.
func (c Containment) Prepare(cmd *exec.Cmd, base []string, writable, readable []string) (cleanup func(), err error) {
	return c.PrepareContext(context.Background(), cmd, base, writable, readable)
}

// PrepareContext is Prepare for a step whose context may carry its own
// log of refused network destinations (WithEgressLog).
func (c Containment) PrepareContext(ctx context.Context, cmd *exec.Cmd, base []string, writable, readable []string) (cleanup func(), err error) {
	if base == nil {
		base = os.Environ()
	}
	roots := repoRoots(append([]string{cmd.Dir}, c.RepoDirs...))
	env := pathOutside(ScrubEnv(base, c.AllowEnv, c.SecretEnv...), roots)
	programOutside(cmd, env, roots)
	if c.Sandbox == nil || c.Network.Open() {
		// The host's network is the step's: so is its way through a
		// proxy the machine needs.
		env = append(env, hostProxy(base)...)
	}
	if c.Sandbox == nil {
		cmd.Env = env
		return func() {}, nil
	}
	if err := environmentPastBound(base, c.etc()); err != nil {
		return func() {}, err
	}
	// A name present twice is judged by each of its values: the runner
	// (Node's getenv) reads the first, a shell the last.
	for _, getenv := range EnvGetters(base) {
		if err := CheckRunnerFilesUnwritable(append(append([]string(nil), writable...), c.Write...), getenv); err != nil {
			return func() {}, err
		}
	}
	current, err := c.Ignored.current(ctx)
	if err != nil {
		return func() {}, fmt.Errorf("listing the checkout's ignored files: %w", err)
	}
	ignored, err := current.masks(append(append([]string(nil), writable...), c.Write...), append(append([]string(nil), readable...), c.Read...))
	if err != nil {
		return func() {}, fmt.Errorf("hiding the checkout's ignored files: %w", err)
	}
	home, err := os.MkdirTemp("", "planex-home-")
	if err != nil {
		return func() {}, fmt.Errorf("creating the agent's home: %w", err)
	}
	others, othersShown := otherAccountHomes(c.passwd(), cmp(c.homeRoot, peopleHomes), c.nssAccounts(ctx), base)
	p := sandbox.Policy{
		Writable: append(append(append([]string(nil), writable...), c.Write...), home),
		ReadOnly: slices.Concat(readable, c.Read, othersShown),
		Hide:     withMountAliases(slices.Concat(c.hiddenFolders(base), others)),
		Limits:   c.Limits,
	}
	p.Mask = append(append(p.Mask, c.Conceal...), ignored...)
	// planex's temporary folder holds the step's folders and its egress
	// sockets: a credential folder holding it (an XDG_RUNTIME_DIR that
	// is also $TMPDIR) is not covered.
	keep := append(append(append([]string{cmd.Dir, os.TempDir(), lookup(base, "TMPDIR")}, p.Writable...), p.ReadOnly...), c.RepoDirs...)
	pkgViews, pkgKeys := c.fileViews(base, keep, append([]string{cmd.Dir}, c.RepoDirs...))
	views := withOverlayAliases(append(slices.Clone(c.Overlay), pkgViews...))
	overlays, dropOverlays, err := writeOverlays(views)
	if err != nil {
		os.RemoveAll(home)
		return func() {}, err
	}
	p.Overlay = overlays
	if sock := lookup(base, "SSH_AUTH_SOCK"); sock != "" {
		p.Mask = append(p.Mask, sock)
	}
	jobs, err := otherJobsFolders(base, keep)
	if err != nil {
		dropOverlays()
		os.RemoveAll(home)
		return func() {}, err
	}
	p.Mask = append(p.Mask, jobs.Mask...)
	p.Hide = append(p.Hide, withMountAliases(jobs.Hide)...)
	p.ReadOnly = append(p.ReadOnly, jobs.Show...)
	for _, b := range envReadings(base) {
		p.Mask = append(p.Mask, engineSockets(b)...)
		p.Mask = append(p.Mask, credentialFiles(b, env, keep)...)
		p.Mask = append(p.Mask, keyFilesByContent(b, env, keep, overlayPaths(views), p.Hide)...)
		p.Mask = append(p.Mask, userGitConfigKeys(b, keep)...)
		p.Mask = append(p.Mask, codespaceSecrets(b, keep)...)
	}
	p.Mask = append(p.Mask, jenkinsAgentSecrets("/proc", os.Getppid())...)
	p.Mask = append(p.Mask, runnerConfigsAbove("/proc", os.Getppid())...)
	p.Mask = append(p.Mask, pkgKeys...)
	p.Mask = append(p.Mask, maskAliases(p.Mask)...)
	cmd.Env = privateHome(env, home)
	stopNet, err := c.network(ctx, cmd, &p)
	if err != nil {
		dropOverlays()
		os.RemoveAll(home)
		return func() {}, err
	}
	done, err := c.Sandbox.Wrap(cmd, p)
	if err != nil {
		stopNet()
		dropOverlays()
		os.RemoveAll(home)
		return func() {}, fmt.Errorf("containing the agent: %w", err)
	}
	return func() { done(); stopNet(); dropOverlays(); os.RemoveAll(home) }, nil
}

// fileViews are the overlays showing the machine's configuration files
// that hold credentials without them (package managers', Maven's, the
// environment files, the proxy's and package repositories'), and the
// files and folders to cover: the keys they name, apt's auth files,
// systemd's unit folders. keep are the folders the step must see; work
// are the folders it works in (Cargo reads the configurations above
// them).
func (c Containment) fileViews(base, keep, work []string) (views []FileOverlay, masks []string) {
	etc := c.etc()
	sysViews, masks := machineConfigViews(etc, c.AllowEnv, c.SecretEnv, keep)
	views = slices.Concat(environmentFileViews(etc, c.environmentFile, c.AllowEnv, c.SecretEnv), sysViews)
	// A name present twice leads each reader to one of its values: the
	// configurations of both are shown filtered.
	for _, b := range envReadings(base) {
		pkgViews, pkgKeys := packageConfigViews(b)
		mvnViews, mvnKeys := mavenConfigViews(b)
		condaViews, condaKeys := condaConfigViews(b)
		rViews, rKeys := sourcedViews(rSiteEnvirons(b), c.AllowEnv, c.SecretEnv, keep)
		views = slices.Concat(views, pkgViews, mvnViews, condaViews, rViews, cargoConfigViews(b, work), nugetCommonDataViews(b))
		masks = slices.Concat(masks, pkgKeys, mvnKeys, condaKeys, rKeys)
	}
	return uniqueOverlays(views), masks
}

// etc is the machine's /etc (a test's stand-in).
func (c Containment) etc() string {
	if c.etcDir == "" {
		return systemEtc
	}
	return c.etcDir
}

// uniqueOverlays are views with each path once, its first overlay: the
// views of one file, reached through two readings of the environment,
// are alike.
func uniqueOverlays(views []FileOverlay) []FileOverlay {
	var out []FileOverlay
	for _, v := range views {
		if !slices.ContainsFunc(out, func(o FileOverlay) bool { return o.Path == v.Path }) {
			out = append(out, v)
		}
	}
	return out
}

// runnerCommandVars name the files the Actions runner reads once the
// step running planex has ended: variables for every later step
// (GITHUB_ENV, where a BASH_ENV= line runs a script in each of them with
// the job's secrets), PATH entries, planex's outputs, its post-step
// state and the job summary.
var runnerCommandVars = []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"}

// CheckRunnerFilesUnwritable refuses writable folders (a step's grants,
// --sandbox-write) that hold a file runnerCommandVars name (getenv reads
// the environment planex runs in): the
// variables never reach an agent, but a contained agent that can write
// the folder writes the file by its guessable path, or renames the
// folder away and makes a new one in its place (no cover mounted inside
// a writable folder stops that). Paths are compared with links resolved.
func CheckRunnerFilesUnwritable(writable []string, getenv func(string) string) error {
	info := ""
	for _, name := range runnerCommandVars {
		f := getenv(name)
		if !filepath.IsAbs(f) {
			continue
		}
		if info == "" {
			info = readMountinfo()
		}
		// The file by every name: its own, links resolved, and those the
		// mount table gives it (its folder bind-mounted from another).
		names := append([]string{resolvedPath(f)}, hiddenAliases(info, []string{f})...)
		for _, w := range writable {
			// A relative folder is the sandbox's from planex's own
			// working folder (filepath.Abs), so it is judged from there.
			abs, err := filepath.Abs(w)
			if err != nil {
				return fmt.Errorf("locating the writable folder %s: %w", w, err)
			}
			rw := resolvedPath(abs)
			if slices.ContainsFunc(names, func(real string) bool { return real == rw || strings.HasPrefix(real, strings.TrimSuffix(rw, "/")+"/") }) {
				return &RunnerFileWritableError{Folder: w, Var: name, File: f}
			}
		}
	}
	return nil
}

// resolvedPath is p clean with its links resolved, as far as it exists.
func resolvedPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == "/" || dir == "." {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// RunnerFileWritableError says that a folder a contained step may write
// holds a file the runner reads after planex's step.
type RunnerFileWritableError struct {
	Folder, Var, File string
}

func (e *RunnerFileWritableError) Error() string {
	return fmt.Sprintf("the writable folder %s holds $%s (%s), which the Actions runner reads after this step: a contained agent could write there and take over the job's later steps (a BASH_ENV= line in $GITHUB_ENV runs its script in each); give --sandbox-write a folder that does not hold the runner's temporary folder", e.Folder, e.Var, e.File)
}

// engineSockets are the Unix sockets of the container engines env names
// (DOCKER_HOST, CONTAINER_HOST for Podman) when they lie away from the
// default places the sandbox covers anyway: a rootful engine's socket
// moved to /srv or /var/lib, or a VM's (Colima, Lima) beside it. Whoever
// connects there starts containers as the engine's owner, with the
// host's / mounted if asked, and with a network of their own.
func engineSockets(env []string) []string {
	var out []string
	for _, name := range []string{"DOCKER_HOST", "CONTAINER_HOST"} {
		if p, ok := strings.CutPrefix(lookup(env, name), "unix://"); ok && filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// FileOverlay is a file contained processes see at Path instead of the
// real one: Content, read-only.
type FileOverlay struct {
	Path    string
	Content []byte
}

// writeOverlays writes each overlay's content to a file of a fresh
// folder, for the sandbox to show; drop removes the folder.
func writeOverlays(overlays []FileOverlay) (out []sandbox.Overlay, drop func(), err error) {
	if len(overlays) == 0 {
		return nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "planex-overlay-")
	if err != nil {
		return nil, func() {}, fmt.Errorf("creating the folder of the agent's overlays: %w", err)
	}
	drop = func() { os.RemoveAll(dir) }
	for i, o := range overlays {
		src := filepath.Join(dir, strconv.Itoa(i))
		// Readable by the program's uid, which is not planex's as root.
		if err := os.WriteFile(src, o.Content, 0o644); err != nil {
			drop()
			return nil, func() {}, fmt.Errorf("writing the overlay of %s: %w", o.Path, err)
		}
		out = append(out, sandbox.Overlay{Path: o.Path, Source: src})
	}
	return out, drop, nil
}

// homes are the home folders to hide (Homes), the password database's
// answer from c.account where a test sets it.
// passwd is the password file other accounts' homes are read from.
func (c Containment) passwd() string {
	if c.passwdFile != "" {
		return c.passwdFile
	}
	return machinePasswd
}

// nssAccounts are the password database's lines NSS adds to the
// password file (nssAccounts): the machine's, or a test's getent and
// processes where the test stands in for the password file (none
// where it gives no getent).
func (c Containment) nssAccounts(ctx context.Context) []byte {
	if c.passwdFile != "" {
		return nssAccounts(ctx, c.passwdFile, c.nss)
	}
	return nssAccounts(ctx, machinePasswd, machineNSS())
}

func (c Containment) homes(env []string) []string {
	if c.account != nil {
		return homesOf(env, c.account)
	}
	return Homes(env)
}

// CITempDirs are the temporary folders CI systems keep beside a job,
// hidden like a home: what the job's earlier steps and the CI system
// left there is theirs, not the agent's, and secrets live there.
//   - $RUNNER_TEMP (GitHub Actions): actions/checkout v6 keeps the job's
//     token there (git-credentials-<uuid>.config) and its ssh key, and
//     the runner its command files; on a self-hosted runner it often
//     lies outside every home.
//   - $CI_PROJECT_DIR.tmp (GitLab CI): every CI/CD variable of type File
//     (a kubeconfig, a cloud key) is a file there.
//   - $WORKSPACE@tmp (Jenkins): withCredentials writes secret files
//     there.
//   - $AGENT_TEMPDIRECTORY (Azure Pipelines): the DownloadSecureFile task
//     puts secure files there.
//
// planex's task worktrees, when below one, are bound again (writable)
// over the cover.
func CITempDirs(env []string) []string {
	var out []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		// As the kernel walks it: a ".." after a link leads below the
		// link's target (walkedAbs), not where the name reads.
		if p, err := walkedAbs(p); err == nil && p != "/" {
			out = append(out, p)
		}
	}
	add(lookup(env, "RUNNER_TEMP"))
	if d := lookup(env, "CI_PROJECT_DIR"); filepath.IsAbs(d) && lookup(env, "GITLAB_CI") != "" {
		if d, err := walkedAbs(d); err == nil {
			add(d + ".tmp")
		}
	}
	if d := lookup(env, "WORKSPACE"); filepath.IsAbs(d) && lookup(env, "JENKINS_URL") != "" {
		if d, err := walkedAbs(d); err == nil {
			add(d + "@tmp")
		}
	}
	if strings.EqualFold(lookup(env, "TF_BUILD"), "true") {
		add(lookup(env, "AGENT_TEMPDIRECTORY"))
	}
	return out
}

// HiddenTempDirs are the temporary folders the sandbox hides like a
// home: the CI systems' (CITempDirs) and $TMPDIR, as the environment
// names it and as planex itself uses it (os.TempDir), where that lies
// outside the places the sandbox covers anyway (/tmp, /var/tmp,
// /dev/shm). planex keeps there each step's private folder, the agents'
// homes, its egress sockets and its map cache, and other programs of the
// same user their own files: a step of planex run as an ordinary user
// (the same uid as every other step) could read them all. The folders a
// step is granted below it are bound again over the cover. A $TMPDIR of
// / or one holding the system's own folders (/usr, /etc, /var, …) is
// left visible: covering it would hide the programs themselves. The
// folders TMP and TEMP name are hidden too: Node.js takes its temporary
// folder from them when TMPDIR is not set, and Python from TEMP and TMP,
// so a machine that sets them (a Windows habit of CI images) has its
// jobs' tools keep their temporary files there.
func HiddenTempDirs(env []string) []string {
	out := CITempDirs(env)
	for _, d := range []string{lookup(env, "TMPDIR"), os.TempDir(), lookup(env, "TMP"), lookup(env, "TEMP")} {
		if !filepath.IsAbs(d) {
			continue
		}
		d, err := walkedAbs(d)
		if err != nil {
			continue
		}
		if hideableTemp(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// systemDirs are folders programs need: a temporary folder that is one
// of them, or holds one, is not hidden.
var systemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/nix", "/opt", "/proc", "/run", "/sbin", "/snap", "/sys", "/usr", "/var"}

// hideableTemp reports whether the clean absolute folder d may be
// hidden as a temporary folder: not one the sandbox covers already, not
// /, not a system folder or one above it.
func hideableTemp(d string) bool {
	for _, covered := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if d == covered || strings.HasPrefix(d, covered+"/") {
			return false
		}
	}
	for _, sys := range systemDirs {
		if d == "/" || d == sys || strings.HasPrefix(sys, d+"/") {
			return false
		}
	}
	return true
}

// runnerSecretNames are what a runner's installation keeps that acts for
// it or holds what its admin gave every job: its registration and OAuth
// client (also the copies a migration leaves, .runner_migrated and
// .credentials_migrated), its private key, its credential store and
// client certificate settings, the .env its start script reads into
// every job's environment (where an admin puts a proxy's password or a
// cloud key for all jobs), and its diagnostic logs.
var runnerSecretNames = []string{
	".runner", ".runner_migrated", ".credentials", ".credentials_migrated", ".credentials_rsaparams",
	".credential_store", ".certificates", ".env", "_diag",
	// An Azure Pipelines agent (the runner's forebear) keeps the same
	// credentials beside its registration, .agent, and its proxy's
	// password in .proxycredentials.
	".agent", ".proxycredentials",
}

// runnerMarkers name a runner's registration file: the Actions runner's
// and the Azure Pipelines agent's.
var runnerMarkers = []string{".runner", ".agent"}

// workspaceVars name the job's workspace, where the runner's folder is
// looked for above: the Actions runner's, then Azure Pipelines'.
var workspaceVars = []string{"RUNNER_WORKSPACE", "GITHUB_WORKSPACE", "AGENT_BUILDDIRECTORY", "PIPELINE_WORKSPACE", "BUILD_SOURCESDIRECTORY"}

// runnerOwnFiles are the files of a self-hosted Actions runner's own
// installation (runnerSecretNames) that would let a process act as the
// runner or hold what it gives every job. The runner lives in the folder above its work folder, which
// holds the job's workspace; on a self-hosted machine it is often
// outside every home, and an ordinary user's agent runs as the runner's
// own uid. Found by looking for .runner in the folders above the
// workspace (a few levels), never by a name planex assumes.
func runnerOwnFiles(env, keep []string) ([]string, error) {
	// The workspace the environment names, then the step's own folders
	// (its working folder, the checkout): planex started through sudo,
	// whose env_reset drops the runner's variables, has none named.
	var places []string
	for _, name := range workspaceVars {
		if ws := lookup(env, name); ws != "" {
			places = append(places, ws)
			break
		}
	}
	places = append(places, keep...)
	var ws string
	for _, place := range places {
		if !filepath.IsAbs(place) {
			continue
		}
		place = filepath.Clean(place)
		if ws == "" {
			ws = place
		}
		if root := runnerRootOver(place); root != "" {
			return runnerRootFiles(env, root, place, keep)
		}
	}
	if ws == "" {
		return nil, nil
	}
	// A work folder elsewhere (config.sh --work /mnt/work): the runner
	// is found as planex's ancestor.
	if root := runnerRootAbove("/proc", os.Getppid()); root != "" {
		out, err := runnerRootFiles(env, root, ws, keep)
		if err != nil {
			return nil, err
		}
		moved, err := movedWorkFolderJobs(env, keep)
		if err != nil {
			return nil, err
		}
		for _, p := range moved {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	return movedWorkFolderJobs(env, keep)
}

// runnerRootOver is the runner installation found in the few folders
// above place (isRunnerRoot), "" where there is none: a shallow
// workspace (a work folder /mnt/work) reaches / first.
func runnerRootOver(place string) string {
	dir := place
	for range 4 {
		if dir = filepath.Dir(dir); dir == "/" {
			return ""
		}
		if isRunnerRoot(dir) {
			return dir
		}
	}
	return ""
}

// runnerRootFiles are what the runner installed in root keeps for
// itself, what the runners beside it keep, the earlier jobs' folders
// of its work folder, and the temporary folder there (_temp), hidden
// wherever RUNNER_TEMP points: a workflow's env: may move the variable
// while the runner keeps its step scripts (secrets expanded in them),
// actions/checkout's token file and the file commands in the folder.
func runnerRootFiles(env []string, root, ws string, keep []string) ([]string, error) {
	siblings, err := siblingRunners(root, ws)
	if err != nil {
		return nil, err
	}
	kept := append(slices.Clone(keep), ws, lookup(env, "RUNNER_TOOL_CACHE"), lookup(env, "AGENT_TOOLSDIRECTORY"))
	work := runnerWorkFolder(root)
	jobs, err := earlierJobs(work, ws, kept)
	if err != nil {
		return nil, err
	}
	if temp := filepath.Join(work, "_temp"); isDirectory(temp) && !holdsAny(temp, kept) && !keptFolderHolds(kept, temp) {
		jobs = append(jobs, temp)
	}
	return slices.Concat(runnerSecrets(root), siblings, jobs), nil
}

// movedWorkFolderJobs are the earlier jobs' folders of an Actions runner
// whose installation is not above the workspace: a runner configured
// with a work folder elsewhere (config.sh --work /mnt/work, a data disk)
// puts each repository's checkout in that folder, and planex, which
// looked for the runner's registration only in the folders above the
// workspace, hid none of them. The runner names a job's folder in that
// work folder RUNNER_WORKSPACE, so the work folder is the one holding it.
func movedWorkFolderJobs(env, keep []string) ([]string, error) {
	rw := lookup(env, "RUNNER_WORKSPACE")
	if lookup(env, "GITHUB_ACTIONS") != "true" || !filepath.IsAbs(rw) {
		return nil, nil
	}
	rw = filepath.Clean(rw)
	work := filepath.Dir(rw)
	if !hideableTemp(work) {
		return nil, nil
	}
	kept := append(slices.Clone(keep), rw, lookup(env, "RUNNER_TOOL_CACHE"), lookup(env, "RUNNER_TEMP"))
	return earlierJobs(work, rw, kept)
}

// isRunnerRoot reports whether dir holds a runner's registration, a
// regular .runner file.
func isRunnerRoot(dir string) bool {
	return slices.ContainsFunc(runnerMarkers, func(name string) bool {
		fi, err := os.Lstat(filepath.Join(dir, name))
		return err == nil && fi.Mode().IsRegular()
	})
}

func runnerSecrets(root string) []string {
	out := make([]string, 0, len(runnerSecretNames))
	for _, name := range runnerSecretNames {
		out = append(out, filepath.Join(root, name))
	}
	return out
}

// maxSiblingEntries bounds how many entries of a folder are looked at
// for other runners or other jobs' folders: each one hidden is a mount
// of the step's.
const maxSiblingEntries = 4096

// siblingEntries lists the entries of dir, in the order the file system
// gives them: none for a folder that cannot be read (nothing there to
// hide), an error wrapping ErrPastBound for one holding more than
// maxSiblingEntries — the entries past the bound would be shown whole.
func siblingEntries(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	entries, _ := f.ReadDir(maxSiblingEntries + 1)
	if len(entries) > maxSiblingEntries {
		return nil, fmt.Errorf("%s holds more than %d entries, planex looks at %d to hide other jobs' and runners' folders: remove the ones no longer used: %w", dir, maxSiblingEntries, maxSiblingEntries, ErrPastBound)
	}
	return entries, nil
}

// siblingRunners are what other runners installed beside root (a
// machine running several, as one user) keep that a contained agent of
// the same uid could use: their own credentials (to act as them and take
// other repositories' jobs) and their work folders, which hold other
// jobs' checkouts and temporary folders (actions/checkout's token file
// of a job running there now). A work folder holding this job's
// workspace (ws) is left alone.
func siblingRunners(root, ws string) ([]string, error) {
	parent := filepath.Dir(root)
	entries, err := siblingEntries(parent)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		dir := filepath.Join(parent, e.Name())
		if dir == root || !e.IsDir() || !isRunnerRoot(dir) {
			continue
		}
		out = append(out, runnerSecrets(dir)...)
		work := runnerWorkFolder(dir)
		if _, err := os.Lstat(work); err != nil && within(work, dir) && !within(ws, dir) {
			// A runner that has run no job yet has no work folder: the
			// one it makes with its first job, during this step maybe,
			// would show. Its whole installation is covered instead.
			out = append(out, dir)
			continue
		}
		if work != ws && !strings.HasPrefix(ws, work+"/") {
			out = append(out, work)
		}
	}
	return out, nil
}

// runnerWorkFolder is the work folder the runner in root was configured
// with (the workFolder of .runner, or of an Azure agent's .agent,
// relative to root unless absolute), _work by default.
func runnerWorkFolder(root string) string {
	work := "_work"
	for _, name := range runnerMarkers {
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
		f.Close()
		var reg struct {
			WorkFolder string `json:"workFolder"`
		}
		// The runner may write its files with a byte order mark.
		if json.Unmarshal(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), &reg) == nil && reg.WorkFolder != "" {
			work = reg.WorkFolder
		}
		break
	}
	if !filepath.IsAbs(work) {
		work = filepath.Join(root, work)
	}
	return filepath.Clean(work)
}

// privateHome points HOME and the XDG folders at a fresh directory the
// process may write, and its temporary files at the sandbox's own /tmp.
func privateHome(env []string, home string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+home, "TMPDIR=/tmp")
}

// hiddenFolders are the homes and temporary folders base names, by each
// of its readings (envReadings).
func (c Containment) hiddenFolders(base []string) []string {
	var out []string
	for _, b := range envReadings(base) {
		out = append(append(out, c.homes(b)...), HiddenTempDirs(b)...)
	}
	return out
}

// envReadings are the ways env is read where a name occurs in it more
// than once: as lookup reads it (the last value: dash, and the
// environment Go's exec hands a program), and, when there are
// duplicates, with the first value of each (glibc's and Go's getenv),
// so that what either value names is covered.
func envReadings(env []string) [][]string {
	seen := map[string]bool{}
	var firsts []string
	dup := false
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if seen[name] {
			dup = true
			continue
		}
		seen[name] = true
		firsts = append(firsts, kv)
	}
	if !dup {
		return [][]string{env}
	}
	return [][]string{env, firsts}
}

// EnvGetters are env's readings (envReadings) as getenv functions: one
// when no name occurs twice, the last values and the first values
// otherwise. A reader of planex's environment that names files to hide
// or refuse asks each of them.
func EnvGetters(env []string) []func(string) string {
	var out []func(string) string
	for _, b := range envReadings(env) {
		out = append(out, func(k string) string { return lookup(b, k) })
	}
	return out
}

func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Secrets maps the value of every variable planex holds and does not pass
// on to its name (see SecretValues); values that name an existing file
// (absolute, or relative to planex's working directory, such as the
// Action's mcp-config path) are left out.
func (c Containment) Secrets() map[string]string {
	return heldValues(os.Environ(), c.AllowEnv, c.SecretEnv, func(p string) bool {
		if strings.ContainsAny(p, "\x00\n") {
			return false
		}
		_, err := os.Lstat(p)
		return err == nil
	})
}

// repoRoots are dirs resolved, without empty names and /.
func repoRoots(dirs []string) []string {
	var roots []string
	for _, d := range dirs {
		if r := realPath(d); d != "" && r != "/" {
			roots = append(roots, r)
		}
	}
	return roots
}

// inRoots reports whether p, resolved, lies at or below one of roots.
func inRoots(p string, roots []string) bool {
	p = realPath(p)
	return slices.ContainsFunc(roots, func(r string) bool { return within(p, r) })
}

// programOutside finds cmd's program again on env's PATH when planex's
// own lookup (exec.Command's, on planex's PATH) took it from a folder of
// roots: "sh" from a committed node_modules/.bin/sh.
func programOutside(cmd *exec.Cmd, env []string, roots []string) {
	if cmd.Path == "" || !inRoots(cmd.Path, roots) || !slices.Contains(filepath.SplitList(os.Getenv("PATH")), filepath.Dir(cmd.Path)) {
		return
	}
	name := filepath.Base(cmd.Path)
	for _, d := range filepath.SplitList(lookup(env, "PATH")) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && filepath.IsAbs(p) {
			cmd.Path = p
			return
		}
	}
	cmd.Err = fmt.Errorf("%s: found only in %s, inside the repository, whose programs steps do not run", name, filepath.Dir(cmd.Path))
}

// pathOutside drops from env's PATH the folders at or below one of roots.
func pathOutside(env []string, roots []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		value, isPath := strings.CutPrefix(kv, "PATH=")
		if isPath {
			var keep []string
			for _, d := range filepath.SplitList(value) {
				if !inRoots(d, roots) {
					keep = append(keep, d)
				}
			}
			kv = "PATH=" + strings.Join(keep, string(filepath.ListSeparator))
		}
		out = append(out, kv)
	}
	return out
}
