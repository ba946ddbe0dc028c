//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestPlanIDs(t *testing.T) {
	t.Parallel()
	user := planIDs(1000, 100, SandboxID)
	if user.outer != 0 || user.host != 0 || user.setgroups || len(user.uids) != 1 || user.uids[0] != (syscall.SysProcIDMap{ContainerID: 0, HostID: 1000, Size: 1}) ||
		user.gids[0] != (syscall.SysProcIDMap{ContainerID: 0, HostID: 100, Size: 1}) {
		t.Errorf("an ordinary user: %+v", user)
	}
	var attr syscall.SysProcAttr
	user.apply(&attr)
	if attr.Credential != nil || attr.GidMappingsEnableSetgroups {
		t.Errorf("an ordinary user's init changes credentials: %+v", attr)
	}
	root := planIDs(0, 0, SandboxID)
	wantU := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: outerID, HostID: SandboxID, Size: 1}}
	if root.outer != outerID || root.host != SandboxID || !root.setgroups || !slices.Equal(root.uids, wantU) || !slices.Equal(root.gids, wantU) {
		t.Errorf("root: %+v", root)
	}
	attr = syscall.SysProcAttr{}
	root.apply(&attr)
	if c := attr.Credential; c == nil || c.Uid != 0 || c.Gid != 0 || len(c.Groups) != 0 || c.NoSetGroups || !attr.GidMappingsEnableSetgroups {
		t.Errorf("root's init keeps supplementary groups: %+v %+v", attr, attr.Credential)
	}
}

func TestProgramAttr(t *testing.T) {
	t.Parallel()
	a := programAttr(config{UID: 1000, GID: 100})
	if a.Cloneflags != syscall.CLONE_NEWUSER || a.Credential != nil || !a.Setsid ||
		a.UidMappings[0] != (syscall.SysProcIDMap{ContainerID: 1000, HostID: 0, Size: 1}) || a.GidMappings[0] != (syscall.SysProcIDMap{ContainerID: 100, HostID: 0, Size: 1}) {
		t.Errorf("an ordinary user's program: %+v", a)
	}
	r := programAttr(config{UID: 65534, GID: 65534, Outer: outerID})
	if r.UidMappings[0] != (syscall.SysProcIDMap{ContainerID: 65534, HostID: outerID, Size: 1}) || r.Credential == nil ||
		r.Credential.Uid != 65534 || r.Credential.Gid != 65534 || !r.Credential.NoSetGroups {
		t.Errorf("root's program: %+v %+v", r, r.Credential)
	}
	for id, want := range map[int]int{0: 65534, 1000: 1000, 65534: 65534} {
		if got := innerID(id); got != want {
			t.Errorf("innerID(%d) = %d, want %d", id, got, want)
		}
	}
}

func TestDevEntries(t *testing.T) {
	t.Parallel()
	want := []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}
	if got := DevEntries(); !slices.Equal(got, want) {
		t.Errorf("DevEntries() = %q, want %q", got, want)
	}
	for _, bad := range []string{"kvm", "loop-control", "vsock", "tty1", "mem", "kmsg", "console", "sda", "fuse", "net"} {
		if slices.Contains(DevEntries(), bad) {
			t.Errorf("/dev would hold %s", bad)
		}
	}
	for name, target := range devLinks {
		if !strings.HasPrefix(target, "/proc/self/fd") && target != "pts/ptmx" {
			t.Errorf("/dev/%s leads to %s", name, target)
		}
	}
}

