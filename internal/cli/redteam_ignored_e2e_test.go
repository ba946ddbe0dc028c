//go:build linux

package cli

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestRedTeamReadOnlyStepsIgnoredFiles: the read-only phases (analyze,
// explore, plan) run in the user's own checkout. A malicious command
// agent there reads the checkout's git-ignored .env and a key inside an
// ignored folder, by relative and absolute path, and puts what it read
// in its output, its findings, its discoveries and the plan. None of it
// may reach planex's output, the session's files or the repository; the
// untracked (not ignored) notes.txt and cache/granted/granted.txt, ignored but
// granted with --sandbox-read, must still be read: they show the agent
// read and reported what it could.
func TestRedTeamReadOnlyStepsIgnoredFiles(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(context.Background(), sandbox.ModeOn); err != nil {
		t.Skipf("needs planex's sandbox (user namespaces: root, or unprivileged ones allowed): %v", err)
	}
	secrets := map[string]string{
		".env":                        "dotenv-secret-4d1c9e",
		"secrets/credentials.json":    "credentials-secret-77ab20",
		"secrets/deep/key.pem":        "pem-secret-0f3e91",
		"cache/deep/.npmrc-not-given": "npmrc-secret-5b6a02",
	}
	visible := map[string]string{
		"notes.txt":                 "untracked-notes-visible-19c4",
		"cache/granted/granted.txt": "granted-cache-visible-8e27",
	}
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	f.write(f.repo, ".gitignore", ".env\nsecrets/\ncache/\n")
	f.git("add", ".gitignore")
	f.git("commit", "-qm", "ignore local files")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	for rel, v := range secrets {
		f.write(f.repo, rel, "TOKEN="+v+"\n")
	}
	for rel, v := range visible {
		f.write(f.repo, rel, v+"\n")
	}
	// Only cache/granted is granted, not all of cache/: the rest of it
	// stays hidden (cache/deep).
	granted := filepath.Join(f.repo, "cache", "granted")
	session, places := f.runReadIgnored(t, nil, []string{granted}, "LOOT:")
	explore, err := os.ReadFile(filepath.Join(f.sessionDir(), "explore.csv"))
	if err != nil || !strings.Contains(string(explore), visible["notes.txt"]) {
		t.Fatalf("the explore steps' findings lack the agent's loot (%v):\n%s", err, explore)
	}
	for rel, v := range visible {
		if !strings.Contains(session, v) {
			t.Errorf("%s, which the agent may read, is not in the session's files: the sandbox hid it", rel)
		}
	}
	for rel, v := range secrets {
		for where, text := range places {
			if strings.Contains(text, v) {
				t.Errorf("the ignored %s reached %s", rel, where)
			}
		}
	}
	// The masks are the sandbox's: the user's files are left as they were.
	for rel, v := range secrets {
		if b, err := os.ReadFile(filepath.Join(f.repo, rel)); err != nil || string(b) != "TOKEN="+v+"\n" {
			t.Errorf("%s changed: %q, %v", rel, b, err)
		}
	}
}

// readTree returns every regular file under dir, each after its path.
func readTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(p + ":\n")
			b.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// runReadIgnored runs planex, sandbox on, with testdata/redteam/read-ignored.sh
// as the agent (allowed to read the fixture's folder, testdata and the
// paths in read; env added to planex's), fails the test unless the
// attack ran (its loot, holding mustSee, is in the plan), and returns the
// session's files and every place what the agent found could reach.
func (f *fixture) runReadIgnored(t *testing.T, env, read []string, mustSee string) (session string, places map[string]string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "redteam", "read-ignored.sh"))
	if err != nil {
		t.Fatal(err)
	}
	f.write(f.fake, "agent.sh", strings.NewReplacer("@REPO@", f.repo, "@AGENT@", f.agent).Replace(string(body)))
	cmd := f.command("-y", "--sandbox", "on", "--review", "skip", "add a file")
	readable := append([]string{f.fake, testdataDir(t)}, read...)
	cmd.Env = append(append(append(cmd.Env, "PLANEX_SANDBOX_WRITE="), env...), "PLANEX_AGENT_CMD=sh "+filepath.Join(f.fake, "agent.sh"),
		"PLANEX_SANDBOX_READ="+strings.Join(readable, string(os.PathListSeparator)))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("planex: %v\n%s", err, out.String())
	}
	session = readTree(t, f.sessionDir())
	if !strings.Contains(session, "LOOT:") || !strings.Contains(session, mustSee) {
		t.Fatalf("the agent's loot (with %q) is not in the plan, the attack did not run:\n%s", mustSee, out.String())
	}
	return session, map[string]string{"planex's output": out.String(), "the session's files": session,
		"the repository's history": f.git("log", "-p", "--all", "--format=%H %B"), "the fixture's folder": readTree(t, f.fake)}
}

