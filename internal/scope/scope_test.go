package scope

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		scope, path string
		want        bool
	}{
		{"src/**", "src/a/b.go", true},
		{"src/**", "srcx/a.go", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/sub/a.go", false},
		{"docs", "docs/readme.md", true},
		{"docs/", "docs/x/y.md", true},
		{"README.md", "README.md", true},
		{"README.md", "README.md.bak", false},
		{"a/**;b/**", "b/x", true},
		{"./pkg/**", "pkg/x.go", true},
		{"**/*.md", "deep/er/x.md", true},
	}
	for _, c := range cases {
		if got := Match(c.scope, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.scope, c.path, got, c.want)
		}
	}
	if got := Outside("src/**", []string{"src/a", "b", "src/c/d"}); len(got) != 1 || got[0] != "b" {
		t.Errorf("Outside = %v, want [b]", got)
	}
}

func TestValidate(t *testing.T) {
	for _, bad := range []string{"", " ; ", "src/[a", "/etc/**", "../x/**"} {
		if err := Validate(bad); err == nil {
			t.Errorf("Validate(%q) = nil, want an error", bad)
		}
	}
	if err := Validate("src/**;docs/*.md"); err != nil {
		t.Errorf("Validate(good) = %v", err)
	}
}

// TestRedTeamGitScopeEscapes: scopes reaching into .git or out of the
// repository, in every spelling the matcher would honour, are refused;
// ordinary scopes that merely look similar are not.
func TestRedTeamGitScopeEscapes(t *testing.T) {
	for _, c := range []struct {
		scope, want string // want "" = valid
	}{
		{".git/**", "reaches into .git"},
		{".git", "reaches into .git"},
		{".GIT/hooks/*", "reaches into .git"},
		{".Git/config", "reaches into .git"},
		{"src/.git/**", "reaches into .git"},
		{"vendor/lib/.git/hooks/pre-commit", "reaches into .git"},
		{"{.git,src}/**", "reaches into .git"},
		{`\.git/**`, "reaches into .git"},
		{".gi?/**", "reaches into .git"},
		{".[Gg]it/**", "reaches into .git"},
		{"src/**;.git/hooks/**", "reaches into .git"},
		{"../**", "leaves the repository"},
		{"..", "leaves the repository"},
		{"src/../../x", "leaves the repository"},
		{"src/..", "leaves the repository"},
		{"{..,src}/**", "leaves the repository"},
		{`\.\./x`, "leaves the repository"},
		{"/etc/**", "absolute path"},
		{"/", "absolute path"},
		{`\\server\share`, "absolute path"},
		{"C:/Windows/**", "absolute path"},
		{"~/.ssh/**", "starts with ~"},
		{"~root/x", "starts with ~"},
		{".github/**", ""},
		{".gitignore", ""},
		{".git*", ""},
		{"**/*.go", ""},
		{"src/**;docs/*.md", ""},
		{"./src/**", ""},
		{"a..b/**", ""},
		{"src/~backup", ""},
	} {
		err := Validate(c.scope)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Validate(%q) = %v, want valid", c.scope, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Validate(%q) = %v, want an error containing %q", c.scope, err, c.want)
		}
	}
}

func TestOverlap(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"src/a/**", "src/b/**", false},
		{"src/a/**", "src/**", true},
		{"src/**/*.go", "src/a/**", true},
		{"src/*.go", "src/*.ts", false},
		{"src/*.go", "src/x.go", true},
		{"src/x.go", "src/y.go", false},
		{"docs", "docs/api/*.md", true},
		{"docs", "doc/**", false},
		{"{a,b}/**", "b/c.txt", true},
		{"{a,b}/**", "c/**", false},
		{"**", "anything/at/all", true},
		{"pkg/api/**;README.md", "README.md", true},
		{"internal/plan/*_test.go", "internal/plan/plan.go", false},
	}
	for _, c := range cases {
		if got := Overlap(c.a, c.b); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Overlap(c.b, c.a); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v (reversed)", c.b, c.a, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scope, path string
		want        bool
	}{
		{".github/planex.yml", ".github/planex.yml", true},
		{"src/**; ./.github/planex.yml", ".github/planex.yml", true},
		{"vendor/lib/", "vendor/lib", true},
		{"**", ".github/planex.yml", false},
		{".github/**", ".github/planex.yml", false},
		{".github/", ".github/planex.yml", false},
		{".github/planex.y?l", ".github/planex.yml", false},
		{"vendor/lib", "vendor/lib/x", false},
		{"", "a", false},
	}
	for _, c := range cases {
		if got := Names(c.scope, c.path); got != c.want {
			t.Errorf("Names(%q, %q) = %v, want %v", c.scope, c.path, got, c.want)
		}
	}
}

// TestTargets: a glob targets a folder when its leading segments without
// wildcards are that folder or lie below it, and it covers the path.
func TestTargets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scope, dir, p string
		targets, dirs bool
	}{
		{"**", "a/b", "a/b/c", false, false},
		{"a/**", "a/b", "a/b/c", false, false},
		{"a/b/**", "a/b", "a/b/c", true, true},
		{"a/b/c/*.x", "a/b", "a/b/c/d.x", true, true},
		{"a/b/c/*.x", "a/b", "a/b/e.x", false, true},
		{"a/bc/**", "a/b", "a/bc/d", false, false},
		{"x/**;a/b", "a/b", "a/b/c", true, true},
		{"./a/b/c", "a/b", "a/b/c", true, true},
	}
	for _, c := range cases {
		if got := Targets(c.scope, c.dir, c.p); got != c.targets {
			t.Errorf("Targets(%q, %q, %q) = %v, want %v", c.scope, c.dir, c.p, got, c.targets)
		}
		if got := TargetsDir(c.scope, c.dir); got != c.dirs {
			t.Errorf("TargetsDir(%q, %q) = %v, want %v", c.scope, c.dir, got, c.dirs)
		}
	}
}
