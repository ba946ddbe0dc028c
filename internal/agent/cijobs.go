package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The folders where CI systems keep other jobs' work beside this job's,
// and a codespace its secrets beside the repository: all of them the
// same uid's as the contained program of planex run there (an ordinary
// user), and readable where they lie outside the hidden home.

// otherJobs are what the step covers of other jobs' and runners' folders
// beside this job's: paths covered one by one (Mask), folders hidden
// whole (Hide) and, within those, the folders shown again (Show: this
// job's own).
type otherJobs struct {
	Mask, Hide, Show []string
}

// otherJobsFolders are, for each reading of base (planex's environment,
// envReadings), the folders of other jobs and runners beside this job's
// workspace that the step covers: the runner's own files and earlier
// jobs' folders, Jenkins' other jobs, a builds folder's other checkouts.
// A folder among them holding more entries than planex looks at refuses
// the step (ErrPastBound) rather than showing the rest.
//
// A CI agent running jobs at once (Jenkins' executors, a GitLab
// runner's concurrent jobs) starts a job while the step runs, its folder
// made after planex listed the others: the folder holding the jobs'
// folders is hidden whole instead, and this job's shown again, wherever
// the step does not keep that folder itself; what else it keeps there
// is shown again too (jobsShown).
func otherJobsFolders(base, keep []string) (otherJobs, error) {
	var out otherJobs
	for _, b := range envReadings(base) {
		paths, err := runnerOwnFiles(b, keep)
		if err != nil {
			return otherJobs{}, fmt.Errorf("hiding other jobs' folders: %w", err)
		}
		out.Mask = append(out.Mask, paths...)
		for _, find := range []func(env, keep []string) ([]string, error){jenkinsOtherJobs, buildsDirNeighbours, teamcityOtherCheckouts} {
			paths, err := find(b, keep)
			if err != nil {
				return otherJobs{}, fmt.Errorf("hiding other jobs' folders: %w", err)
			}
			out.Mask = append(out.Mask, paths...)
		}
		for _, j := range jobFolders(b) {
			if show, ok := jobsShown(j.root, j.own, keep, isDirectory); ok {
				out.Hide, out.Show = append(out.Hide, j.root), append(out.Show, show...)
			}
		}
	}
	return out, nil
}

// jobFolder is a folder holding every job's folder (root) and the one
// of this job's (own) within it.
type jobFolder struct{ root, own string }

// jobFolders are the folders holding this CI agent's jobs' folders that
// jenkinsOtherJobs and buildsDirNeighbours cover entry by entry.
func jobFolders(env []string) []jobFolder {
	var out []jobFolder
	if ws, root := jenkinsRoot(env); root != "" {
		out = append(out, jobFolder{root, ws})
	}
	for _, b := range buildsDirs {
		if root, project := buildsRoot(env, b.marker, b.root, b.checkout); root != "" {
			out = append(out, jobFolder{root, project})
		}
	}
	if root, own := teamcityWork(env); root != "" {
		out = append(out, jobFolder{root, own})
	}
	return out
}

// teamcityWork is a TeamCity agent's work folder and the build's
// checkout in it, as the build's properties file (TEAMCITY_BUILD_
// PROPERTIES_FILE) names them (agent.work.dir or teamcity.agent.work.dir,
// teamcity.build.checkoutDir), when the folder lies outside the places
// hidden anyway.
func teamcityWork(env []string) (root, own string) {
	props := lookup(env, "TEAMCITY_BUILD_PROPERTIES_FILE")
	if !filepath.IsAbs(props) {
		return "", ""
	}
	for _, line := range readLines(props) {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k, v = strings.TrimSpace(k), javaPropertyValue(v); k {
		case "agent.work.dir", "teamcity.agent.work.dir":
			root = v
		case "teamcity.build.checkoutDir":
			own = v
		}
	}
	if !filepath.IsAbs(root) || !filepath.IsAbs(own) {
		return "", ""
	}
	root, own = filepath.Clean(root), filepath.Clean(own)
	if !strings.HasPrefix(own, root+"/") || !hideableTemp(root) {
		return "", ""
	}
	return root, own
}

// teamcityOtherCheckouts are the other build configurations' checkouts
// in a TeamCity agent's work folder (teamcityWork): the agent keeps
// every one it ran, with what its builds left, readable by the user
// builds run as. Everything there but the way to this build's checkout
// and to a path of keep is covered.
func teamcityOtherCheckouts(env, keep []string) ([]string, error) {
	root, own := teamcityWork(env)
	if root == "" {
		return nil, nil
	}
	return coverBeside(nil, root, append(slices.Clone(keep), own), 0)
}

