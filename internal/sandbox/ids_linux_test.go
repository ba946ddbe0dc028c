//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// needRoot skips tests of what planex does when it runs as root (as CI
// does): only root can map the program to SandboxID and lend it files.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: planex maps a program to an unprivileged uid only when it runs as root (an ordinary user's program stays that user)")
	}
}

func ownerOf(t *testing.T, p string) (uid, gid uint32) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid
}

func writeFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	// No global configuration, so no safe.directory of the user's.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestRootDoesNotMakeTheProgramRoot: planex runs as root; the contained
// program tries what host root's uid would allow, and to use the lending
// of its writable directories to get files outside them.
func TestRootDoesNotMakeTheProgramRoot(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	const secret = "root-only-secret-4711"
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret"), secret, 0o600)
	writeFile(t, filepath.Join(outside, "group-secret"), secret, 0o640)
	writeFile(t, filepath.Join(outside, "linked"), "original\n", 0o644)
	writeFile(t, filepath.Join(outside, "theirs"), "theirs\n", 0o600)
	if err := os.Chown(filepath.Join(outside, "theirs"), 4242, 4242); err != nil {
		t.Fatal(err)
	}

	work, step, home := t.TempDir(), t.TempDir(), t.TempDir()
	gitCmd(t, work, "init", "-q")
	writeFile(t, filepath.Join(work, "tracked.txt"), "v1\n", 0o644)
	gitCmd(t, work, "add", ".")
	gitCmd(t, work, "commit", "-qm", "init")
	// Left by an earlier step: links out of the worktree, which lending
	// must not follow, and a second name of a file outside it.
	for name, target := range map[string]string{"planted": filepath.Join(outside, "secret"), "planted-dir": outside} {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(outside, "linked"), filepath.Join(work, "hardlink")); err != nil {
		t.Fatal(err)
	}

	p := Policy{Writable: []string{work, step, home}, ReadOnly: []string{outside}}
	script := `id -u; grep '^Groups' /proc/self/status
cat /etc/shadow ` + outside + `/secret ` + outside + `/group-secret work-link planted 2>/dev/null
echo tampered > hardlink; echo tampered > planted; echo tampered > planted-dir/linked
chmod 0666 planted 2>/dev/null; chmod 0666 hardlink 2>/dev/null
echo changed > tracked.txt && echo new > new.txt && mkdir -p sub && echo deep > sub/f && chmod u+s new.txt
echo result > ` + step + `/result.json && echo cfg > ` + home + `/.cfg && echo wrote-all
ln -s ` + outside + `/theirs take-theirs; ln -s ` + outside + `/linked take-linked; ln -s / take-root
ln ` + outside + `/linked hl2 2>/dev/null && echo HARDLINKED; true`
	out, err := run(t, s, p, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	id, _, _ := strings.Cut(out, "\n")
	if id != "65534" || strings.Contains(out, secret) || strings.Contains(out, "HARDLINKED") {
		t.Errorf("the program was root-like (uid %q) or read a root-only file:\n%s", id, out)
	}
	if groups := strings.Fields(strings.TrimPrefix(strings.SplitN(out, "\n", 3)[1], "Groups:")); len(groups) != 0 {
		t.Errorf("the program kept supplementary groups %v", groups)
	}
	if !strings.Contains(out, "wrote-all") {
		t.Errorf("the program could not write its worktree, step folder and home:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "linked")); string(b) != "original\n" {
		t.Errorf("a file outside the worktree was changed through a second name: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != secret {
		t.Errorf("a file outside the worktree was changed through a link: %q", b)
	}
	// Given back: every file of the writable directories is root's
	// again, set-id bits gone; files outside kept their owners.
	for _, d := range []string{work, step, home} {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if uid, gid := ownerOf(t, p); uid != 0 || gid != 0 {
				t.Errorf("%s is owned by %d:%d after the step, want 0:0", p, uid, gid)
			}
			return nil
		})
	}
	if fi, err := os.Stat(filepath.Join(work, "new.txt")); err != nil || fi.Mode()&os.ModeSetuid != 0 {
		t.Errorf("new.txt after the step: %v, %v", fi, err)
	}
	for name, want := range map[string]uint32{"secret": 0, "linked": 0, "theirs": 4242, ".": 0} {
		if uid, _ := ownerOf(t, filepath.Join(outside, name)); uid != want {
			t.Errorf("outside/%s is owned by %d after the step, want %d", name, uid, want)
		}
	}
	if fi, _ := os.Stat(filepath.Join(outside, "secret")); fi.Mode().Perm() != 0o600 {
		t.Errorf("outside/secret's mode changed to %v", fi.Mode())
	}
	// planex's git, as root, still works on the worktree afterwards:
	// git refuses a repository another user owns.
	if st := gitCmd(t, work, "status", "--porcelain"); !strings.Contains(st, "new.txt") || !strings.Contains(st, " M tracked.txt") {
		t.Errorf("git status after the step: %q", st)
	}
}

// TestLendingIsHeldWhileAnyProgramRuns: two contained processes share a
// worktree (an agent and its MCP server); the first to end must not take
// it back from the other.
func TestLendingIsHeldWhileAnyProgramRuns(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	work := t.TempDir()
	writeFile(t, filepath.Join(work, "f"), "x", 0o644)
	wrap := func() func() {
		cmd := exec.CommandContext(context.Background(), "true")
		done, err := s.Wrap(cmd, Policy{Writable: []string{work}})
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	first := wrap()
	// planex writes a file meanwhile (a built-in agent's file tool);
	// the next program must be able to change it too.
	writeFile(t, filepath.Join(work, "g"), "y", 0o644)
	second := wrap()
	for _, f := range []string{"f", "g"} {
		if uid, _ := ownerOf(t, filepath.Join(work, f)); uid != SandboxID {
			t.Fatalf("lent file %s owned by %d, want %d", f, uid, SandboxID)
		}
	}
	first()
	if uid, _ := ownerOf(t, filepath.Join(work, "f")); uid != SandboxID {
		t.Errorf("given back while another program held it: owner %d", uid)
	}
	second()
	for _, f := range []string{"f", "g"} {
		if uid, _ := ownerOf(t, filepath.Join(work, f)); uid != 0 {
			t.Errorf("%s not given back after the last program: owner %d", f, uid)
		}
	}
}

// TestLendingIsHeldAcrossProcesses: two planex processes (two Sandboxes
// here: their lock files are opened apart, as by two processes) lending
// one folder, a cache both share with --sandbox-write; the first to end
// gives nothing back while the other's program still writes there.
func TestLendingIsHeldAcrossProcesses(t *testing.T) {
	t.Parallel()
	needRoot(t)
	a, b := newSandbox(t), newSandbox(t)
	shared := t.TempDir()
	writeFile(t, filepath.Join(shared, "f"), "x", 0o644)
	wrap := func(s *Sandbox) func() {
		done, err := s.Wrap(exec.CommandContext(context.Background(), "true"), Policy{Writable: []string{shared}})
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	first, second := wrap(a), wrap(b)
	first()
	if uid, _ := ownerOf(t, filepath.Join(shared, "f")); uid != SandboxID {
		t.Errorf("given back while another process's program held it: owner %d", uid)
	}
	second()
	if uid, _ := ownerOf(t, filepath.Join(shared, "f")); uid != 0 {
		t.Errorf("not given back after the last process: owner %d", uid)
	}
	// The lock is free again: a third lending and its end give back too.
	wrap(a)()
	if uid, _ := ownerOf(t, filepath.Join(shared, "f")); uid != 0 {
		t.Errorf("not given back after a later lending: owner %d", uid)
	}
}

// TestLendingIsHeldAcrossTempDirs: the same with the two processes'
// $TMPDIR apart (two runners' jobs, or a matrix's, each with a temporary
// folder of its own): the lending locks are the machine's, not the
// temporary folder's, so the first to end still gives nothing back.
func TestLendingIsHeldAcrossTempDirs(t *testing.T) {
	needRoot(t)
	a, b := newSandbox(t), newSandbox(t)
	shared := t.TempDir()
	writeFile(t, filepath.Join(shared, "f"), "x", 0o644)
	wrap := func(s *Sandbox, tmp string) func() {
		t.Setenv("TMPDIR", tmp)
		done, err := s.Wrap(exec.CommandContext(context.Background(), "true"), Policy{Writable: []string{shared}})
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	first, second := wrap(a, t.TempDir()), wrap(b, t.TempDir())
	first()
	if uid, _ := ownerOf(t, filepath.Join(shared, "f")); uid != SandboxID {
		t.Errorf("given back while a process with another $TMPDIR still lent it: owner %d", uid)
	}
	second()
	if uid, _ := ownerOf(t, filepath.Join(shared, "f")); uid != 0 {
		t.Errorf("not given back after the last process: owner %d", uid)
	}
}

// TestChownTree: lending changes what planex owns below the root and
// nothing a link leads to; giving back changes only what the sandbox's
// uid owns.
func TestChownTree(t *testing.T) {
	t.Parallel()
	needRoot(t)
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "target"), "x", 0o644)
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "a", "b", "f"), "x", 0o644)
	writeFile(t, filepath.Join(root, "theirs"), "x", 0o644)
	if err := os.Chown(filepath.Join(root, "theirs"), 4242, 4242); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "target"), filepath.Join(root, "link")))
	must(os.Symlink(outside, filepath.Join(root, "a", "dirlink")))
	must(os.Link(filepath.Join(outside, "target"), filepath.Join(root, "hard")))
	must(syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600))

	must(chownTree(root, owner{0, 0}, owner{SandboxID, SandboxID}, true))
	for p, want := range map[string]uint32{
		".": SandboxID, "a": SandboxID, "a/b": SandboxID, "a/b/f": SandboxID, "link": SandboxID, "a/dirlink": SandboxID,
		"hard": 0, "fifo": 0, "theirs": 4242,
	} {
		if uid, gid := ownerOf(t, filepath.Join(root, p)); uid != want || (want == SandboxID && gid != SandboxID) {
			t.Errorf("lent: %s owned by %d:%d, want %d", p, uid, gid, want)
		}
	}
	if uid, _ := ownerOf(t, filepath.Join(outside, "target")); uid != 0 {
		t.Errorf("lending followed a link: the target is owned by %d", uid)
	}
	if uid, _ := ownerOf(t, outside); uid != 0 {
		t.Errorf("lending followed a directory link: owned by %d", uid)
	}
	must(chownTree(root, owner{SandboxID, SandboxID}, owner{0, 0}, false))
	for p, want := range map[string]uint32{".": 0, "a/b/f": 0, "link": 0, "hard": 0, "theirs": 4242} {
		if uid, _ := ownerOf(t, filepath.Join(root, p)); uid != want {
			t.Errorf("given back: %s owned by %d, want %d", p, uid, want)
		}
	}
	// A root that is itself a link is refused, not followed.
	if err := chownTree(filepath.Join(root, "a", "dirlink"), owner{0, 0}, owner{SandboxID, SandboxID}, true); err == nil {
		t.Error("chownTree followed a link given as its root")
	}
	if _, err := os.Stat(filepath.Join(root, "missing")); err == nil {
		t.Fatal("unexpected")
	}
	if err := chownTree(filepath.Join(root, "missing"), owner{0, 0}, owner{1, 1}, true); err == nil {
		t.Error("chownTree of nothing succeeded")
	}
}

