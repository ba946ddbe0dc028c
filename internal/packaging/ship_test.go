package packaging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/planexhq/planex/internal/agent/clis"
)

// parseWorkflow reads a workflow of this repository with actionlint's parser.
func parseWorkflow(t *testing.T, rel string) *actionlint.Workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatalf("parsing %s: %v", rel, errs[0])
	}
	return wf
}

func stepRun(s *actionlint.Step) string {
	if r, ok := s.Exec.(*actionlint.ExecRun); ok && r.Run != nil {
		return r.Run.Value
	}
	return ""
}

func stepUses(s *actionlint.Step) string {
	if a, ok := s.Exec.(*actionlint.ExecAction); ok && a.Uses != nil {
		return a.Uses.Value
	}
	return ""
}

// runsCIScript reports whether a job runs .ci/run, and after which steps.
func runsCIScript(job *actionlint.Job) (int, bool) {
	for i, s := range job.Steps {
		for _, line := range strings.Split(stepRun(s), "\n") {
			if strings.TrimSpace(line) == ".ci/run" {
				return i, true
			}
		}
	}
	return 0, false
}

const usernsLift = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"

// GitHub's CI runs what .ci/run runs (one source of truth), on a runner
// where the sandbox can be made, with Go from go.mod and Node for the CLIs.
func TestCIWorkflowRunsCIScript(t *testing.T) {
	t.Parallel()
	wf := parseWorkflow(t, ".github/workflows/ci.yml")
	var found bool
	for name, job := range wf.Jobs {
		at, ok := runsCIScript(job)
		if !ok {
			continue
		}
		found = true
		lifted, goMod, node := -1, false, false
		for i, s := range job.Steps[:at] {
			if strings.Contains(stepRun(s), usernsLift) {
				lifted = i
			}
			uses := stepUses(s)
			if a, ok := s.Exec.(*actionlint.ExecAction); ok && strings.HasPrefix(uses, "actions/setup-go@") {
				if in := a.Inputs["go-version-file"]; in != nil && in.Value != nil && in.Value.Value == "go.mod" {
					goMod = true
				}
			}
			if strings.HasPrefix(uses, "actions/setup-node@") {
				node = true
			}
		}
		if lifted < 0 {
			t.Errorf("job %s runs .ci/run without first running %q", name, usernsLift)
		}
		if !goMod {
			t.Errorf("job %s runs .ci/run without setting up Go from go.mod", name)
		}
		if !node {
			t.Errorf("job %s runs .ci/run without Node (npm installs the tested CLIs)", name)
		}
		if job.TimeoutMinutes == nil || job.TimeoutMinutes.Value < 30 {
			t.Errorf("job %s has less than the 30 minutes the tests need", name)
		}
		for _, s := range job.Steps {
			if strings.Contains(stepRun(s), "go test") {
				t.Errorf("job %s runs go test itself instead of leaving it to .ci/run", name)
			}
		}
	}
	if !found {
		t.Fatal("no job of ci.yml runs .ci/run")
	}
	callable := false
	for _, ev := range wf.On {
		if _, ok := ev.(*actionlint.WorkflowCallEvent); ok {
			callable = true
		}
	}
	if !callable {
		t.Error("ci.yml cannot be called by release.yml (no workflow_call trigger)")
	}
}

// .ci/run checks the release targets planex builds beside Linux: vet and
// build for Windows and macOS on arm64, each a command on a line of its own
// in a script that stops at the first failure (under `set -e`, a command
// failing inside an `a && b` list or a compound command's condition does
// not stop the script: both cross vets had failed unseen that way).
func TestCIScriptCrossChecks(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if !slices.Contains(lines, "set -euo pipefail") {
		t.Error(".ci/run does not start with set -euo pipefail")
	}
	for _, want := range []string{
		"GOOS=windows GOARCH=amd64 go vet ./...", "GOOS=windows GOARCH=amd64 go build -o /dev/null ./cmd/planex",
		"GOOS=darwin GOARCH=arm64 go vet ./...", "GOOS=darwin GOARCH=arm64 go build -o /dev/null ./cmd/planex",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf(".ci/run does not run %q as a line of its own (unindented, outside any list or compound command)", want)
		}
	}
}

// A release is built only after the tests pass, and its archives get a
// build provenance attestation.
func TestReleaseAfterTestsWithProvenance(t *testing.T) {
	t.Parallel()
	wf := parseWorkflow(t, ".github/workflows/release.yml")
	tests := map[string]bool{}
	for id, job := range wf.Jobs {
		if _, ok := runsCIScript(job); ok {
			tests[id] = true
		}
		if job.WorkflowCall != nil && job.WorkflowCall.Uses != nil && job.WorkflowCall.Uses.Value == "./.github/workflows/ci.yml" {
			tests[id] = true
		}
	}
	if len(tests) == 0 {
		t.Fatal("release.yml has no job running the checks (.ci/run or ci.yml)")
	}
	var publishers int
	for id, job := range wf.Jobs {
		attests, publishes := false, false
		for _, s := range job.Steps {
			if strings.HasPrefix(stepUses(s), "actions/attest-build-provenance@") {
				attests = true
			}
			if strings.Contains(stepRun(s), "gh release") {
				publishes = true
			}
		}
		if !publishes {
			continue
		}
		publishers++
		if !attests {
			t.Errorf("job %s publishes archives without a build provenance attestation", id)
		}
		after := false
		for _, n := range job.Needs {
			after = after || tests[n.Value]
		}
		if !after {
			t.Errorf("job %s publishes without needing the test job", id)
		}
	}
	if publishers == 0 {
		t.Fatal("no job of release.yml publishes the release")
	}
}

