package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

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
	return rel, nil
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
