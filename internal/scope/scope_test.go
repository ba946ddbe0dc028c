package scope

import "testing"

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
