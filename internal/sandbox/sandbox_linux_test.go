//go:build linux

package sandbox

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

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// newSandbox returns a working sandbox or fails: CI runs on a machine
// where user and PID namespaces work, so a skip would hide a regression.
func newSandbox(t *testing.T) *Sandbox {
	t.Helper()
	s, err := New(context.Background(), ModeOn)
	if err != nil {
		t.Fatalf("sandbox unavailable: %v", err)
	}
	return s
}

// run executes a shell script contained by s under p and returns its
// output and error.
func run(t *testing.T, s *Sandbox, p Policy, dir string, env []string, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cleanup, err := s.Wrap(cmd, p)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	err = cmd.Run()
	return out.String(), err
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": ModeAuto, "auto": ModeAuto, "ON": ModeOn, " off ": ModeOff} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("yes"); err == nil || !strings.Contains(err.Error(), `"yes"`) {
		t.Errorf("ParseMode(yes) error = %v, want one naming the value", err)
	}
}

func TestOffWrapsNothing(t *testing.T) {
	t.Parallel()
	s, err := New(context.Background(), ModeOff)
	if err != nil || s != nil {
		t.Fatalf("New(off) = %v, %v; want nil, nil", s, err)
	}
	cmd := exec.Command("true")
	cleanup, err := s.Wrap(cmd, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if filepath.Base(cmd.Path) != "true" {
		t.Errorf("nil sandbox changed the command to %s", cmd.Path)
	}
}

// TestContainment runs each attack a misbehaving agent would try and
// checks it had no effect outside.
func TestContainment(t *testing.T) {
	s := newSandbox(t)
	const secret = "s3cr3t-value-4711"
	t.Setenv("PLANEX_TEST_SECRET_TOKEN", secret)

	work := t.TempDir()     // writable
	readonly := t.TempDir() // readable, not writable
	home := t.TempDir()     // hidden
	if err := os.WriteFile(filepath.Join(readonly, "plan.csv"), []byte("approved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".git-credentials"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	// A folder masked below a read-only one (the session store in the git
	// directory) stays masked although the read-only bind comes after.
	concealed := filepath.Join(readonly, "planex")
	if err := os.MkdirAll(concealed, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(concealed, "key"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	hostTmpMarker := filepath.Join(os.TempDir(), "planex-sandbox-test-marker")
	os.Remove(hostTmpMarker)
	p := Policy{Writable: []string{work}, ReadOnly: []string{readonly}, Hide: []string{home}, Mask: []string{concealed}}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}

	rows := []struct {
		name   string
		script string
		check  func(t *testing.T, out string, err error)
	}{
		{"sees only its own processes", `ls /proc | grep '^[0-9][0-9]*$' | wc -l; cat /proc/1/cmdline 2>&1; ls /proc/1 2>&1 | head -1`, func(t *testing.T, out string, err error) {
			// sh, ls, grep and wc at most; cat does not run yet. The init
			// (planex, which the program may not trace) is not shown at
			// all: as an ordinary user's its /proc entries are the
			// user's own, and its descriptors, command line and the rest
			// were listed (TestInitIsOutOfReach). Its command line names
			// no part of the policy anyway (TestWrapConfig).
			n, rest, _ := strings.Cut(out, "\n")
			if strings.TrimSpace(n) > "4" || len(strings.TrimSpace(n)) != 1 {
				t.Errorf("want a handful of processes, got %q, %v", out, err)
			}
			if strings.Contains(rest, initArg0) || strings.Count(rest, "No such file or directory") != 2 {
				t.Errorf("the init is visible in /proc: %q", out)
			}
			if strings.Contains(out, concealed) || strings.Contains(out, home) || strings.Contains(out, `"mask"`) {
				t.Errorf("the program sees the policy: %q", out)
			}
		}},
		{"cannot read a secret from any environ", `cat /proc/*/environ 2>/dev/null | tr '\0' '\n'; env`, func(t *testing.T, out string, err error) {
			if strings.Contains(out, secret) {
				t.Errorf("secret visible inside the sandbox:\n%s", out)
			}
		}},
		{"cannot read hidden home", `ls -A ` + home + `; cat ` + home + `/.git-credentials`, func(t *testing.T, out string, err error) {
			if strings.Contains(out, secret) || strings.Contains(out, ".git-credentials\n") {
				t.Errorf("hidden home readable: %q", out)
			}
		}},
		{"cannot read or write a masked folder below a read-only one", `ls -A ` + concealed + `; cat ` + concealed + `/key; echo forged > ` + concealed + `/key; echo x > ` + concealed + `/new`, func(t *testing.T, out string, err error) {
			if strings.Contains(out, secret) || strings.Contains(out, "key\n") {
				t.Errorf("masked folder readable: %q", out)
			}
			if b, _ := os.ReadFile(filepath.Join(concealed, "key")); string(b) != secret {
				t.Errorf("masked key changed to %q", b)
			}
			if _, err := os.Stat(filepath.Join(concealed, "new")); err == nil {
				t.Error("created a file in a masked folder")
			}
		}},
		{"cannot edit read-only files", `echo tampered > ` + readonly + `/plan.csv; echo x > ` + readonly + `/new`, func(t *testing.T, out string, err error) {
			b, _ := os.ReadFile(filepath.Join(readonly, "plan.csv"))
			if string(b) != "approved\n" {
				t.Errorf("read-only file changed to %q", b)
			}
			if _, err := os.Stat(filepath.Join(readonly, "new")); err == nil {
				t.Error("created a file in a read-only directory")
			}
		}},
		{"writes its writable directory", `echo done > ` + work + `/out && cat ` + readonly + `/plan.csv`, func(t *testing.T, out string, err error) {
			if err != nil || !strings.Contains(out, "approved") {
				t.Errorf("reading or writing failed: %q, %v", out, err)
			}
			if b, _ := os.ReadFile(filepath.Join(work, "out")); string(b) != "done\n" {
				t.Errorf("writable dir: got %q", b)
			}
		}},
		{"private tmp", `echo x > ` + hostTmpMarker + ` && echo wrote`, func(t *testing.T, out string, err error) {
			if !strings.Contains(out, "wrote") {
				t.Errorf("no writable /tmp inside: %q %v", out, err)
			}
			if _, err := os.Stat(hostTmpMarker); err == nil {
				t.Error("write to /tmp inside reached the host's /tmp")
			}
		}},
		{"cannot write system files", `echo x >> /etc/hosts; echo x > /usr/planex-marker`, func(t *testing.T, out string, err error) {
			if _, err := os.Stat("/usr/planex-marker"); err == nil {
				os.Remove("/usr/planex-marker")
				t.Error("wrote under /usr")
			}
		}},
		{"is not root and cannot remount", `id -u; mount -o remount,rw / 2>&1 && echo REMOUNTED; unshare -Urm sh -c 'mount -o remount,rw / && echo REMOUNTED2' 2>&1; true`, func(t *testing.T, out string, err error) {
			if strings.HasPrefix(out, "0\n") || strings.Contains(out, "REMOUNTED") {
				t.Errorf("privileged inside: %q", out)
			}
		}},
		{"exit status passes through", `exit 7`, func(t *testing.T, out string, err error) {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Errorf("want exit status 7, got %v", err)
			}
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			out, err := run(t, s, p, work, env, r.script)
			r.check(t, out, err)
		})
	}
}

// TestDetachedProcessesDie: whatever the program leaves behind is
// killed when it ends.
func TestDetachedProcessesDie(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	work := t.TempDir()
	tag := fmt.Sprintf("%d.4242", 900000+os.Getpid())
	script := `setsid sleep ` + tag + ` </dev/null >/dev/null 2>&1 & nohup sleep ` + tag + ` </dev/null >/dev/null 2>&1 & echo started`
	out, err := run(t, s, Policy{Writable: []string{work}}, work, []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil || !strings.Contains(out, "started") {
		t.Fatalf("script failed: %q %v", out, err)
	}
	if pids := sandboxtest.Processes(t, tag); len(pids) > 0 {
		t.Errorf("processes left running after the step: %v", pids)
	}
}

// TestCancelKillsEverything: ending the context ends the whole step.
func TestCancelKillsEverything(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	tag := fmt.Sprintf("%d.4343", 900000+os.Getpid())
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep "+tag+" & echo up; wait")
	cmd.Dir = work // the test's own directory may be under /tmp, hidden inside
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cleanup, err := s.Wrap(cmd, Policy{Writable: []string{work}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := out.Read(buf); err != nil || string(buf) != "up\n" {
		t.Fatalf("reading start line: %q %v", buf, err)
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Error("cancelled command reported success")
	}
	if pids := sandboxtest.Processes(t, tag); len(pids) > 0 {
		t.Errorf("processes left after cancel: %v", pids)
	}
}

func TestStdinReachesProgram(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	cmd := exec.Command("cat")
	cmd.Dir = "/"
	cmd.Stdin = strings.NewReader("prompt text")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var out bytes.Buffer
	cmd.Stdout = &out
	cleanup, err := s.Wrap(cmd, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Run(); err != nil || out.String() != "prompt text" {
		t.Errorf("got %q, %v", out.String(), err)
	}
}

// TestBindsUnderHiddenHome: a repository inside the hidden home stays
// readable, a worktree there writable, and nothing else can be left in
// the hidden home.
func TestBindsUnderHiddenHome(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	home := t.TempDir()
	repo := filepath.Join(home, "src", "repo")
	wt := filepath.Join(home, "wt")
	for _, d := range []string{repo, wt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".netrc"), []byte("password"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Policy{Writable: []string{wt}, ReadOnly: []string{repo}, Hide: []string{home}}
	out, err := run(t, s, p, wt, []string{"PATH=" + os.Getenv("PATH")},
		`cat `+repo+`/README; echo; echo x > out && echo wrote; ls -A `+home+`; echo y > `+home+`/left 2>/dev/null || echo sealed; echo z > `+repo+`/x 2>/dev/null || echo repo-ro`)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "left")); err == nil {
		t.Error("a file was left in the hidden home")
	}
	for _, want := range []string{"hello", "wrote", "repo-ro"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q: %q", want, out)
		}
	}
	if strings.Contains(out, ".netrc") {
		t.Errorf("hidden file listed: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "out")); string(b) != "x\n" {
		t.Errorf("worktree write: %q", b)
	}
}

// BenchmarkStart compares starting `true` plainly and contained: the
// sandbox's cost per step (re-executing planex, namespaces, mounts).
func BenchmarkStart(b *testing.B) {
	s, err := New(context.Background(), ModeOn)
	if err != nil {
		b.Fatal(err)
	}
	work := b.TempDir()
	for _, contained := range []bool{false, true} {
		name := "plain"
		if contained {
			name = "contained"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("true")
				cmd.Dir = work
				cleanup := func() {}
				if contained {
					if cleanup, err = s.Wrap(cmd, Policy{Writable: []string{work}}); err != nil {
						b.Fatal(err)
					}
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				cleanup()
			}
		})
	}
}
