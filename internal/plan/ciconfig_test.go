package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestMayChangeGuarded: which scopes let a change to each kind of
// configuration through, under its own name and under the name a
// committed link (.github -> ci) gives it.
func TestMayChangeGuarded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scope, path, read string
		want              bool
	}{
		{"**", "src/a.go", "src/a.go", true},
		{"**", ".github/ISSUE_TEMPLATE/bug.md", ".github/ISSUE_TEMPLATE/bug.md", true},
		{"**", ".github/actions/x/action.yml", ".github/actions/x/action.yml", false},
		{".github/**", ".github/actions/x/run.sh", ".github/actions/x/run.sh", false},
		{".github/actions/**", ".github/actions/x/run.sh", ".github/actions/x/run.sh", true},
		{".github/actions/x/", ".github/actions/x/run.sh", ".github/actions/x/run.sh", true},
		{".github/actions/y/**", ".github/actions/x/run.sh", ".github/actions/x/run.sh", false},
		{"**", "tools/a/action.yml", "tools/a/action.yml", false},
		{"tools/**", "tools/a/action.yml", "tools/a/action.yml", false},
		{"tools/a/**", "tools/a/action.yml", "tools/a/action.yml", true},
		{"**", "action.yaml", "action.yaml", false},
		{"action.yaml", "action.yaml", "action.yaml", true},
		{"**", "CODEOWNERS", "CODEOWNERS", false},
		{"CODEOWNERS", "CODEOWNERS", "CODEOWNERS", true},
		{"docs/**", "docs/CODEOWNERS", "docs/CODEOWNERS", false},
		{"docs/**", "docs/guide/CODEOWNERS", "docs/guide/CODEOWNERS", true},
		{".github/*.yml", ".github/dependabot.yml", ".github/dependabot.yml", false},
		{".github/*.yml", ".github/labeler.yml", ".github/labeler.yml", true},
		{"ci/**", "ci/workflows/x.yml", ".github/workflows/x.yml", false},
		{"ci/workflows/*.yml", "ci/workflows/x.yml", ".github/workflows/x.yml", true},
		{".github/workflows/*.yml", "ci/workflows/x.yml", ".github/workflows/x.yml", false},
		{"ci/**", "ci/planex.yml", ".github/planex.yml", false},
		{"ci/planex.yml", "ci/planex.yml", ".github/planex.yml", true},
		{"wf/*.yml", "wf/x.yml", ".github/workflows/x.yml", true},
		{"**", "tools/deploy/run.sh", "tools/deploy/run.sh", false},
		{"tools/**", "tools/deploy/lib/x.sh", "tools/deploy/lib/x.sh", false},
		{"tools/deploy/**", "tools/deploy/lib/x.sh", "tools/deploy/lib/x.sh", true},
		{"tools/**", "tools/other/x.sh", "tools/other/x.sh", true},
		// A case-insensitive runner reads a used folder whatever its case.
		{"**", "Tools/Deploy/run.sh", "Tools/Deploy/run.sh", false},
		{"tools/**", "tools/DEPLOY/lib/x.sh", "tools/DEPLOY/lib/x.sh", false},
		{"Tools/Deploy/**", "Tools/Deploy/run.sh", "Tools/Deploy/run.sh", true},
		{"tools/**", "tools/deployed/x.sh", "tools/deployed/x.sh", true},
	}
	for _, c := range cases {
		if _, got := MayChange(c.scope, c.path, c.read, map[string]bool{"tools/deploy": true}); got != c.want {
			t.Errorf("MayChange(%q, %q, %q) = %v, want %v", c.scope, c.path, c.read, got, c.want)
		}
	}
}

