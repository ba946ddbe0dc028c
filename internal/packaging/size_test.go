package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The release binary's budget (issue #15): the Action downloads it on
// every job that misses the tool cache.
const maxReleaseMiB = 30

// goBuildRe finds the go build command lines of a workflow or action.
var goBuildRe = regexp.MustCompile(`go build [^\n]*\./cmd/planex`)

// TestReleaseBuildsAreStripped: wherever a binary people run is built
// (the release workflow, the action's build-from-source fallback), it is
// built without local paths, symbols or DWARF.
func TestReleaseBuildsAreStripped(t *testing.T) {
	for _, rel := range []string{".github/workflows/release.yml", "action.yml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		builds := goBuildRe.FindAllString(string(b), -1)
		if len(builds) == 0 {
			t.Errorf("%s: no go build of ./cmd/planex", rel)
		}
		for _, cmd := range builds {
			if !strings.Contains(cmd, "-trimpath") || !regexp.MustCompile(`-ldflags "-s -w\b`).MatchString(cmd) {
				t.Errorf("%s: %q is not built with -trimpath -ldflags \"-s -w …\"", rel, cmd)
			}
		}
	}
}

// BenchmarkReleaseBinarySize builds planex as the release workflow does
// (linux/amd64) and reports its size against the budget:
//
//	go test ./internal/packaging -run '^$' -bench ReleaseBinarySize -benchtime 1x
func BenchmarkReleaseBinarySize(b *testing.B) {
	out := filepath.Join(b.TempDir(), "planex")
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=bench", "-o", out, "./cmd/planex")
		cmd.Dir = moduleRoot(b)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, msg)
		}
	}
	fi, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	mib := float64(fi.Size()) / (1 << 20)
	b.ReportMetric(mib, "MiB")
	b.ReportMetric(mib/maxReleaseMiB, "x-budget")
	b.Logf("release binary (linux/amd64): %.1f MiB, %.2f× the %d MiB budget", mib, mib/maxReleaseMiB, maxReleaseMiB)
}

// moduleRoot is the directory of go.mod, as the go command finds it.
func moduleRoot(tb testing.TB) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		tb.Fatalf("finding go.mod: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