func TestParseStatusAndSampleProcs(t *testing.T) {
	t.Parallel()
	threads, peak := parseStatus([]byte("Name:\tsh\nVmPeak:\t   2048 kB\nThreads:\t3\nbad line\nVmSize:\n"))
	if threads != 3 || peak != 2048<<10 {
		t.Errorf("parseStatus = %d, %d", threads, peak)
	}
	if th, pk := parseStatus(nil); th != 0 || pk != 0 {
		t.Errorf("parseStatus(nil) = %d, %d", th, pk)
	}
	proc := t.TempDir()
	for pid, status := range map[string]string{
		"1":  "Threads:\t50\nVmPeak:\t99999999 kB\n", // the init: not the step's
		"12": "Threads:\t4\nVmPeak:\t1024 kB\n",
		"13": "", // gone while read: still one
		"14": "Threads:\t1\nVmPeak:\t4096 kB\n",
	} {
		if err := os.Mkdir(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if status != "" {
			if err := os.WriteFile(filepath.Join(proc, pid, "status"), []byte(status), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(proc, "sys"), 0o755); err != nil {
		t.Fatal(err)
	}
	if tasks, peak := sampleProcs(proc); tasks != 6 || peak != 4096<<10 {
		t.Errorf("sampleProcs = %d tasks, %d bytes; want 6, %d", tasks, peak, 4096<<10)
	}
	if tasks, peak := sampleProcs(filepath.Join(proc, "missing")); tasks != 0 || peak != 0 {
		t.Errorf("sampleProcs of nothing = %d, %d", tasks, peak)
	}
}

// TestWrapConfig: what Wrap hands the init for a policy, without
// starting anything.
func TestWrapConfig(t *testing.T) {
	t.Parallel()
	s := &Sandbox{exe: "/planex"}
	base := t.TempDir()
	real := filepath.Join(base, "real")
	link := filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	decode := func(t *testing.T, cmd *exec.Cmd) config {
		t.Helper()
		if cmd.Path != "/planex" || len(cmd.Args) != 2 || cmd.Args[0] != initArg0 {
			t.Fatalf("the command does not start the init: %s %q", cmd.Path, cmd.Args)
		}
		b, err := os.ReadFile(cmd.Args[1])
		if err != nil {
			t.Fatal(err)
		}
		var c config
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		name    string
		p       Policy
		dir     string
		wantErr string
		check   func(t *testing.T, c config)
	}{
		{name: "links resolved, defaults filled", p: Policy{Writable: []string{link}, ReadOnly: []string{link + "/."}, Hide: []string{link, filepath.Join(base, "gone")}, Mask: []string{link}}, dir: link,
			check: func(t *testing.T, c config) {
				if c.Dir != real || !slices.Equal(c.Writable, []string{real}) || !slices.Equal(c.ReadOnly, []string{real}) || !slices.Equal(c.Hide, []string{real}) {
					t.Errorf("paths not canonical: %+v", c)
				}
				if !slices.Contains(c.Mask, real) || c.Limits != (Limits{}).WithDefaults() || c.Path != "/bin/echo" || !slices.Equal(c.Args, []string{"/bin/echo", "hi"}) {
					t.Errorf("config: %+v", c)
				}
				if os.Getuid() == 0 && (c.Outer != outerID || c.UID != 65534) || os.Getuid() != 0 && (c.Outer != 0 || c.UID != os.Getuid()) {
					t.Errorf("ids: uid %d outer %d", c.UID, c.Outer)
				}
			}},
		{name: "limits pass through", p: Policy{Limits: Limits{Processes: 77, Memory: Unlimited}}, dir: real,
			check: func(t *testing.T, c config) {
				if c.Limits != (Limits{FileSize: DefaultFileSize, Processes: 77, Memory: Unlimited, OpenFiles: DefaultOpenFiles}) {
					t.Errorf("limits: %+v", c.Limits)
				}
			}},
		{name: "missing writable", p: Policy{Writable: []string{filepath.Join(base, "nope")}}, dir: real, wantErr: "sandbox: writable directory: "},
		{name: "missing read-only", p: Policy{ReadOnly: []string{filepath.Join(base, "nope")}}, dir: real, wantErr: "sandbox: read-only directory: "},
		{name: "missing working directory", dir: filepath.Join(base, "nope"), wantErr: "sandbox: working directory: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("/bin/echo", "hi")
			cmd.Dir = c.dir
			cleanup, err := s.Wrap(cmd, c.p)
			defer cleanup()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			attr := cmd.SysProcAttr
			want := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC)
			if attr.Cloneflags&want != want || attr.Pdeathsig != syscall.SIGKILL {
				t.Errorf("namespaces %#x, death signal %v", attr.Cloneflags, attr.Pdeathsig)
			}
			c.check(t, decode(t, cmd))
		})
	}
	started := exec.Command("true")
	started.Process = &os.Process{Pid: 1}
	if _, err := s.Wrap(started, Policy{}); err == nil {
		t.Error("wrapped a started command")
	}
	bad := exec.Command("no-such-program-4711")
	if _, err := s.Wrap(bad, Policy{}); err == nil {
		t.Error("wrapped a command that cannot start")
	}
	rel := exec.Command("./x")
	rel.Dir = real
	rel.Err = nil
	rel.Path = "./x"
	cleanup, err := s.Wrap(rel, Policy{})
	defer cleanup()
	if err != nil || decode(t, rel).Path != filepath.Join(real, "x") {
		t.Errorf("a relative program is not taken from the command's directory: %v", err)
	}
}

// TestWatchAndReport: the watcher counts what runs and the report names
// the limits reached (here on the test's own /proc, which holds at least
// the test itself).
func TestWatchAndReport(t *testing.T) {
	t.Parallel()
	w := watch(watchPlan{end: func() { t.Error("the watcher ended a step that held nothing") }})
	u := w.finish(128 + sigXFSZ)
	if u.status != 153 || u.tasks < 1 || u.peakMemory <= 0 {
		t.Fatalf("watcher saw %+v", u)
	}
	var b strings.Builder
	reportLimits(&b, Limits{FileSize: 1 << 20, Processes: u.tasks, Memory: Unlimited}, u)
	out := b.String()
	if strings.Count(out, "\n") != 2 || !strings.Contains(out, "planex sandbox: file size limit 1M hit") || !strings.Contains(out, "process limit") {
		t.Errorf("report:\n%s", out)
	}
	b.Reset()
	reportLimits(&b, Limits{}.WithDefaults(), usage{})
	if b.Len() != 0 {
		t.Errorf("a report with nothing hit: %q", b.String())
	}
}

func TestWithLimits(t *testing.T) {
	t.Parallel()
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "x"}}
	l := Limits{FileSize: 5 << 20, Processes: 40, Memory: Unlimited}
	if err := withLimits(cmd, l); err != nil {
		t.Fatal(err)
	}
	if cmd.Path != "/proc/self/exe" || len(cmd.Args) != 6 || cmd.Args[0] != limitsArg0 || cmd.Args[2] != "/bin/sh" || !slices.Equal(cmd.Args[3:], []string{"sh", "-c", "x"}) {
		t.Fatalf("command: %s %q", cmd.Path, cmd.Args)
	}
	var back Limits
	if err := json.Unmarshal([]byte(cmd.Args[1]), &back); err != nil || back != l {
		t.Errorf("limits passed as %q: %+v, %v", cmd.Args[1], back, err)
	}
	var stderr strings.Builder
	if code := limitsMain(&stderr, "{", "/bin/true", []string{"true"}); code != exitSetup || !strings.Contains(stderr.String(), "reading the limits") {
		t.Errorf("bad limits: exit %d (%q), want %d", code, stderr.String(), exitSetup)
	}
}