// jobsShown are the folders shown again in root, a folder of jobs'
// folders hidden whole: own, and each path of keep within it outside
// own that is a folder (a cache or a temporary folder granted beside
// the jobs'; one that does not exist has nothing to show), so a
// job another executor starts there while the step runs stays hidden
// too. ok is false where the step keeps root itself (a grant of the
// builds folder: it is covered entry by entry instead). A folder of
// keep holding root is bound first and root hidden after (the
// sandbox's order for a hidden folder below a bound one). Paths are
// compared as written and with their links resolved; isDir tells a
// folder.
func jobsShown(root, own string, keep []string, isDir func(string) bool) (show []string, ok bool) {
	show = []string{own}
	for _, r := range []string{root, resolvedPath(root)} {
		for _, k := range keep {
			if k == "" {
				continue
			}
			for _, kk := range []string{filepath.Clean(k), resolvedPath(k)} {
				switch {
				case kk == r:
					return nil, false
				case within(kk, r) && !within(kk, own) && !within(kk, resolvedPath(own)) && !slices.Contains(show, kk) && isDir(kk):
					show = append(show, kk)
				}
			}
		}
	}
	return show, true
}

// jenkinsRoot is a Jenkins job's workspace and the folder named
// workspace holding every job's (<root>/workspace/<job>), when the job
// runs on Jenkins there, outside the places hidden anyway.
func jenkinsRoot(env []string) (ws, root string) {
	ws = lookup(env, "WORKSPACE")
	if lookup(env, "JENKINS_URL") == "" || !filepath.IsAbs(ws) {
		return "", ""
	}
	ws = filepath.Clean(ws)
	root = filepath.Dir(ws)
	if filepath.Base(root) != "workspace" || !hideableTemp(root) {
		return "", ""
	}
	return ws, root
}

// jenkinsOtherJobs are the other jobs' folders beside a Jenkins job's
// workspace: an agent (or the built-in node) keeps every job's workspace
// in one folder named workspace (<root>/workspace/<job>), and with it
// each running job's <job>@tmp, where withCredentials writes the secret
// files of that job while it runs; all of them are the agent user's,
// whose uid a contained program of planex run there has. Where that
// root lies outside the home (hidden anyway) a program read another
// job's checkout and, with two executors, the secret files of the job
// running beside it. Every entry of the workspace folder but the one
// holding this job's workspace or a path of keep is covered; at most
// maxSiblingEntries are looked at. Only a folder named workspace is
// taken for Jenkins' (a custom workspace elsewhere is left alone).
func jenkinsOtherJobs(env, keep []string) ([]string, error) {
	ws, root := jenkinsRoot(env)
	if root == "" {
		return nil, nil
	}
	entries, err := siblingEntries(root)
	if err != nil {
		return nil, err
	}
	kept := append(slices.Clone(keep), ws)
	var out []string
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		// This job's @tmp is hidden already (CITempDirs).
		if e.Type()&os.ModeSymlink == 0 && dir != ws+"@tmp" && !holdsAny(dir, kept) {
			out = append(out, dir)
		}
	}
	return out, nil
}

// codespaceSecrets is the folder where a GitHub Codespace keeps its
// shared state beside the repositories (/workspaces/.codespaces), among
// it shared/.env-secrets: the codespace's GitHub token and every
// Codespaces secret of the user's, readable by the codespace's user,
// whose uid planex run in its terminal and the contained program have.
// The repository is checked out beside it (/workspaces/<repo>), outside
// the home, so a program read the token there although the variables
// stay with planex. Found beside the folder CODESPACE_VSCODE_FOLDER
// names, in a codespace (CODESPACES=true) only; one holding a path of
// keep stays.
func codespaceSecrets(env, keep []string) []string {
	if lookup(env, "CODESPACES") != "true" {
		return nil
	}
	root := "/workspaces"
	if d := lookup(env, "CODESPACE_VSCODE_FOLDER"); filepath.IsAbs(d) {
		root = filepath.Dir(filepath.Clean(d))
	}
	shared := filepath.Join(root, ".codespaces")
	if holdsAny(shared, keep) {
		return nil
	}
	return []string{shared}
}

// buildsDirs are the CI systems whose agents keep every job's checkout
// in one builds folder: the variable saying the job runs there, the
// builds folder's and the job's checkout's.
// The job's own temporary folder beside its checkout, which CITempDirs
// hides already, is named by tmp.
var buildsDirs = []struct{ marker, root, checkout, tmp string }{
	// A GitLab runner's shell executor: <builds>/<runner>/<n>/<group>/
	// <project>, beside <project>.tmp, which holds the File variables of
	// a job while it runs.
	{"GITLAB_CI", "CI_BUILDS_DIR", "CI_PROJECT_DIR", ".tmp"},
	// A Buildkite agent: <build path>/<agent>/<org>/<pipeline>.
	{"BUILDKITE", "BUILDKITE_BUILD_PATH", "BUILDKITE_BUILD_CHECKOUT_PATH", ""},
}