// TestDeepTreeStopsNoStep: the program (or a commit it made, checked out
// for the next task) leaves directories nested deeper than the lending
// walk descends. Giving back still gives back everything else, and the
// next step on the same worktree still starts: a deep tree is left as it
// is below the walk's depth, not a reason to refuse every later step.
func TestDeepTreeStopsNoStep(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	work := t.TempDir()
	for _, d := range []string{"a", "z"} {
		if err := os.Mkdir(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(work, d, "f"), "x", 0o644)
	}
	deep := strings.Repeat("d/", maxDepth+40)
	p := Policy{Writable: []string{work}}
	env := []string{"PATH=" + os.Getenv("PATH")}
	out, err := run(t, s, p, work, env, `mkdir -p `+deep+` && echo bottom > `+deep+`f && echo new > a/new && echo new > z/new && echo made`)
	if err != nil || !strings.Contains(out, "made") {
		t.Fatalf("the program could not make its tree: %v\n%s", err, out)
	}
	for _, f := range []string{"a", "a/f", "a/new", "z", "z/new", "d", "d/d"} {
		if uid, _ := ownerOf(t, filepath.Join(work, f)); uid != 0 {
			t.Errorf("%s is owned by %d after the step, want it given back to 0", f, uid)
		}
	}
	out, err = run(t, s, p, work, env, `echo again > z/new && cat `+deep+`f`)
	if err != nil || !strings.Contains(out, "bottom") {
		t.Errorf("the next step on the worktree did not start or run: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "z", "new")); string(b) != "again\n" {
		t.Errorf("the next step could not write its worktree: %q", b)
	}
}

// TestRedTeamGiveBackWarningIsLogged: a program nests folders deeper
// than giving back descends and names the deepest with a line break and
// a workflow command. planex's warning, which names that folder, went
// straight to its own standard error (where the Actions runner reads
// commands and a terminal reads escapes); it goes to the Sandbox's Log,
// whose handler filters it as planex's other output.
func TestRedTeamGiveBackWarningIsLogged(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	var logged bytes.Buffer
	s.Log = slog.New(slog.NewTextHandler(&logged, nil))
	work := t.TempDir()
	deep := strings.Repeat("d/", maxDepth) + "'x\n::stop-commands::agent-owned'/d"
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=" + os.Getenv("PATH")}, `mkdir -p `+deep+` && echo made`)
	if err != nil || !strings.Contains(out, "made") {
		t.Fatalf("the program could not make its tree: %v\n%s", err, out)
	}
	if !strings.Contains(logged.String(), "could not give a folder back") || !strings.Contains(logged.String(), `x\n::stop-commands::agent-owned`) {
		t.Errorf("the warning naming the program's folder is not in the Sandbox's Log: %q", logged.String())
	}
}

// TestFileCapabilitiesDoNotOutliveTheStep: as root of a user namespace
// of its own, the program gives a program of its worktree file
// capabilities and set-id bits, hoping planex or a later step runs it.
// After the step the file is root's with neither.
func TestFileCapabilitiesDoNotOutliveTheStep(t *testing.T) {
	t.Parallel()
	needRoot(t)
	for _, tool := range []string{"unshare", "setcap", "getcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the attack uses %s; not installed here", tool)
		}
	}
	s := newSandbox(t)
	work := t.TempDir()
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	script := `cp ` + truePath + ` capbin && chmod 6755 capbin
unshare -Ur setcap cap_net_raw,cap_dac_override+ep capbin 2>/dev/null && echo CAPSET
getcap capbin`
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("inside: %s", out)
	caps, err := exec.Command("getcap", filepath.Join(work, "capbin")).CombinedOutput()
	if err != nil || strings.TrimSpace(string(caps)) != "" {
		t.Errorf("capbin keeps file capabilities after the step: %q, %v", caps, err)
	}
	fi, err := os.Stat(filepath.Join(work, "capbin"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("capbin keeps set-id bits after the step: %v", fi.Mode())
	}
	if uid, _ := ownerOf(t, filepath.Join(work, "capbin")); uid != 0 {
		t.Errorf("capbin is owned by %d after the step", uid)
	}
}

