// Package clistest installs the real coding CLIs for tests (the exact
// versions planex is tested with, from npm, cached between runs) and
// plays a model to them through the scripted servers of agenttest.
package clistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RequireEnv, when set to 1 (CI sets it), turns a skip for want of npm
// or the registry into a failure, so a CI run never passes without
// having run the CLIs.
const RequireEnv = "PLANEX_REQUIRE_CLIS"

// CacheEnv names another folder for the installed CLIs; the default is
// planex-test-clis in the user's cache folder.
const CacheEnv = "PLANEX_TEST_CLIS_DIR"

// CacheDir is where the tested CLIs are installed, one folder per
// package and version.
func CacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the test CLIs (set %s): %w", CacheEnv, err)
	}
	return filepath.Join(base, "planex-test-clis"), nil
}

// Install makes sure an npm package (name@version, the version a CLI is
// tested with: clis.Tested) is installed in the cache and returns the
// folder holding its executable exe (node_modules/.bin), to be put first
// on PATH. Without npm, or when the registry cannot be reached, the test
// is skipped saying so, unless RequireEnv is set; so is it with -short.
func Install(t testing.TB, exe, spec string) string {
	t.Helper()
	if testing.Short() && os.Getenv(RequireEnv) != "1" {
		t.Skipf("skipping the real %s CLI in -short mode (its first install downloads it from npm)", exe)
	}
	bin, err := Ensure(context.Background(), exe, spec)
	if err != nil {
		var skip *unavailableError
		if errors.As(err, &skip) && os.Getenv(RequireEnv) != "1" {
			t.Skipf("skipping the real %s CLI: %v (set %s=1 to make this a failure)", exe, err, RequireEnv)
		}
		t.Fatalf("installing the %s CLI: %v", exe, err)
	}
	return bin
}

// unavailableError says npm or its registry cannot be used here.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }

// Ensure installs spec (name@version) into the cache unless it is there
// already, and returns its node_modules/.bin folder, which holds exe.
// Installs go to a fresh folder that is renamed into place when complete,
// so concurrent test binaries and interrupted runs never see half an
// installation.
func Ensure(ctx context.Context, exe, spec string) (string, error) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return "", fmt.Errorf("%q is not name@version", spec)
	}
	version := spec[at+1:]
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, strings.ReplaceAll(spec, "/", "+"))
	bin := filepath.Join(dir, "node_modules", ".bin")
	// Only complete, working installations are moved into place.
	if _, err := os.Stat(filepath.Join(bin, exe)); err == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", &unavailableError{"npm is not on PATH"}
	}
	// Asking the registry first tells "cannot reach npm" (skip) from "the
	// install itself failed" (a real failure).
	vctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(vctx, npm, "view", spec, "version").CombinedOutput(); err != nil {
		return "", &unavailableError{fmt.Sprintf("the npm registry did not answer for %s: %v: %s", spec, err, lastLines(out, 3))}
	} else if !bytes.Contains(out, []byte(version)) {
		return "", fmt.Errorf("npm has no %s: %s", spec, lastLines(out, 3))
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, ".installing-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ictx, cancel2 := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel2()
	cmd := exec.CommandContext(ictx, npm, "install", "--prefix", tmp, "--no-save", "--no-package-lock",
		"--no-audit", "--no-fund", "--loglevel", "error", spec)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s: %v: %s", spec, err, lastLines(out, 10))
	}
	if !works(filepath.Join(tmp, "node_modules", ".bin"), exe) {
		return "", fmt.Errorf("npm install %s left no working %s executable", spec, exe)
	}
	// Everything inside must be readable by the contained CLI, which may
	// run as another user (nobody, when the tests run as root).
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil && !works(bin, exe) {
		return "", fmt.Errorf("moving the %s installation into place: %w", exe, err)
	}
	return bin, nil
}

// works reports whether bin holds the CLI and it starts.
func works(bin, name string) bool {
	exe := filepath.Join(bin, name)
	if _, err := os.Stat(exe); err != nil {
		return false
	}
	home, err := os.MkdirTemp("", "planex-cli-version-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "--version")
	cmd.Env = append(os.Environ(), "HOME="+home)
	return cmd.Run() == nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
