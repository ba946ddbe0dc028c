// Package repomaptest creates real git repositories for tests and
// benchmarks of the repository map and the ranker.
package repomaptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Git runs git in dir with a fixed identity and fails the test on error.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		// A commit of thousands of files would otherwise start a detached
		// "git gc --auto" that keeps writing into .git after the test or
		// benchmark ends, racing its cleanup and later cache keys.
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
		"GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// WriteFiles writes path -> content under dir, creating directories.
func WriteFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// InitRepo creates a git repository in dir holding files, committed.
func InitRepo(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	WriteFiles(tb, dir, files)
	Git(tb, dir, "init", "-q", "-b", "main")
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "-m", "initial", "--no-gpg-sign")
}

// words gives generated code a realistic, varied vocabulary.
var words = strings.Fields(`account address alias batch buffer cache channel client column config
connection context cursor dataset decode delta dialect encode engine entry event field filter format
frame graph handler header index item journal key layer lexer limit linter loader lock manager marker
matrix message meta model module node offset option parser path payload plan pool query queue reader
record region request result route rule schema scope segment session shard signal source span state
stream table task template token tracker tree unit update user value vector view window worker writer`)

func word(i int) string { return words[i%len(words)] }

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// GenerateRepo writes a repository of n source files (a mix of Go and Python
// packages with imports between them) into dir and commits it. It returns
// the path of one generated Python file and a query that names it.
func GenerateRepo(tb testing.TB, dir string, n int) (target, query string) {
	tb.Helper()
	files := map[string]string{
		"go.mod":    "module example.com/big\n\ngo 1.22\n",
		"Makefile":  "test:\n\tgo test ./...\n",
		"README.md": "# big\n",
	}
	const perDir = 40
	for i := 0; i < n; i++ {
		d := i / perDir
		a, b, c := word(i), word(i*7+3), word(i*13+5)
		if i%2 == 0 {
			dir := fmt.Sprintf("pkg/%s%d", word(d), d)
			imp := fmt.Sprintf("example.com/big/pkg/%s%d", word(d+1), d+1)
			var sb strings.Builder
			fmt.Fprintf(&sb, "package %s%d\n\nimport (\n\t\"fmt\"\n\t_ %q\n)\n\n", word(d), d, imp)
			fmt.Fprintf(&sb, "// %s%s%d handles %s %s for the %s.\ntype %s%s%d struct {\n\tName string\n\tCount int\n}\n\n", title(a), title(b), i, a, b, c, title(a), title(b), i)
			for f := 0; f < 6; f++ {
				fmt.Fprintf(&sb, "// %s%s%d returns the %s of the %s.\nfunc (x *%s%s%d) %s%s%d(v int) string {\n\tif v > %d {\n\t\treturn fmt.Sprintf(\"%%s %s %%d\", x.Name, v)\n\t}\n\treturn x.Name\n}\n\n",
					title(word(i+f)), title(c), f, word(i+f), c, title(a), title(b), i, title(word(i+f)), title(c), f, f*3, word(i*f+1))
			}
			files[fmt.Sprintf("%s/%s_%s_%d.go", dir, a, b, i)] = sb.String()
		} else {
			dir := fmt.Sprintf("py/%s%d", word(d), d)
			var sb strings.Builder
			fmt.Fprintf(&sb, "\"\"\"%s %s utilities for %s.\"\"\"\nimport os\nfrom py.%s%d import helpers\n\n\n", a, b, c, word(d), d)
			fmt.Fprintf(&sb, "class %s%s%d:\n    \"\"\"Keeps %s and %s.\"\"\"\n\n", title(a), title(c), i, a, c)
			for f := 0; f < 6; f++ {
				fmt.Fprintf(&sb, "    def %s_%s_%d(self, value):\n        \"\"\"Return the %s %s.\"\"\"\n        if value > %d:\n            return os.path.join(str(value), %q)\n        return None\n\n",
					word(i+f), b, f, word(i+f), b, f, word(i*f+2))
			}
			files[fmt.Sprintf("%s/%s_%s_%d.py", dir, a, b, i)] = sb.String()
			files[dir+"/__init__.py"] = ""
			files[dir+"/helpers.py"] = "def helper():\n    return 1\n"
			if target == "" && i > n/2 {
				target = fmt.Sprintf("%s/%s_%s_%d.py", dir, a, b, i)
				query = fmt.Sprintf("Calling %s%s%d.%s_%s_3 returns None for large values; expected a %s path", title(a), title(c), i, word(i+3), b, b)
			}
		}
	}
	files["py/__init__.py"] = ""
	InitRepo(tb, dir, files)
	// planex's state key trusts no stamp younger than its racy window: it
	// reads such a file's contents (and once more when the file has aged),
	// and lists again while the index is that young. The key stays the
	// same as the tree ages, so tests use the tree at once; a benchmark
	// that times a query calls AwaitSettled first.
	return target, query
}

// Settle is how long after a tree's last write planex's state key relies
// on stamps alone: longer than the repository map's racy window (2 s; a
// test in package repomap keeps the two apart).
const Settle = 2100 * time.Millisecond

// AwaitSettled makes a tree GenerateRepo just wrote in dir look like a
// real work tree, older than its index and than the racy window, so that
// a benchmark's timed queries measure what they would on one. Files
// written in the same second as git's index are "racily clean": git
// re-reads them on every status until the index is rewritten later, so
// the index is refreshed once a second has passed; then it waits Settle,
// after which planex's state key reads no file's contents.
func AwaitSettled(tb testing.TB, dir string) {
	tb.Helper()
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	Git(tb, dir, "update-index", "-q", "--refresh")
	time.Sleep(Settle)
}

// ReadAll is the floor a repository map is measured against: list the
// files with git and read every one of them (in parallel, as the map
// does), with no processing. It returns the bytes read.
func ReadAll(tb testing.TB, dir string) int64 {
	tb.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-files", "-co", "--exclude-standard", "-z").Output()
	if err != nil {
		tb.Fatal(err)
	}
	paths := strings.Split(string(out), "\x00")
	var wg sync.WaitGroup
	var total atomic.Int64
	next := make(chan string)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if data, err := os.ReadFile(filepath.Join(dir, p)); err == nil {
					total.Add(int64(len(data)))
				}
			}
		}()
	}
	for _, p := range paths {
		if p != "" {
			next <- p
		}
	}
	close(next)
	wg.Wait()
	return total.Load()
}

// Floor times ReadAll a few times and returns the fastest run: on a shared
// machine the minimum is the steadiest estimate of the real cost.
func Floor(tb testing.TB, dir string) time.Duration {
	tb.Helper()
	best := time.Duration(1<<63 - 1)
	for i := 0; i < 3; i++ {
		start := time.Now()
		ReadAll(tb, dir)
		best = min(best, time.Since(start))
	}
	return best
}

// ReportRatio reports a benchmark's time per operation as a multiple of
// floor, measured in the same run ("x-floor").
func ReportRatio(b *testing.B, floor time.Duration) {
	b.Helper()
	if b.N > 0 && floor > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(floor), "x-floor")
	}
}