func TestMaskLeavesWhatIsNotThere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "missing"), dangling} {
		if sealed, err := mask(p); sealed || err != nil {
			t.Errorf("mask(%s) = %v, %v; want nothing done", p, sealed, err)
		}
	}
	if !isDir(dir) || isDir(dangling) || isDir(filepath.Join(dir, "missing")) {
		t.Error("isDir")
	}
	if a := readOnlyAttr(); a.Attr_set&(0x1|0x2) != 0x3 { // MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
		t.Errorf("read-only binds get %#x", a.Attr_set)
	}
}

// TestProbeFailsWithoutTheInit: a planex binary that cannot start makes
// the sandbox unavailable, with the reason.
func TestProbeFailsWithoutTheInit(t *testing.T) {
	t.Parallel()
	s := &Sandbox{exe: filepath.Join(t.TempDir(), "no-planex")}
	err := s.Probe(t.Context())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no-planex") {
		t.Errorf("Probe = %v, want ErrUnavailable naming the binary", err)
	}
	if err2 := s.Probe(t.Context()); err2 != err {
		t.Errorf("a second Probe = %v, want the first answer", err2)
	}
	if err := lendStdio(config{}); err != nil {
		t.Errorf("an ordinary user's streams: %v", err)
	}
}

// TestLendRefusesWhatItCannotWalk: a writable directory that vanished
// stops the step before it starts, and nothing stays lent.
func TestLendRefusesWhatItCannotWalk(t *testing.T) {
	t.Parallel()
	needRoot(t)
	s := &Sandbox{exe: "/planex"}
	ok := t.TempDir()
	if _, err := s.lend([]string{ok, filepath.Join(ok, "gone")}, SandboxID); err == nil || !strings.Contains(err.Error(), "lending") {
		t.Fatalf("lend = %v, want an error naming the lending", err)
	}
	if uid, _ := ownerOf(t, ok); uid != 0 {
		t.Errorf("the first directory stayed lent: owner %d", uid)
	}
	if len(s.lent.held) != 0 {
		t.Errorf("holds left: %v", s.lent.held)
	}
}