// TestReadAs: a path is read under its own name and, where a committed
// link leads one of the configuration folders to it, under that name.
func TestReadAs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path    string
		aliases map[string]string
		want    string
	}{
		{"ci/workflows/x.yml", nil, "ci/workflows/x.yml"},
		{"ci/workflows/x.yml", map[string]string{".github": "ci", ".github/workflows": "ci/workflows"}, "ci/workflows/x.yml,.github/workflows/x.yml"},
		{"wf/x.yml", map[string]string{".github/workflows": "wf"}, "wf/x.yml,.github/workflows/x.yml"},
		{"ci", map[string]string{".github": "ci"}, "ci,.github"},
		{"cix/a", map[string]string{".github": "ci"}, "cix/a"},
		{"workflows/x.yml", map[string]string{".github": ""}, "workflows/x.yml,.github/workflows/x.yml"},
	}
	for _, c := range cases {
		if got := strings.Join(ReadAs(c.path, c.aliases), ","); got != c.want {
			t.Errorf("ReadAs(%q, %v) = %s, want %s", c.path, c.aliases, got, c.want)
		}
	}
}

// TestConfigTasks: the tasks the plan comment names as able to change
// local actions, action definitions, CODEOWNERS or Dependabot's settings.
func TestConfigTasks(t *testing.T) {
	t.Parallel()
	tasks := []Task{
		{ID: "T1", Scope: "src/**"},
		{ID: "T2", Scope: ".github/actions/setup/**"},
		{ID: "T3", Scope: "**"},
		{ID: "T4", Scope: "CODEOWNERS"},
		{ID: "T5", Scope: "tools/**/action.yml"},
		{ID: "T6", Scope: ".github/dependabot.yml;src/**"},
		{ID: "T7", Scope: ".github/workflows/*.yml"},
		{ID: "T8", Scope: "lib/**;.gitmodules"},
		{ID: "T9", Scope: ".lfsconfig"},
	}
	if got := strings.Join(ConfigTasks(tasks), ","); got != "T2,T4,T5,T6,T8,T9" {
		t.Errorf("ConfigTasks = %s", got)
	}
}

