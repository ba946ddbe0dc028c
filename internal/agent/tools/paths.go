package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/scope"
)

// resolve checks a path the model gave and returns it relative to the
// step directory, slash-separated and cleaned ("." for the root). The
// error text is written for the model.
func (s *Set) resolve(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("path %q is absolute; use a path relative to the repository root", p)
	}
	rel := path.Clean(filepath.ToSlash(p))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("path %q leaves the repository; only paths inside it are allowed", p)
	}
	if underGit(rel) {
		return "", fmt.Errorf("path %q is inside .git/, which tools may not touch", p)
	}
	// Follow symlinks as far as the path exists and make sure the target
	// stays inside the directory (and out of .git).
	real, err := s.realPath(rel)
	if err != nil {
		return "", err
	}
	if real != rel && underGit(real) {
		return "", fmt.Errorf("path %q is a link into .git/, which tools may not touch", p)
	}
	if s.cfg.Phase.ReadOnly() && (s.hidden(rel) || s.hidden(real)) {
		return "", fmt.Errorf("path %q is git-ignored in the checkout (or, in the Action, untracked), which planex does not show agents", p)
	}
	return rel, nil
}

// hidden reports whether rel lies where a read-only step, which works
// in the user's checkout, may not look: at or below a path its
// .gitignore files ignore, or one the containment's listing of the
// checkout hides (with the sandbox: also the user's excludes and, in the
// Action, every untracked file). The tools run in planex itself, outside
// the sandbox, so they keep to what its masks show. What the user
// granted (--sandbox-read, --sandbox-write) stays readable.
func (s *Set) hidden(rel string) bool {
	full := filepath.Join(s.dir, filepath.FromSlash(rel))
	if s.granted(full) {
		return false
	}
	ig := newIgnorer(s.dir)
	parts := strings.Split(rel, "/")
	for i := range parts {
		if ig.ignored(strings.Join(parts[:i+1], "/"), i < len(parts)-1) {
			return true
		}
	}
	return s.inListed(full)
}

// inListed reports whether full, a path below the step's folder, is at
// or below an entry of the checkout's listing of hidden files (set for
// read-only steps only).
func (s *Set) inListed(full string) bool {
	if s.granted(full) {
		return false
	}
	for _, p := range s.listed {
		if within(full, p) {
			return true
		}
	}
	return false
}

// granted reports whether the user let steps see full although hidden
// (--sandbox-read, --sandbox-write).
func (s *Set) granted(full string) bool {
	for _, k := range s.cfg.Contain.Ignored.Keep {
		if within(full, realDir(k)) {
			return true
		}
	}
	return false
}

// listedHidden is the containment's listing of the checkout's hidden
// entries, resolved, taken when a read-only step's tools are made; a
// listing that fails hides the whole checkout.
func listedHidden(ctx context.Context, ig agent.Ignored, dir string) []string {
	paths := ig.Paths
	if ig.Relist != nil {
		var err error
		if paths, err = ig.Relist(ctx); err != nil {
			return []string{dir}
		}
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		// Below the checkout as the step sees it (dir is resolved).
		if r, err := filepath.Rel(filepath.Clean(ig.Root), p); err == nil && ig.Root != "" && !strings.HasPrefix(r, "..") {
			p = filepath.Join(realDir(ig.Root), r)
		}
		out = append(out, p)
	}
	return out
}

// realDir is p with its links resolved where it exists.
func realDir(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// realPath resolves the symlinks of the existing part of rel and returns
// the result relative to the step directory.
func (s *Set) realPath(rel string) (string, error) {
	full := filepath.Join(s.dir, filepath.FromSlash(rel))
	existing, rest := full, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("path %q cannot be resolved: %v", rel, err)
	}
	r, err := filepath.Rel(s.dir, filepath.Join(resolved, rest))
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", fmt.Errorf("path %q is a symbolic link that points outside the repository", rel)
	}
	return path.Clean(filepath.ToSlash(r)), nil
}

func underGit(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// checkWrite refuses writes in read-only phases and outside the scope.
// Both the path as given and where it resolves to must be in scope.
func (s *Set) checkWrite(rel string) error {
	if s.cfg.Phase.ReadOnly() {
		return fmt.Errorf("the %s phase is read-only; files may not be changed", s.cfg.Phase)
	}
	if rel == "." {
		return errors.New("path names the repository root, not a file")
	}
	if strings.TrimSpace(s.cfg.Scope) == "" {
		return fmt.Errorf("writing %s refused: this task has no write scope", rel)
	}
	if !scope.Match(s.cfg.Scope, rel) {
		return fmt.Errorf("writing %s refused: it is outside this task's scope (%s)", rel, s.cfg.Scope)
	}
	real, err := s.realPath(rel)
	if err != nil {
		return err
	}
	if real != rel && !scope.Match(s.cfg.Scope, real) {
		return fmt.Errorf("writing %s refused: it links to %s, outside this task's scope (%s)", rel, real, s.cfg.Scope)
	}
	return nil
}

// describe turns an os error into a short text without the absolute
// directory, which the model does not need.
func (s *Set) describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			msg = "no such file or directory"
		}
		return fmt.Sprintf("%s %s: %s", pe.Op, strings.TrimPrefix(strings.TrimPrefix(pe.Path, s.dir), "/"), msg)
	}
	return strings.ReplaceAll(err.Error(), s.dir+"/", "")
}
