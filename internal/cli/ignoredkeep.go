package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/gitrepo"
)

// uncontainedMaxIgnored bounds the listing of hidden files kept without
// the sandbox (paths in memory, no mounts).
const uncontainedMaxIgnored = 1 << 16

// hideIgnored fills c.Ignored: the checkout's git-ignored files, which
// contained agents must not read (the read-only phases run in the
// user's checkout, where a local .env or a key file lies), but for what
// the user granted and the agent command names.
//
// In the Action (untracked) every untracked file is hidden, ignored or
// not: the checkout is fresh, so what is untracked there came from the
// workflow's earlier steps, such as a cloud login's credentials file that
// no .gitignore names, and is not the user's work.
//
// Without the sandbox (contained false) only the built-in agents' file
// tools, which run in planex itself, use the listing: there is no mount
// per entry, so the cap is uncontainedMaxIgnored, and past it no run is
// refused but a read-only step's tools see nothing of the checkout.
func hideIgnored(ctx context.Context, c *agent.Containment, repo *gitrepo.Repo, command string, granted []string, getenv func(string) string, untracked, contained bool) error {
	list, what, clean := gitrepo.Ignored, "git-ignored", "git clean -ndX"
	if untracked {
		list, what, clean = gitrepo.Untracked, "untracked", "git clean -ndx"
	}
	max := agent.MaxIgnoredMasks
	if !contained {
		max = uncontainedMaxIgnored
	}
	paths, more, err := list(ctx, repo, max)
	if err != nil {
		return err
	}
	if more && contained {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("planex: the checkout %s holds more than %d %s files and folders (outside wholly untracked folders); the sandbox hides each from agents and will not mount that many. Remove what you do not need (`%s` lists it), or keep such files in whole folders instead of scattered through the tree (docs/security.md)", repo.Root, agent.MaxIgnoredMasks, what, clean)}
	}
	c.Ignored = agent.Ignored{Root: repo.Root, Paths: paths, Keep: append([]string(nil), granted...), Named: namedPaths(strings.Fields(command), repo.Root, getenv("HOME")),
		// Listed again for every step: what appears in the checkout during
		// the run is hidden from the steps after it.
		Relist: func(ctx context.Context) ([]string, error) {
			paths, more, err := list(ctx, repo, max)
			if err == nil && more {
				err = fmt.Errorf("%w: the checkout %s now holds more than %d %s files and folders (`%s` lists them)", agent.ErrTooManyIgnored, repo.Root, max, what, clean)
			}
			return paths, err
		}}
	return nil
}

// namedPaths are the files the words of a command line name that exist:
// its program (found on PATH when it has no slash) and every word naming
// a path, relative ones taken from dir, where read-only steps run.
func namedPaths(words []string, dir, home string) []string {
	var out []string
	for i, w := range words {
		w = strings.Trim(w, `'"`)
		if rest, ok := strings.CutPrefix(w, "~/"); ok && home != "" {
			w = filepath.Join(home, rest)
		}
		if i == 0 && !strings.Contains(w, "/") {
			if found, err := exec.LookPath(w); err == nil && filepath.IsAbs(found) {
				out = append(out, found)
			}
		}
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// keepMCPServers adds the programs and path arguments of the stdio MCP
// servers to what stays visible, when the configuration is the user's
// own: inline, or a file outside the checkout. A file in the checkout
// (the Action's mcp-config input names one relative to it) is the
// repository's content, which could name .env as a server's argument:
// its servers run, but what they name stays hidden where ignored.
func keepMCPServers(c *agent.Containment, servers mcp.Config, arg, dir string) {
	if c.Ignored.Root == "" || mcpConfigInCheckout(arg, dir, c.Ignored.Root) {
		return
	}
	for _, s := range servers.Servers {
		if s.Type != mcp.TypeStdio {
			continue
		}
		words := append([]string{s.Command}, s.Args...)
		c.Ignored.Named = append(c.Ignored.Named, namedPaths(words, c.Ignored.Root, "")...)
	}
}

// mcpConfigInCheckout reports whether arg, an MCP configuration given as
// a path (relative to dir, or the working directory when dir is empty),
// names a file in the checkout at root: as named, or once its links are
// resolved. Inline JSON is never in it.
func mcpConfigInCheckout(arg, dir, root string) bool {
	arg = strings.TrimSpace(arg)
	if arg == "" || strings.HasPrefix(arg, "{") {
		return false
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return true // no working directory to place it: assume the worst
	}
	root = filepath.Clean(root)
	realRoot := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		realRoot = r
	}
	for _, cand := range []string{p, realUpTo(p)} {
		for _, r := range []string{root, realRoot} {
			if within(cand, r) {
				return true
			}
		}
	}
	return false
}

// realUpTo is p with every link on the way resolved where it exists,
// else p's folder resolved and its last element kept.
func realUpTo(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(d, filepath.Base(p))
	}
	return p
}
