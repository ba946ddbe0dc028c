package packaging

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"
)

// The action's interface as documented in docs/action.md. Changing an input or a
// default means changing this table, the docs and planex action together.
var wantInputs = map[string]string{
	"github-token":    "${{ github.token }}",
	"bot-login":       "",
	"trusted-bots":    "",
	"agent":           "anthropic",
	"agent-command":   "",
	"model":           "",
	"base-url":        "",
	"api-key-env":     "",
	"allow-env":       "",
	"mcp-config":      "",
	"concurrency":     "4",
	"trigger-phrase":  "/planex",
	"base-branch":     "",
	"draft":           "true",
	"auto-approve":    "false",
	"max-cost-usd":    "",
	"max-issues":      "3",
	"label":           "planex",
	"mode":            "single",
	"matrix-workflow": "planex-matrix.yml",
	"matrix-step":     "",
	"task":            "",
	"review":          "agent",
	"sandbox":         "auto",
	"network":         "contained",
	"allow-hosts":     "",
	"commit-signing":  "git",
	"ci-fix":          "plan",
	"ci-fix-attempts": "2",
}

var wantOutputs = []string{"session-id", "plan-id", "status", "pull-request-url", "matrix", "max-parallel", "has-tasks", "planned-issues"}

// repoRoot is the directory holding go.mod above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

func workflowFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{".github/workflows", "examples/workflows"} {
		for _, ext := range []string{"*.yml", "*.yaml"} {
			m, err := filepath.Glob(filepath.Join(root, dir, ext))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, m...)
		}
	}
	sort.Strings(files)
	return files
}

func newLinter(t *testing.T, root string) (*actionlint.Linter, *actionlint.Project) {
	t.Helper()
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{
		Color:      actionlint.ColorOptionKindNever,
		WorkingDir: root,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The project root is where `uses: ./` finds action.yml.
	p, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	return l, p
}

func TestWorkflowsPassActionlint(t *testing.T) {
	root := repoRoot(t)
	files := workflowFiles(t, root)
	for _, want := range []string{
		".github/workflows/ci.yml", ".github/workflows/release.yml", ".github/workflows/planex.yml",
		"examples/workflows/planex-comment.yml", "examples/workflows/planex-dispatch.yml",
		"examples/workflows/planex-schedule.yml", "examples/workflows/planex-labeled.yml",
		"examples/workflows/planex-matrix.yml", "examples/workflows/planex-app-token.yml",
		"examples/workflows/planex-ci-fix.yml",
	} {
		if !contains(files, filepath.Join(root, want)) {
			t.Errorf("%s is missing", want)
		}
	}
	l, p := newLinter(t, root)
	errs, err := l.LintFiles(files, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint: %s", e)
	}
}

// The linter really reads this repository's action.yml for `uses: ./`: passing
// an input it does not declare, or leaving out a step's shell, is reported.
func TestActionlintSeesTheLocalAction(t *testing.T) {
	root := repoRoot(t)
	l, p := newLinter(t, root)
	bad := []byte(`on: push
permissions: {}
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./
        with:
          agent: anthropic
          no-such-input: "1"
`)
	errs, err := l.Lint(filepath.Join(root, ".github", "workflows", "probe.yml"), bad, p)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range errs {
		if strings.Contains(e.Message, "no-such-input") {
			found = true
		} else {
			t.Errorf("unexpected finding: %s", e)
		}
	}
	if !found {
		t.Fatalf("actionlint did not report the undeclared input; findings: %v", errs)
	}
}

type actionFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Required    bool    `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	Dir   string            `yaml:"working-directory"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

func readAction(t *testing.T) actionFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

func (a actionFile) step(t *testing.T, id string) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("action.yml has no step with id %q", id)
	return actionStep{}
}

// envName is the variable planex action reads for an input.
func envName(input string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(input, "-", "_"))
}