// TestRedTeamIgnoredInSubmodule: git lists a checkout's ignored files
// without those of its submodules and of repositories cloned inside it,
// so a submodule's own ignored .env, and a nested clone's, were in sight
// of the read-only steps. A command agent reads them by relative and
// absolute path; the submodule's untracked notes.txt shows it reads.
func TestRedTeamIgnoredInSubmodule(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(context.Background(), sandbox.ModeOn); err != nil {
		t.Skipf("needs planex's sandbox (user namespaces: root, or unprivileged ones allowed): %v", err)
	}
	const secret, notes = "submodule-dotenv-secret-6e2a", "submodule-notes-visible-91fd"
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	lib := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", ".gitignore"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "lib"}} {
		if args[0] == "add" {
			f.write(lib, ".gitignore", ".env\n")
		}
		f.git(append([]string{"-C", lib}, args...)...)
	}
	f.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib")
	f.git("commit", "-qm", "vendor lib")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	f.write(f.repo, "vendor/lib/.env", "TOKEN="+secret+"\n")
	f.write(f.repo, "vendor/lib/notes.txt", notes+"\n")
	const nestedSecret = "nested-clone-dotenv-secret-c3f7"
	f.git("init", "-q", filepath.Join(f.repo, "clones", "other"))
	f.write(f.repo, "clones/other/.gitignore", ".env\n")
	f.write(f.repo, "clones/other/.env", "TOKEN="+nestedSecret+"\n")
	_, places := f.runReadIgnored(t, nil, nil, notes)
	for where, text := range places {
		if strings.Contains(text, secret) {
			t.Errorf("the submodule's ignored .env reached %s", where)
		}
		if strings.Contains(text, nestedSecret) {
			t.Errorf("the nested clone's ignored .env reached %s", where)
		}
	}
}

// TestRedTeamIgnoredCreatedDuringRun: the checkout's ignored files were
// listed once, when the run started, so one that appeared later (a
// build or a login writing .env.late while planex runs) was in sight of
// every step after it. The test writes it while the first step (analyze)
// waits; the agent reads it in the steps that follow.
func TestRedTeamIgnoredCreatedDuringRun(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(context.Background(), sandbox.ModeOn); err != nil {
		t.Skipf("needs planex's sandbox (user namespaces: root, or unprivileged ones allowed): %v", err)
	}
	const secret, notes = "late-dotenv-secret-2b8c", "untracked-notes-visible-5d41"
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	f.write(f.repo, ".gitignore", ".env*\n")
	f.git("add", ".gitignore")
	f.git("commit", "-qm", "ignore .env files")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	f.write(f.repo, "notes.txt", notes+"\n")
	// A folder the agent may write, to say the analyze step started.
	marks := t.TempDir()
	f.write(marks, "hold-analyze", "")
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(marks, "analyze-started")); err == nil {
				_ = os.WriteFile(filepath.Join(f.repo, ".env.late"), []byte("TOKEN="+secret+"\n"), 0o644)
				_ = os.WriteFile(filepath.Join(marks, "go-on"), nil, 0o644)
				return
			}
		}
	}()
	session, places := f.runReadIgnored(t, []string{"PLANEX_SANDBOX_WRITE=" + marks, "RED_TEAM=" + marks}, nil, notes)
	places["the agent's writable folder"] = readTree(t, marks)
	if _, err := os.Stat(filepath.Join(f.repo, ".env.late")); err != nil {
		t.Fatalf(".env.late was never written: the analyze step did not wait for it (%v)", err)
	}
	if !strings.Contains(session, "LOOT plan") && !strings.Contains(session, "LOOT:") {
		t.Fatalf("no step after analyze reported its loot:\n%s", session)
	}
	for where, text := range places {
		if strings.Contains(text, secret) {
			t.Errorf("the .env.late written during the run reached %s", where)
		}
	}
}