// buildsDirNeighbours are the other jobs' folders in the builds folder
// of the CI system the job runs on (buildsDirs), all of them its agent
// user's, whose uid a contained program of planex run there has. Where
// that folder lies outside the home (GitLab's builds_dir set to /builds,
// a Buildkite build path on a data disk), the program read other
// projects' checkouts and a job's File variables beside it. Everything
// there but the way to this job's checkout (and GitLab's .tmp beside
// it, hidden already) and to a path of keep is covered.
func buildsDirNeighbours(env, keep []string) ([]string, error) {
	var out []string
	for _, b := range buildsDirs {
		root, project := buildsRoot(env, b.marker, b.root, b.checkout)
		if root == "" {
			continue
		}
		kept := append(slices.Clone(keep), project)
		if b.tmp != "" {
			kept = append(kept, project+b.tmp)
		}
		var err error
		if out, err = coverBeside(out, root, kept, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// buildsRoot is the builds folder and the job's checkout in it the
// variables root and checkout name, when marker says the job runs on
// that CI system and the folder lies outside the places hidden anyway.
func buildsRoot(env []string, marker, root, checkout string) (string, string) {
	r, project := lookup(env, root), lookup(env, checkout)
	if lookup(env, marker) == "" || !filepath.IsAbs(r) || !filepath.IsAbs(project) {
		return "", ""
	}
	r, project = filepath.Clean(r), filepath.Clean(project)
	if !strings.HasPrefix(project, r+"/") || !hideableTemp(r) {
		return "", ""
	}
	return r, project
}

// coverBeside appends to out every entry of dir that is not a link, not
// a path of keep and holds none, and goes on into those that hold one,
// at most maxBesideDepth folders down and maxSiblingEntries entries a
// folder.
func coverBeside(out []string, dir string, keep []string, depth int) ([]string, error) {
	entries, err := siblingEntries(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0 || slices.Contains(keep, p):
		case holdsAny(p, keep):
			if depth < maxBesideDepth && e.IsDir() {
				if out, err = coverBeside(out, p, keep, depth+1); err != nil {
					return nil, err
				}
			}
		default:
			out = append(out, p)
		}
	}
	return out, nil
}

// maxBesideDepth bounds how deep coverBeside follows the way to a kept
// path.
const maxBesideDepth = 8

// runnerFolders are the folders a runner makes in its work folder for
// itself, beside the jobs' workspaces: the actions a job downloads, the
// tool cache, the temporary folder (hidden on its own), the workspaces'
// map and its updates; an Azure agent's tasks and its map of sources.
var runnerFolders = []string{"_actions", "_tool", "_temp", "_PipelineMapping", "_update", "_tasks", "SourceRootMapping"}

// earlierJobs are the entries of the runner's own work folder that hold
// another job's workspace: a self-hosted runner keeps the checkout of
// every repository it ran a job for (_work/<repository>), with what that
// job built and left there (its .env, its build's output, a token
// actions/checkout persisted when its job was cancelled before cleaning
// up), and an organisation's runner serves many repositories. The folder
// holding this job's workspace (ws), the runner's own folders and any
// folder holding a path of keep (the workspace, the step's working
// folder and grants, the tool cache) stay visible. At most maxSiblingEntries are looked at.
func earlierJobs(work, ws string, keep []string) ([]string, error) {
	if !strings.HasPrefix(ws, work+"/") {
		return nil, nil
	}
	entries, err := siblingEntries(work)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		dir := filepath.Join(work, e.Name())
		if slices.Contains(runnerFolders, e.Name()) || holdsAny(dir, keep) {
			continue
		}
		if e.Type()&os.ModeSymlink != 0 {
			if t := linkedJobFolder(dir, work, ws, keep); t != "" {
				out = append(out, t)
			}
			continue
		}
		if e.IsDir() {
			out = append(out, dir)
		}
	}
	return out, nil
}

// programDirs are the folders that hold the system's programs and
// settings: a link in a work folder leading into one is no job's folder.
var programDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/nix", "/proc", "/sbin", "/snap", "/sys", "/usr"}

// linkedJobFolder is the folder a link in a runner's work folder leads
// to, when it is a job's folder to hide: a runner whose admin moved a
// repository's checkout to another disk (_work/big -> /data/big), or an
// earlier job that left a link there, keeps another job's files at the
// link's end, which the sandbox showed through the link and at its
// target alike. The target is covered (the sandbox covers what a path
// leads to), unless it is no folder, is or holds a folder the sandbox
// replaces or the system needs (hideableTemp), lies among the system's
// programs, in the work folder (whose own entries are judged as they
// are) or in this job's workspace ws, or is or holds a path of keep
// (the step's folders, its grants), compared with links resolved too:
// "" then.
func linkedJobFolder(link, work, ws string, keep []string) string {
	t, err := filepath.EvalSymlinks(link)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(t); err != nil || !fi.IsDir() || !hideableTemp(t) {
		return ""
	}
	for _, d := range append(slices.Clone(programDirs), work, resolvedPath(work), ws, resolvedPath(ws)) {
		if t == d || strings.HasPrefix(t, d+"/") {
			return ""
		}
	}
	for _, k := range keep {
		if k != "" && (holdsAny(t, []string{k}) || holdsAny(t, []string{resolvedPath(k)})) {
			return ""
		}
	}
	return t
}