func TestActionMetadata(t *testing.T) {
	a := readAction(t)
	if a.Name != "planex" || strings.TrimSpace(a.Description) == "" {
		t.Errorf("name %q, description %q", a.Name, a.Description)
	}
	if a.Branding.Icon == "" || a.Branding.Color == "" {
		t.Errorf("branding %+v", a.Branding)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", a.Runs.Using)
	}

	// Inputs: exactly the documented set, each optional, described, with its default.
	for name, want := range wantInputs {
		in, ok := a.Inputs[name]
		switch {
		case !ok:
			t.Errorf("input %s is not declared", name)
		case in.Required:
			t.Errorf("input %s is required; every input has a default", name)
		case strings.TrimSpace(in.Description) == "":
			t.Errorf("input %s has no description", name)
		case in.Default == nil:
			t.Errorf("input %s has no default (want %q)", name, want)
		case *in.Default != want:
			t.Errorf("input %s defaults to %q, want %q", name, *in.Default, want)
		}
	}
	for name := range a.Inputs {
		if _, ok := wantInputs[name]; !ok {
			t.Errorf("input %s is not part of the documented interface", name)
		}
	}

	// Every input reaches the run step as INPUT_<NAME>, and nothing else does.
	run := a.step(t, "run")
	if !strings.Contains(run.Run, `"$PLANEX_BIN" action`) {
		t.Errorf("run step does not start planex action: %q", run.Run)
	}
	for name := range wantInputs {
		want := "${{ inputs." + name + " }}"
		if got, ok := run.Env[envName(name)]; !ok || got != want {
			t.Errorf("run step env %s = %q, want %q", envName(name), got, want)
		}
	}
	for k := range run.Env {
		if strings.HasPrefix(k, "INPUT_") {
			name := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, "INPUT_"), "_", "-"))
			if _, ok := wantInputs[name]; !ok {
				t.Errorf("run step sets %s, which is no input", k)
			}
		}
	}
	// No other step sees the inputs (the install step gets only the token, under
	// its own name, for the download).
	for _, s := range a.Runs.Steps {
		if s.ID == "run" {
			continue
		}
		for k, v := range s.Env {
			if strings.HasPrefix(k, "INPUT_") {
				t.Errorf("step %q sets %s", s.ID, k)
			}
			if strings.Contains(v, "inputs.") && v != "${{ inputs.github-token }}" {
				t.Errorf("step %q passes %s = %s", s.ID, k, v)
			}
		}
	}

	// Outputs: exactly the documented set, each from planex's GITHUB_OUTPUT.
	for _, name := range wantOutputs {
		out, ok := a.Outputs[name]
		switch {
		case !ok:
			t.Errorf("output %s is not declared", name)
		case strings.TrimSpace(out.Description) == "":
			t.Errorf("output %s has no description", name)
		case out.Value != "${{ steps.run.outputs."+name+" }}":
			t.Errorf("output %s = %q, want it from the run step", name, out.Value)
		}
	}
	if len(a.Outputs) != len(wantOutputs) {
		t.Errorf("%d outputs declared, want %d", len(a.Outputs), len(wantOutputs))
	}

	// Fast path first, build only as a fallback.
	install := a.step(t, "install")
	build := a.step(t, "build")
	if build.If != "steps.install.outputs.need-build == 'true'" {
		t.Errorf("build step runs under %q", build.If)
	}
	if install.Env["PLANEX_ACTION_REF"] != "${{ github.action_ref }}" {
		t.Errorf("install step does not read github.action_ref through env")
	}
	for _, s := range a.Runs.Steps {
		if s.Uses != "" && !pinned.MatchString(s.Uses) {
			t.Errorf("step uses %q without a commit SHA", s.Uses)
		}
		if s.Run != "" && s.Shell != "bash" {
			t.Errorf("step %q runs under shell %q, want bash", s.ID, s.Shell)
		}
	}
}