func TestRootProgramID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m    string
		want bool
	}{
		{"         0          0 4294967295\n", true},
		{"         0       1000          1\n         1     100000      65536\n", false}, // rootless container
		{"0 0 1\n1999999999 5 2\n", true},
		{"0 0 1\n2000000001 5 2\n", false},
		{"", false},
		{"garbage\n0 x 1\n", false},
	} {
		if got := mapsID(c.m, SandboxID); got != c.want {
			t.Errorf("mapsID(%q) = %v, want %v", c.m, got, c.want)
		}
	}
	// This machine: planex's namespace is the host's here, or a
	// container's; either way the answer is one of the two.
	if id := rootProgramID(); id != SandboxID && id != fallbackID {
		t.Errorf("rootProgramID() = %d", id)
	}
}

// TestProbeWithoutNetworkNamespaces: on a machine that makes no network
// namespaces (here a user namespace whose limit of them is 0), Probe's
// first no-op process fails, the second, with the machine's network,
// runs, so the sandbox works and ProbeNetwork says why the network
// cannot be contained. The check runs in a child of the test binary,
// which sets the limit in a user namespace of its own.
func TestProbeWithoutNetworkNamespaces(t *testing.T) {
	t.Parallel()
	if os.Getenv("PLANEX_TEST_NO_NETNS") == "1" {
		probeWithoutNetworkNamespaces()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProbeWithoutNetworkNamespaces$")
	cmd.Env = append(os.Environ(), "PLANEX_TEST_NO_NETNS=1")
	if os.Getuid() != 0 {
		t.Skip("the child maps every id into its user namespace, as only root may")
	}
	// Every id maps to itself, so the sandbox finds the ids it uses.
	all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: all, GidMappings: all, GidMappingsEnableSetgroups: true}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "probe: sandbox ok; network: ") {
		t.Errorf("the child said:\n%s", out)
	}
	t.Logf("%s", out)
}

// probeWithoutNetworkNamespaces is TestProbeWithoutNetworkNamespaces'
// child: it exits non-zero, saying why, unless the sandbox works and
// the network probe fails with ErrNoNetworkNamespace.
func probeWithoutNetworkNamespaces() {
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", a...)
		os.Exit(3)
	}
	if err := os.WriteFile("/proc/sys/user/max_net_namespaces", []byte("0\n"), 0o644); err != nil {
		fail("limiting network namespaces: %v", err)
	}
	s, err := New(context.Background(), ModeOn)
	if err != nil {
		fail("New = %v, want a sandbox: only the network is missing", err)
	}
	netErr := s.ProbeNetwork(context.Background())
	if !errors.Is(netErr, ErrNoNetworkNamespace) || errors.Is(netErr, ErrUnavailable) || !strings.Contains(netErr.Error(), ": ") {
		fail("ProbeNetwork = %v, want ErrNoNetworkNamespace with the reason", netErr)
	}
	if err := s.ProbeNetwork(context.Background()); err != netErr {
		fail("a second ProbeNetwork = %v, want the first answer", err)
	}
	fmt.Printf("probe: sandbox ok; network: %v\n", netErr)
}