// TestLendingRacesALinkSwap: while the program runs, planex lends its
// worktree again (another contained process starting on it), over and
// over, and the program swaps a folder of the worktree for a link to a
// root-owned folder outside, and back, as fast as it can. No lending
// walk follows the link: the folder outside and its files stay root's.
func TestLendingRacesALinkSwap(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	work, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "victim"), "x", 0o644)
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "sub", "f"), "x", 0o644)
	p := Policy{Writable: []string{work}, ReadOnly: []string{outside}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	swapper := exec.CommandContext(ctx, "sh", "-c", `while :; do
mv sub real 2>/dev/null; ln -s `+outside+` sub 2>/dev/null
rm -f sub; mv real sub 2>/dev/null
done`)
	swapper.Dir = work
	swapper.Env = []string{"PATH=" + os.Getenv("PATH")}
	done, err := s.Wrap(swapper, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := swapper.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		// planex writes root-owned files meanwhile, which each
		// lending hands over again.
		writeFile(t, filepath.Join(work, fmt.Sprintf("planex-%d", i)), "y", 0o644)
		again, err := s.Wrap(exec.CommandContext(ctx, "true"), p)
		if err != nil {
			t.Fatalf("lending again during the swaps: %v", err)
		}
		again()
	}
	cancel()
	swapper.Wait()
	done()
	for _, f := range []string{".", "victim"} {
		if uid, _ := ownerOf(t, filepath.Join(outside, f)); uid != 0 {
			t.Errorf("outside/%s is owned by %d: a lending walk followed the swapped link", f, uid)
		}
	}
}

