package locate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/proc"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

const (
	// hugeMessage is the size of the hostile commit's message.
	hugeMessage = 128 << 20
	// historyReadPeak bounds the peak resident memory of a process that
	// reads that history: far below the message, well above a test
	// binary's own (about 10-20 MiB).
	historyReadPeak = 48 << 20
	historyChildEnv = "PLANEX_HISTORY_CHILD"
)

// hugeMessageRepo is a repository whose history holds, between two
// ordinary commits, one whose message is hugeMessage bytes of words (a
// `git commit -F` of a generated file away). The commit object is
// streamed into git, never held here.
func hugeMessageRepo(t *testing.T) (dir, huge string) {
	t.Helper()
	dir = t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	commitFiles(t, dir, "Round yards in conversions", map[string]string{"geo/units.py": project["geo/units.py"] + "\n# yards\n"})
	repomaptest.WriteFiles(t, dir, map[string]string{"geo/projection.py": project["geo/projection.py"] + "\n# poles\n"})
	repomaptest.Git(t, dir, "add", "-A")
	tree := strings.TrimSpace(repomaptest.Git(t, dir, "write-tree"))
	parent := strings.TrimSpace(repomaptest.Git(t, dir, "rev-parse", "HEAD"))
	// The fastest compression: the object's size is what matters here,
	// and zlib's default level spent most of the test's time.
	cmd := exec.Command("git", "-c", "core.looseCompression=1", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir = dir
	pr, pw := io.Pipe()
	cmd.Stdin = pr
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		fmt.Fprintf(w, "tree %s\nparent %s\nauthor A <a@example.com> 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\n\nPolar singularity near the poles\n\n", tree, parent)
		line := []byte("latitude overflow singularity projection clamp poles degrees again and again\n")
		for n := 0; n < hugeMessage; n += len(line) {
			w.Write(line)
		}
		pw.CloseWithError(w.Flush())
	}()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("writing the huge commit: %v", err)
	}
	huge = strings.TrimSpace(string(out))
	repomaptest.Git(t, dir, "update-ref", "HEAD", huge)
	repomaptest.Git(t, dir, "reset", "-q", "--hard")
	commitFiles(t, dir, "Later fix of the units", map[string]string{"geo/units.py": project["geo/units.py"] + "\n# feet\n"})
	return dir, huge
}

// TestRedTeamHugeCommitMessageBounded: a repository whose history holds a
// commit with a 128 MiB message. Reading the history (the two logs a
// cold query reads with one git log) keeps the commits before and after it and the
// huge one with the start of its message, and the reading process's peak
// resident memory stays under historyReadPeak: git's output is streamed
// and cut, never held whole. Measured in a child process, whose peak is
// its own.
func TestRedTeamHugeCommitMessageBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 128 MiB commit message (-short)")
	}
	if _, err := proc.PeakRSS(); err != nil {
		t.Skipf("no peak RSS to measure with: %v", err)
	}
	dir, huge := hugeMessageRepo(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHistoryReadChild$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), historyChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("history child: %v\n%s", err, out)
	}
	report := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.HasPrefix(k, "history-") {
			report[k] = v
		}
	}
	peak, err := strconv.ParseUint(report["history-peak-bytes"], 10, 64)
	if err != nil {
		t.Fatalf("the child reported no peak:\n%s", out)
	}
	t.Logf("peak RSS reading the history: %.1f MiB; %s commits indexed", float64(peak)/(1<<20), report["history-commits"])
	if peak > historyReadPeak {
		t.Errorf("reading a history with a %d MiB message peaked at %d MiB, want under %d MiB", hugeMessage>>20, peak>>20, historyReadPeak>>20)
	}
	if report["history-commits"] != "4" || report["history-cited"] != "4" {
		t.Errorf("the logs kept %s and %s commits, want all 4 (the huge one cut):\n%s", report["history-commits"], report["history-cited"], out)
	}
	if !strings.Contains(report["history-subjects"], huge[:7]) {
		t.Errorf("the huge commit %s is not among %s", huge[:7], report["history-subjects"])
	}
}