var (
	usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)\s*(?:#\s*(\S+))?`)
	pinned   = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)
	semver   = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
)

// Every action a workflow, an example or action.yml uses is pinned to a
// full commit SHA with its version in a comment, and one action at one
// version has the same SHA everywhere (Dependabot updates .github/ and
// action.yml; this keeps the examples in step). planexhq/planex itself is
// the exception in the examples: it is what the reader installs, at the
// release they choose (docs/action.md).
func TestEveryUsesIsPinned(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files := append(workflowFiles(t, root), filepath.Join(root, "action.yml"))
	shaOf := map[string]string{}
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			m := usesLine.FindStringSubmatch(line)
			if m == nil || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			ref, version := m[1], m[2]
			if strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "planexhq/planex@") {
				continue
			}
			if !pinned.MatchString(ref) || !semver.MatchString(version) {
				t.Errorf("%s:%d: uses %s %s: want owner/repo@<40-hex commit> # vX.Y.Z", rel, n+1, ref, m[2])
				continue
			}
			key := ref[:strings.Index(ref, "@")] + "@" + version
			if prev, ok := shaOf[key]; ok && prev != ref {
				t.Errorf("%s:%d: %s is %s here and %s elsewhere", rel, n+1, key, ref, prev)
			}
			shaOf[key] = ref
		}
	}
	if len(shaOf) < 4 {
		t.Errorf("only %d pinned actions found; the scan is not reading the files", len(shaOf))
	}
}

// The pin checker refuses what it must refuse.
func TestPinPatternRefusesTags(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"      - uses: actions/checkout@v4",
		"      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262",
		"      - uses: actions/checkout@11d5960 # v4.4.0",
	} {
		m := usesLine.FindStringSubmatch(line)
		if m != nil && pinned.MatchString(m[1]) && semver.MatchString(m[2]) {
			t.Errorf("%q passes as pinned", line)
		}
	}
}

// Dependabot keeps Go modules, actions and the tested CLIs moving, and the
// npm file it updates names the versions clis.Tested installs.
func TestDependencyUpdates(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, ".github", "dependabot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Updates []struct {
			Ecosystem   string   `yaml:"package-ecosystem"`
			Directory   string   `yaml:"directory"`
			Directories []string `yaml:"directories"`
		} `yaml:"updates"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	dirs := map[string][]string{}
	for _, u := range cfg.Updates {
		dirs[u.Ecosystem] = append(dirs[u.Ecosystem], u.Directories...)
		if u.Directory != "" {
			dirs[u.Ecosystem] = append(dirs[u.Ecosystem], u.Directory)
		}
	}
	for _, eco := range []string{"gomod", "github-actions", "npm"} {
		if len(dirs[eco]) == 0 {
			t.Errorf("dependabot.yml does not update %s", eco)
		}
	}
	var npmDir string
	for _, d := range dirs["npm"] {
		npmDir = strings.TrimPrefix(d, "/")
	}
	pj, err := os.ReadFile(filepath.Join(root, npmDir, "package.json"))
	if err != nil {
		t.Fatalf("the npm directory Dependabot watches: %v", err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(pj, &pkg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claude", "codex", "gemini"} {
		p, _ := clis.Tested(name)
		if got := pkg.Dependencies[p.Name]; got != p.Version {
			t.Errorf("%s/package.json has %s %q, clis.Tested installs %q: change both", npmDir, p.Name, got, p.Version)
		}
	}
	if len(pkg.Dependencies) != 3 {
		t.Errorf("package.json has %d dependencies, want the 3 tested CLIs", len(pkg.Dependencies))
	}
}

// action.yml's download step checks the archive's build provenance where
// gh can, beside its checksum, and never runs an archive that fails it.
func TestActionVerifiesProvenance(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	for _, s := range a.Runs.Steps {
		if s.ID != "install" {
			continue
		}
		verify := strings.Index(s.Run, `gh attestation verify "$dl/$asset" --repo "$repo"`)
		checksum := strings.Index(s.Run, `sha256 "$dl/$asset"`)
		unpack := strings.Index(s.Run, `tar -xzf "$dl/$asset"`)
		if verify < 0 || checksum < 0 || unpack < 0 || verify > unpack || checksum > unpack {
			t.Errorf("the install step does not check checksum and provenance before unpacking (checksum %d, verify %d, unpack %d)", checksum, verify, unpack)
		}
		if !strings.Contains(s.Run[verify:unpack], `build "the provenance of`) {
			t.Error("an archive whose provenance fails is not replaced by a build from source")
		}
		return
	}
	t.Fatal("action.yml has no install step")
}

// The test command README.md gives first is the one .ci/run runs, as a line
// of its own; where it switches go test's vet pass off, .ci/run vets every
// package (and its test files) with go vet before it, so nothing goes
// unvetted in CI.
func TestCIScriptRunsREADMETestCommand(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^(go test [^#\n]*?)\s*#`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no `go test … # …` command line")
	}
	command := string(m[1])
	lines := strings.Split(string(ci), "\n")
	at := slices.Index(lines, command)
	if at < 0 {
		t.Fatalf(".ci/run does not run README.md's test command %q as a line of its own", command)
	}
	if strings.Contains(command, "-vet=off") {
		vet := slices.Index(lines, "go vet ./...")
		if vet < 0 || vet > at {
			t.Errorf("README.md's test command %q skips vet, but .ci/run does not run `go vet ./...` before it", command)
		}
	}
}