// TestSetuidRootGivesNothing: a contained program runs a set-user-ID
// root program, as it would sudo (passwordless for the runner user on
// GitHub's hosted runners) or any set-id helper of the machine, to get
// host root: to read /proc/1/environ, write $GITHUB_ENV or undo its
// mounts. The program keeps the step's id: the sandbox's user namespace
// maps no root for the kernel to switch to, and no_new_privs makes exec
// ignore set-id bits anyway.
func TestSetuidRootGivesNothing(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := newSandbox(t)
	dir, err := os.MkdirTemp("/srv", "planex-suid-")
	if err != nil {
		t.Skipf("needs a folder outside /tmp, which the sandbox replaces: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	idPath, err := exec.LookPath("id")
	if err != nil {
		t.Skip("the attack uses id; not installed here")
	}
	b, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	suid := filepath.Join(dir, "id")
	if err := os.WriteFile(suid, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("su", "-s", "/bin/sh", "nobody", "-c", suid+" -u").Output(); err == nil {
		t.Logf("uncontained, as nobody: euid %s", strings.TrimSpace(string(out)))
	}
	out, err := run(t, s, Policy{ReadOnly: []string{dir}}, "/", nil, suid+" -u; "+suid+" -g; grep NoNewPrivs /proc/self/status")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if f := strings.Fields(out); len(f) < 4 || f[0] != "65534" || f[1] != "65534" || f[3] != "1" {
		t.Errorf("a set-id root program inside gave ids and no_new_privs %q, want 65534, 65534 and 1", out)
	}
}