// TestHistoryReadChild is the body of the child process of
// TestRedTeamHugeCommitMessageBounded: it reads the history of the
// repository named by its variable as a cold query does and reports.
func TestHistoryReadChild(t *testing.T) {
	dir := os.Getenv(historyChildEnv)
	if dir == "" {
		t.Skip("runs only as the child process of TestRedTeamHugeCommitMessageBounded (" + historyChildEnv + " unset)")
	}
	out, cited, err := readLogs(context.Background(), historySource{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	count := func(log []byte) (n int, subjects []string) {
		for _, rec := range bytes.Split(log, []byte{0}) {
			if hash, msg, ok := bytes.Cut(rec, []byte{1}); ok {
				n++
				subjects = append(subjects, string(hash)+":"+strconv.Itoa(len(msg)))
			}
		}
		return n, subjects
	}
	n, subjects := count(out)
	m, _ := count(cited)
	peak, err := proc.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("history-commits=%d\nhistory-cited=%d\nhistory-subjects=%s\nhistory-peak-bytes=%d\n", n, m, strings.Join(subjects, ","), peak)
}

// TestBoundedLog: each record of git's log is kept with its message cut
// at logMessageMax and its paths dropped past logNamesMax, and goes to
// every log it belongs to (a merge, two parents or more, only to the one
// that takes merges); a record cut by the end of the output is dropped; a
// log stops at its record count or at the record that would pass its
// total, keeping whole records only, and reading stops when both have.
func TestBoundedLog(t *testing.T) {
	t.Parallel()
	in := func(parents, hash, msg, names string) string {
		return "\x00" + parents + "\x03" + hash + "\x01" + msg + "\x02" + names
	}
	rec := func(hash, msg, names string) string { return "\x00" + hash + "\x01" + msg + "\x02" + names }
	long := strings.Repeat("m", logMessageMax+10)
	manyNames := strings.Repeat("gen/file.py\n", logNamesMax/12+1)
	octopus := strings.TrimSpace(strings.Repeat("abcdef0 ", logHashMax))
	a, b := rec("a1", "Fix\n", "\nx.py\n"), rec("b2", "Add\n", "\ny.py\n")
	inA, inB := in("p0", "a1", "Fix\n", "\nx.py\n"), in("p1", "b2", "Add\n", "\ny.py\n")
	merge := rec("m3", "Merge #4\n", "\nz.py\n")
	inMerge := in("p1 p2", "m3", "Merge #4\n", "\nz.py\n")
	big := 1 << 20
	for _, c := range []struct {
		name                string
		in                  string
		max, total          int
		hist, cited         string
		histFull, citedFull bool
		done                bool
	}{
		{name: "plain", in: inA + inB, max: 10, total: big, hist: a + b, cited: a + b},
		{name: "merges", in: inA + inMerge + in(octopus, "o4", "Octopus\n", "") + inB, max: 10, total: big,
			hist: a + b, cited: a + merge + rec("o4", "Octopus\n", "") + b},
		{name: "root commit", in: in("", "r0", "Start\n", "\nx.py\n"), max: 10, total: big,
			hist: rec("r0", "Start\n", "\nx.py\n"), cited: rec("r0", "Start\n", "\nx.py\n")},
		{name: "long message", in: in("p0", "a1", long, "\nx.py\n"), max: 10, total: big,
			hist: rec("a1", long[:logMessageMax], "\nx.py\n"), cited: rec("a1", long[:logMessageMax], "\nx.py\n")},
		{name: "too many paths", in: in("p0", "a1", "Sweep\n", manyNames) + inB, max: 10, total: big,
			hist: rec("a1", "Sweep\n", "") + b, cited: rec("a1", "Sweep\n", "") + b},
		{name: "cut at the end", in: inA + "\x00p1\x03b2\x01Add", max: 10, total: big, hist: a, cited: a},
		{name: "junk before the first record", in: "warning\n" + inA, max: 10, total: big, hist: a, cited: a},
		{name: "total reached", in: inA + inB, max: 10, total: 20, hist: a, cited: a, histFull: true, citedFull: true, done: true},
		{name: "counts reached", in: inMerge + inA + inB + in("p2", "c3", "More\n", ""), max: 2, total: big,
			hist: a + b, cited: merge + a, done: true},
		{name: "empty", in: "", max: 10, total: big},
	} {
		h := &logPart{max: c.max, total: c.total}
		ct := &logPart{max: c.max, total: c.total, merges: true}
		done, err := boundedLog(strings.NewReader(c.in), nil, h, ct)
		if err != nil || done != c.done {
			t.Errorf("%s: boundedLog = done %v, %v; want done %v", c.name, done, err, c.done)
		}
		for _, p := range []struct {
			what string
			got  *logPart
			want string
			full bool
		}{{"history", h, c.hist, c.histFull}, {"cited", ct, c.cited, c.citedFull}} {
			if string(p.got.out) != p.want || p.got.full != p.full {
				t.Errorf("%s: %s log = %d bytes %q…, full %v; want %d bytes %q…, full %v", c.name, p.what, len(p.got.out), abbrevBytes(p.got.out), p.got.full, len(p.want), abbrevBytes([]byte(p.want)), p.full)
			}
		}
	}
}

func abbrevBytes(b []byte) string { return string(b[:min(len(b), 40)]) }