// Every workflow the project ships follows the same rules: the token has only
// the permissions planex needs, runs of one issue queue instead of cancelling
// each other, the checkout leaves no token behind in .git/config, and model keys
// are given to the planex step alone.
func TestWorkflowPolicy(t *testing.T) {
	root := repoRoot(t)
	wantPerms := map[string]any{"contents": "write", "issues": "write", "pull-requests": "write"}
	for _, file := range workflowFiles(t, root) {
		rel, _ := filepath.Rel(root, file)
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var wf struct {
				Permissions map[string]any `yaml:"permissions"`
				Concurrency struct {
					Group            string `yaml:"group"`
					CancelInProgress bool   `yaml:"cancel-in-progress"`
				} `yaml:"concurrency"`
				Env  map[string]string `yaml:"env"`
				Jobs map[string]struct {
					Permissions map[string]any    `yaml:"permissions"`
					Env         map[string]string `yaml:"env"`
					Steps       []struct {
						Uses string            `yaml:"uses"`
						With map[string]any    `yaml:"with"`
						Env  map[string]string `yaml:"env"`
						If   string            `yaml:"if"`
						Run  string            `yaml:"run"`
					} `yaml:"steps"`
				} `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(b, &wf); err != nil {
				t.Fatal(err)
			}
			if wf.Permissions == nil {
				t.Fatal("no top-level permissions:")
			}
			runsPlanex, matrix := false, false
			for name, job := range wf.Jobs {
				if job.Permissions != nil && !releaseJobPermissions(rel, name, job.Permissions) {
					t.Errorf("job %s widens permissions", name)
				}
				if len(job.Env) > 0 || len(wf.Env) > 0 {
					t.Errorf("job %s: env at workflow or job level reaches every step", name)
				}
				for _, s := range job.Steps {
					if s.Uses != "" && !strings.HasPrefix(s.Uses, "./") && !strings.Contains(s.Uses, "@") {
						t.Errorf("%s is not pinned", s.Uses)
					}
					if strings.HasPrefix(s.Uses, "actions/checkout@") {
						if s.With["persist-credentials"] != false {
							t.Errorf("checkout without persist-credentials: false")
						}
					}
					isPlanex := s.Uses == "./" || strings.HasPrefix(s.Uses, "planexhq/planex@")
					for k := range s.Env {
						if strings.HasSuffix(k, "_API_KEY") && !isPlanex {
							t.Errorf("step %q gets %s", s.Uses+s.Run, k)
						}
					}
					if !isPlanex {
						continue
					}
					runsPlanex = true
					if s.With["mode"] == "matrix" {
						matrix = true
					}
					// In a matrix workflow the collect job (if: always())
					// reports the end of every wave instead.
					if s.With["matrix-step"] != nil {
						continue
					}
					if !hasFinalize(job.Steps) {
						t.Errorf("job %s has no final-status step", name)
					}
				}
			}
			if !runsPlanex {
				// ci and release: read-only; release's publishing job alone
				// uploads assets and signs attestations.
				for k, v := range wf.Permissions {
					if v != "read" {
						t.Errorf("permissions %s: %v", k, v)
					}
				}
				return
			}
			want := map[string]any{}
			for k, v := range wantPerms {
				want[k] = v
			}
			if readsCI(b) {
				// workflow_run and `/planex fix-ci` read CI runs and logs.
				want["actions"] = "read"
			}
			if matrix {
				// Matrix mode dispatches the next wave's workflow run.
				want["actions"] = "write"
			}
			if fmt.Sprint(wf.Permissions) != fmt.Sprint(want) {
				t.Errorf("permissions = %v, want exactly %v", wf.Permissions, want)
			}
			if !strings.HasPrefix(wf.Concurrency.Group, "planex-") || wf.Concurrency.CancelInProgress {
				t.Errorf("concurrency = %+v, want a planex-… group that does not cancel runs in progress", wf.Concurrency)
			}
			for _, job := range wf.Jobs {
				for _, s := range job.Steps {
					if strings.HasPrefix(s.Uses, "actions/checkout@") && fmt.Sprint(s.With["fetch-depth"]) != "0" {
						t.Errorf("checkout without fetch-depth: 0 (planex needs the history)")
					}
				}
			}
		})
	}
}

// releaseJobPermissions: the release job of release.yml may write the
// release's assets and sign their attestations, and nothing else.
func releaseJobPermissions(rel, job string, perms map[string]any) bool {
	if rel != filepath.Join(".github", "workflows", "release.yml") || job != "release" {
		return false
	}
	want := map[string]any{"contents": "write", "id-token": "write", "attestations": "write"}
	return fmt.Sprint(perms) == fmt.Sprint(want)
}

// readsCI reports whether a workflow starts planex on failed CI runs or
// on comments (which may say /planex fix-ci).
func readsCI(workflow []byte) bool {
	var wf struct {
		On map[string]any `yaml:"on"`
	}
	if yaml.Unmarshal(workflow, &wf) != nil {
		return false
	}
	_, run := wf.On["workflow_run"]
	_, comment := wf.On["issue_comment"]
	return run || comment
}

func hasFinalize(steps []struct {
	Uses string            `yaml:"uses"`
	With map[string]any    `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	If   string            `yaml:"if"`
	Run  string            `yaml:"run"`
}) bool {
	for _, s := range steps {
		if strings.Contains(s.Run, "planex action --finalize") &&
			(strings.Contains(s.If, "cancelled()") || strings.Contains(s.If, "always()")) &&
			s.Env["INPUT_GITHUB_TOKEN"] != "" {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
