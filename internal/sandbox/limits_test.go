package sandbox

import (
	"strings"
	"testing"
)

func TestParseLimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		want    Limits
		wantErr string
	}{
		{in: "", want: Limits{}},
		{in: " , ", want: Limits{}},
		{in: "file-size=1G", want: Limits{FileSize: 1 << 30}},
		{in: "file-size=512m, processes=100 ,memory=2T", want: Limits{FileSize: 512 << 20, Processes: 100, Memory: 2 << 40}},
		{in: "FILE-SIZE=2048K", want: Limits{FileSize: 2 << 20}},
		{in: "file-size=1048576", want: Limits{FileSize: 1 << 20}},
		{in: "memory=off,processes=unlimited,file-size=none", want: Limits{Memory: Unlimited, Processes: Unlimited, FileSize: Unlimited}},
		{in: "processes=64,processes=128", want: Limits{Processes: 128}},
		{in: "open-files=65536,OPEN-FILES=100000", want: Limits{OpenFiles: 100000}},
		{in: "open-files=off", want: Limits{OpenFiles: Unlimited}},
		{in: "open-files=64K", wantErr: `open-files: "64K" is not a positive number or off`},
		{in: "open-files=100", wantErr: "open-files=100 is below the smallest allowed, 1024"},
		{in: "cpu=10", wantErr: `"cpu=10" is not name=value with a name of file-size, processes, memory, open-files`},
		{in: "memory", wantErr: `"memory" is not name=value`},
		{in: "memory=lots", wantErr: `memory: "lots" is not a positive number (K, M, G, T allowed) or off`},
		{in: "processes=1K", wantErr: `processes: "1K" is not a positive number or off`},
		{in: "file-size=0", wantErr: `file-size: "0" is not a positive number`},
		{in: "file-size=-5", wantErr: `file-size: "-5" is not a positive number`},
		{in: "file-size=", wantErr: `file-size: "" is not a positive number`},
		{in: "memory=9999999999T", wantErr: `memory: "9999999999" is too large`},
		{in: "memory=512M", wantErr: "memory=512M is below the smallest allowed, 1G"},
		{in: "processes=8", wantErr: "processes=8 is below the smallest allowed, 32"},
		{in: "file-size=4K", wantErr: "file-size=4K is below the smallest allowed, 1M"},
	} {
		got, err := ParseLimits(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseLimits(%q) error = %v, want one containing %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseLimits(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		// What String writes, ParseLimits reads back the same.
		if back, err := ParseLimits(got.String()); err != nil || back != got {
			t.Errorf("ParseLimits(%q) = %+v, %v; want it back, %+v", got.String(), back, err, got)
		}
	}
}

func TestLimitsWithDefaultsAndString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   Limits
		want string
	}{
		{Limits{}, "file-size=2G,processes=4096,memory=off,open-files=262144"},
		{Limits{FileSize: Unlimited, Processes: 100}, "file-size=off,processes=100,memory=off,open-files=262144"},
		{Limits{FileSize: 1<<20 + 1, Memory: 3 << 30}, "file-size=1048577,processes=4096,memory=3G,open-files=262144"},
		{Limits{Memory: 1536 << 20, OpenFiles: Unlimited}, "file-size=2G,processes=4096,memory=1536M,open-files=off"},
	} {
		if got := c.in.WithDefaults().String(); got != c.want {
			t.Errorf("%+v with defaults = %q, want %q", c.in, got, c.want)
		}
	}
	if got := (Limits{}).String(); got != "" {
		t.Errorf("zero Limits = %q, want empty", got)
	}
}

func TestLimitsHit(t *testing.T) {
	t.Parallel()
	l := Limits{FileSize: 1 << 30, Processes: 64, Memory: 1 << 30}
	for _, c := range []struct {
		name string
		l    Limits
		u    usage
		want []string
	}{
		{"nothing", l, usage{status: 0, tasks: 10, peakMemory: 100 << 20}, nil},
		{"failure without a limit", l, usage{status: 1, tasks: 3}, nil},
		{"SIGXFSZ", l, usage{status: 153}, []string{"file size limit 1G hit"}},
		{"SIGXFSZ without the limit", Limits{FileSize: Unlimited}, usage{status: 153}, nil},
		{"processes at the limit", l, usage{tasks: 63}, []string{"process limit 64 hit"}},
		{"processes within a sixteenth", l, usage{tasks: 59}, []string{"process limit 64 hit"}},
		{"processes below", l, usage{tasks: 58}, nil},
		{"processes without the limit", Limits{Processes: Unlimited}, usage{tasks: 1 << 20}, nil},
		{"memory near", l, usage{peakMemory: 1000 << 20}, []string{"memory limit 1G hit: a process of the step reached 1000M"}},
		{"memory below", l, usage{peakMemory: 900 << 20}, nil},
		{"open files past the limit", l, usage{status: 137, openFiles: 5000, openFilesLimit: 4096}, []string{"open file limit 4096 hit: the step's processes held 5000 descriptors"}},
		{"disk filled", l, usage{status: 137, diskFull: "/work/tree", diskLeft: "3 MiB"}, []string{"disk nearly full: the file system holding /work/tree had 3 MiB left"}},
		{"terminals past the bound", l, usage{status: 137, ptys: 489, ptyLimit: 128}, []string{"pseudo-terminal limit 128 hit: the step's processes held 489 terminal descriptors"}},
		{"epoll watches past the share", l, usage{status: 137, epollWatches: 20001, epollLimit: 20000}, []string{"epoll watch limit 20000 hit: the step's epoll instances held 20001 watches"}},
		{"file table low", l, usage{status: 137, openFilesLimit: 1024, fileTableLow: true, fileTableLeft: 900}, []string{"file table nearly full: the machine's file table (fs.file-max, every process's) had 900 left after the step grew it by more than its limit of 1024"}},
		{"epoll watches spent", l, usage{status: 137, epollSpent: true}, []string{"epoll watches spent: the step's user (planex's and the runner's) had fewer than 64 of its epoll watches left"}},
		{"terminals parked out of sight", l, usage{status: 137, ptyLimit: 128, ptyPoolLow: true, ptyPoolLeft: 700}, []string{"terminals nearly spent: the machine's pool (kernel.pty.max, every container's and step's) had 700 left after it grew by more than the step's 128"}},
		{"network buffers", l, usage{status: 137, netMemProto: "TCP", netMemBytes: 700 << 20}, []string{"network buffers nearly spent: the machine's TCP memory (what every network namespace's sockets hold) reached 700 MiB"}},
		{"memory nearly exhausted", l, usage{status: 137, memLeft: 300 << 20}, []string{"memory nearly exhausted: the machine had 300 MiB of memory and swap left"}},
		{"all", l, usage{status: 153, tasks: 64, peakMemory: 1 << 30}, []string{"file size", "process limit", "memory limit"}},
	} {
		got := limitsHit(c.l, c.u)
		if len(got) != len(c.want) {
			t.Errorf("%s: limitsHit = %q, want %d sentences like %q", c.name, got, len(c.want), c.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: %q lacks %q", c.name, got[i], c.want[i])
			}
		}
	}
}
