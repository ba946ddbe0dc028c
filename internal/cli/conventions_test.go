package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
)

// runInProcess runs planex in this process (for what needs no repository
// or agent: help, usage errors).
func runInProcess(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &o, Err: &e, Getenv: func(string) string { return "" }})
	return o.String(), e.String(), code
}

// commandPaths lists every command planex has, cobra's help and
// completion commands included.
func commandPaths() [][]string {
	root := newRootCmd(IO{Getenv: func(string) string { return "" }})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root, nil)
	return paths
}

func TestHelpTextIsClean(t *testing.T) {
	t.Parallel()
	paths := commandPaths()
	if len(paths) < 8 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, path := range paths {
		name := strings.Join(append([]string{"planex"}, path...), " ")
		out, errOut, code := runInProcess(t, append(path, "--help")...)
		if code != 0 || errOut != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: exit %d, stderr %q, stdout %q", name, code, errOut, out)
			continue
		}
		for i, r := range out {
			if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == unicode.ReplacementChar) {
				line := out[strings.LastIndexByte(out[:i], '\n')+1:]
				line, _, _ = strings.Cut(line, "\n")
				t.Errorf("%s --help: control character %U in line %q", name, r, line)
				break
			}
		}
	}
	// The line the issue found garbled.
	out, _, _ := runInProcess(t, "--help")
	if !strings.Contains(out, `--continue SESSION_ID[="latest"]`) {
		t.Errorf("--continue line:\n%s", out)
	}
}

// TestRepositoryCommandsTakeC: every command that works on a repository
// names it with -C DIR (and --repo DIR).
func TestRepositoryCommandsTakeC(t *testing.T) {
	t.Parallel()
	root := newRootCmd(IO{Getenv: func(string) string { return "" }})
	repoCommands := map[string]*cobra.Command{"planex": root}
	for _, c := range root.Commands() {
		switch c.Name() {
		case "status", "explore", "locate":
			repoCommands[c.Name()] = c
		}
	}
	if len(repoCommands) != 4 {
		t.Fatalf("commands = %v", repoCommands)
	}
	for name, c := range repoCommands {
		f := c.Flags().ShorthandLookup("C")
		if f == nil || f.Name != "repo" {
			t.Errorf("%s has no -C (--repo): %v", name, f)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"-c", "many", "x y"}, `invalid argument "many" for "-c, --concurrency"`},
		{[]string{"-c", "0", "add a thing"}, "--concurrency must be at least 1, got 0"},
		{[]string{"--review", "maybe", "add a thing"}, `--review must be agent or skip, got "maybe"`},
		{[]string{}, "give a requirement"},
		{[]string{"--continue=some-id", "add a thing"}, "--continue does not take a requirement"},
		{[]string{"--continue", "a", "b"}, "--continue takes at most one session id"},
		{[]string{"status", "one", "two"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"status", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"explore"}, "give a requirement"},
		{[]string{"explore", "--angles", "9", "add a thing"}, "--angles must be between 1 and 4, got 9"},
		{[]string{"locate", "--top", "0", "x"}, "--top must be at least 1"},
		{[]string{"locate", "--query-file", "q.txt", "x"}, "not both"},
		{[]string{"locate", "  "}, "query is empty"},
		{[]string{"eval-locate"}, "--data and --repos are required"},
		{[]string{"eval-locate", "extra"}, `unknown command "extra" for "planex eval-locate"`},
		{[]string{"action", "extra"}, `unknown command "extra" for "planex action"`},
		{[]string{"stauts"}, `unknown command "stauts" for "planex"`},
	} {
		out, errOut, code := runInProcess(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "--help' for usage") {
			t.Errorf("planex %q: exit %d, stderr %q, stdout %q; want exit 2 and %q", c.args, code, errOut, out, c.want)
		}
	}
}

func TestUnknownCommandSuggestions(t *testing.T) {
	root := newRootCmd(IO{Getenv: func(string) string { return "" }})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range []struct {
		args []string
		want string // the suggestion, or "" for a requirement
	}{
		{[]string{"stauts"}, "status"},
		{[]string{"stats"}, "status"},
		{[]string{"STATSU"}, "status"}, // case does not matter
		{[]string{"explor"}, "explore"},
		{[]string{"exlpore"}, "explore"},
		{[]string{"lcoate"}, "locate"},
		{[]string{"actoin"}, "action"},
		{[]string{"verison"}, "version"},
		{[]string{"eval-locat"}, "eval-locate"},
		{[]string{"refactor"}, ""},
		{[]string{"cleanup"}, ""},
		{[]string{"documentation"}, ""},
		{[]string{"typos"}, ""},
		{[]string{"stauts", "page"}, "status"}, // two words: still a typed command
		{[]string{"explor", "add a cache"}, "explore"},
		{[]string{"locat", "foo"}, "locate"},
		{[]string{"fix", "the", "cache"}, ""}, // a first word far from every command
		{[]string{"fix stauts"}, ""},          // one argument of several words
		{[]string{"stauts.md"}, ""},           // a file name
	} {
		err := unknownCommand(root, c.args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q refused as a command: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "\t"+c.want)):
			t.Errorf("%q: %v, want the suggestion %q", c.args, err, c.want)
		}
	}
	// An existing file of that name is the user's requirement file.
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if err := os.WriteFile(filepath.Join(dir, "stauts"), []byte("fix the status page"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unknownCommand(root, []string{"stauts"}); err != nil {
		t.Errorf("an existing file was refused: %v", err)
	}
}

// TestTypoedCommandStartsNothing: `planex stauts` with an agent
// configured exits 2 with the suggestion; no session, no agent call.
func TestTypoedCommandStartsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(diamond()...)
	out, errOut, code := f.planex("stauts")
	if code != exitUsage || !strings.Contains(errOut, `unknown command "stauts" for "planex"`) || !strings.Contains(errOut, "Did you mean this?\n\tstatus") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.repo, ".git", "planex", "sessions")); !os.IsNotExist(err) {
		t.Errorf("a session folder was made: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.fake, "agent-calls")); !os.IsNotExist(err) {
		t.Errorf("the agent ran: %v", err)
	}

	// A word far from every command is a requirement: it starts a
	// session, and without a terminal stops at the first gate (exit 3).
	out, errOut, code = f.planex("refactoring")
	if code != exitWaiting || !strings.Contains(out, "planex --continue ") {
		t.Fatalf("planex refactoring: exit %d\n%s\n%s", code, out, errOut)
	}
	f.sessionDir()
}

// TestReadmeDocumentsExitCodes: the README's exit code table has a row
// for every code planex uses.
func TestReadmeDocumentsExitCodes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{exitOK, exitFailed, exitUsage, exitWaiting, exitInterrupted} {
		if !strings.Contains(string(b), "\n| "+strconv.Itoa(code)+" | ") {
			t.Errorf("README.md has no row for exit code %d", code)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	var o bytes.Buffer
	if code := Run(context.Background(), []string{"version"}, IO{Out: &o, Err: &o, Version: "v1.2.3", Getenv: func(string) string { return "" }}); code != 0 || o.String() != "planex version v1.2.3\n" {
		t.Errorf("planex version: exit %d, %q", code, o.String())
	}
	o.Reset()
	if code := Run(context.Background(), []string{"--version"}, IO{Out: &o, Err: &o, Version: "v1.2.3", Getenv: func(string) string { return "" }}); code != 0 || o.String() != "planex version v1.2.3\n" {
		t.Errorf("planex --version: exit %d, %q", code, o.String())
	}
}
