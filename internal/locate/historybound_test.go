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
// cold query runs at once) keeps the commits before and after it and the
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
	ctx := context.Background()
	src := historySource{dir: dir}
	type result struct {
		out []byte
		err error
	}
	cited := make(chan result, 1)
	go func() {
		out, err := gitRefLog(ctx, src)
		cited <- result{out, err}
	}()
	out, err := gitLog(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	c := <-cited
	if c.err != nil {
		t.Fatal(c.err)
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
	m, _ := count(c.out)
	peak, err := proc.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("history-commits=%d\nhistory-cited=%d\nhistory-subjects=%s\nhistory-peak-bytes=%d\n", n, m, strings.Join(subjects, ","), peak)
}

// TestBoundedLog: each record of git's log is kept with its message cut
// at logMessageMax and its paths dropped past logNamesMax; a record cut
// by the end of the output is dropped; reading stops at the record that
// would pass the total, keeping whole records only.
func TestBoundedLog(t *testing.T) {
	t.Parallel()
	rec := func(hash, msg, names string) string { return "\x00" + hash + "\x01" + msg + "\x02" + names }
	long := strings.Repeat("m", logMessageMax+10)
	manyNames := strings.Repeat("gen/file.py\n", logNamesMax/12+1)
	for _, c := range []struct {
		name  string
		in    string
		total int
		want  string
		full  bool
	}{
		{"plain", rec("a1", "Fix\n", "\nx.py\n") + rec("b2", "Add\n", "\ny.py\n"), 1 << 20, rec("a1", "Fix\n", "\nx.py\n") + rec("b2", "Add\n", "\ny.py\n"), false},
		{"long message", rec("a1", long, "\nx.py\n"), 1 << 20, rec("a1", long[:logMessageMax], "\nx.py\n"), false},
		{"too many paths", rec("a1", "Sweep\n", manyNames) + rec("b2", "Add\n", "\ny.py\n"), 1 << 20, rec("a1", "Sweep\n", "") + rec("b2", "Add\n", "\ny.py\n"), false},
		{"cut at the end", rec("a1", "Fix\n", "\nx.py\n") + "\x00b2\x01Add", 1 << 20, rec("a1", "Fix\n", "\nx.py\n"), false},
		{"junk before the first record", "warning\n" + rec("a1", "Fix\n", ""), 1 << 20, rec("a1", "Fix\n", ""), false},
		{"total reached", rec("a1", "Fix\n", "\nx.py\n") + rec("b2", "Add\n", "\ny.py\n"), 20, rec("a1", "Fix\n", "\nx.py\n"), true},
		{"empty", "", 1 << 20, "", false},
	} {
		got, full, err := boundedLog(strings.NewReader(c.in), c.total)
		if err != nil || string(got) != c.want || full != c.full {
			t.Errorf("%s: boundedLog = %d bytes %q…, full %v, %v; want %d bytes, full %v", c.name, len(got), abbrevBytes(got), full, err, len(c.want), c.full)
		}
	}
}

func abbrevBytes(b []byte) string { return string(b[:min(len(b), 40)]) }