// TestMayNotLink: the folders and files a task may not turn into links.
func TestMayNotLink(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{".github": true, ".github/workflows": true, ".github/actions": true, ".github/workflows/ci.yml": true,
		"CODEOWNERS": true, ".github/planex.yml": true, "tools/x/action.yml": true, "docs": false, "src/link": false, ".github/ISSUE_TEMPLATE": false} {
		if got := MayNotLink(p); got != want {
			t.Errorf("MayNotLink(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestUsedActionDirs: the folders a workflow's steps run as local
// actions, however the YAML spells the scalar; the root, reusable
// workflows, remote actions and references out of the repository are
// not folders of it.
func TestUsedActionDirs(t *testing.T) {
	t.Parallel()
	text := "jobs:\n  a:\n    uses: ./.github/workflows/reusable.yml\n  b:\n    steps:\n" +
		"      - uses: ./docker/ci\n" +
		"      - uses: './tools/deploy/' # deploy\n" +
		"      -   uses:   \"./tools/x/../lint\"\r\n" +
		"      - uses: actions/checkout@v4\n" +
		"      - uses: docker://alpine\n" +
		"      - uses: ./\n" +
		"      - uses: ./../other\n" +
		"      - uses: ./docker/ci\n" +
		"      - name: uses: ./not/a/key\n" +
		"      - \"uses\": \"./quoted/key\"\n"
	got := UsedActionDirs([]byte(text))
	want := []string{"docker/ci", "tools/deploy", "tools/lint", "quoted/key"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("UsedActionDirs = %q, want %q", got, want)
	}
}

// TestLocalActionsThroughCheckoutAndDocker: a workflow that checks the
// repository out into a folder runs `uses: ./<folder>/tools/deploy`,
// which is the repository's tools/deploy; `uses: ./` runs the root; a
// Docker action's definition names the file its image is built from,
// and an image from a registry is no file of the repository.
func TestLocalActionsThroughCheckoutAndDocker(t *testing.T) {
	t.Parallel()
	wf := "steps:\n  - uses: actions/checkout@v4\n    with:\n      path: 'src' # the repository\n" +
		"  - uses: ./src/tools/deploy\n  - uses: ./src/.github/actions/setup/\n  - uses: ./other/x\n" +
		"  - uses: actions/upload-artifact@v4\n    with:\n      path: ${{ runner.temp }}/out\n  - with:\n      path: ../up\n"
	if got, want := UsedActionDirs([]byte(wf)), []string{"src/tools/deploy", "tools/deploy", "src/.github/actions/setup", ".github/actions/setup", "other/x"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("UsedActionDirs = %q, want %q", got, want)
	}
	if got := CheckoutPaths([]byte(wf)); strings.Join(got, ",") != "src" {
		t.Errorf("CheckoutPaths = %q, want [src]", got)
	}
	for _, c := range []struct {
		text string
		root bool
	}{
		{"steps:\n  - uses: ./\n", true},
		{"steps:\n  - uses: './' # this repository's action\n", true},
		{"steps:\n  - uses: ./tools/x\n", false},
		{"steps:\n  - uses: actions/checkout@v4\n", false},
	} {
		if got := UsesRoot([]byte(c.text)); got != c.root {
			t.Errorf("UsesRoot(%q) = %v, want %v", c.text, got, c.root)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"runs:\n  using: docker\n  image: Dockerfile\n", "Dockerfile"},
		{"runs:\n  using: 'docker'\n  image: './build/Dockerfile' # built\n", "build/Dockerfile"},
		{"runs:\n  using: docker\n  image: ../../Dockerfile\n", "../../Dockerfile"},
		{"runs:\n  using: docker\n  image: docker://alpine:3\n", ""},
		{"runs:\n  using: composite\n  steps: []\n", ""},
	} {
		if got := ActionImage([]byte(c.text)); got != c.want {
			t.Errorf("ActionImage(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestLocalActionsInAnyYAMLForm: a workflow's or an action's `uses:`,
// `path:` and `image:` are read as GitHub reads the YAML, whatever form
// it takes (flow style, anchors and aliases, a spaced key, a folded or
// tagged value), and a text of nested aliases is read in time bounded by
// its length.
func TestLocalActionsInAnyYAMLForm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, want string }{
		{"steps:\n  - {uses: ./docker/ci}\n", "docker/ci"},
		{"steps: [{uses: ./docker/ci}]\n", "docker/ci"},
		{"steps:\n  - uses: &ci ./docker/ci\n  - uses: *ci\n", "docker/ci"},
		{"steps:\n  - uses : ./docker/ci\n", "docker/ci"},
		{"steps:\n  - uses: >-\n      ./docker/ci\n", "docker/ci"},
		{"steps:\n  - uses: !!str ./docker/ci\n", "docker/ci"},
		{"steps:\n  - {uses: actions/checkout@v4, with: {path: src}}\n  - uses: ./src/docker/ci\n", "src/docker/ci,docker/ci"},
		{"steps:\n  - uses: &c actions/checkout@v4\n    with: {path: &p src}\n  - uses: ./src/tools/x\n", "src/tools/x,tools/x"},
		// Not YAML at all: the lines still count.
		{"steps:\n  - uses: ./docker/ci\n\t- : [\n", "docker/ci"},
	} {
		if got := strings.Join(UsedActionDirs([]byte(c.text)), ","); got != c.want {
			t.Errorf("UsedActionDirs(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"runs: {using: docker, image: build/Dockerfile}\n", "build/Dockerfile"},
		{"runs:\n  using: docker\n  image: &img ./Dockerfile\n", "Dockerfile"},
	} {
		if got := ActionImage([]byte(c.text)); got != c.want {
			t.Errorf("ActionImage(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	// A billion-laughs text: ten levels of ten aliases each.
	var b strings.Builder
	b.WriteString("a0: &a0 [uses, uses]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("steps:\n  - uses: ./docker/ci\n")
	start := time.Now()
	if got := strings.Join(UsedActionDirs([]byte(b.String())), ","); got != "docker/ci" {
		t.Errorf("UsedActionDirs of the alias bomb = %q, want docker/ci", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("reading the alias bomb took %v", d)
	}
}
