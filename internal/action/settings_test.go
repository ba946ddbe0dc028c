package action

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSettings(t *testing.T) {
	t.Parallel()
	s, err := ParseSettings([]byte("concurrency: 2\nmax-cost-usd: 1.5\ndraft: false\ntrigger-phrase: /bot\nci-fix: auto\nci-fix-attempts: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Concurrency: 4, Draft: true, Trigger: "/planex", CIFix: CIFixPlan, CIFixAttempts: 2}
	s.Apply(&c)
	if c.Concurrency != 2 || c.MaxCostUSD != 1.5 || c.Draft || c.Trigger != "/bot" || c.CIFix != CIFixAuto || c.CIFixAttempts != 3 {
		t.Errorf("config after settings = %+v", c)
	}
	for _, c := range []struct {
		in   string
		line int
		want string
	}{
		{"colour: red\n", 1, "field colour not found"},
		{"concurrency: 0\n", 1, "concurrency must be between 1 and 64"},
		{"draft: true\nconcurrency: many\n", 2, "cannot unmarshal"},
		{"trigger-phrase: planex\n", 1, "trigger-phrase must start with '/'"},
		{"\n\nmax-cost-usd: -1\n", 3, "max-cost-usd must not be negative"},
		{"draft: [true]\n", 1, "cannot unmarshal"},
		{"draft: true\n  bad: indent\n", 2, "mapping values are not allowed"},
		{"draft: true\nci-fix: always\n", 2, `ci-fix must be plan, auto or off, got "always"`},
		{"ci-fix-attempts: 0\n", 1, "ci-fix-attempts must be at least 1"},
	} {
		_, err := ParseSettings([]byte(c.in))
		var se *SettingsError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), ".github/planex.yml line ") {
			t.Errorf("ParseSettings(%q) = %v, want %q", c.in, err, c.want)
			continue
		}
		if file, line := se.Location(); file != SettingsPath || line != c.line {
			t.Errorf("ParseSettings(%q): location %s:%d, want line %d", c.in, file, line, c.line)
		}
	}
	if _, err := ParseSettings(nil); err != nil {
		t.Errorf("empty settings: %v", err)
	}
}

func TestNextFollowUpID(t *testing.T) {
	t.Parallel()
	cases := [][3]string{
		{"7-add-x", "", "7-add-x-f1"},
		{"7-add-x", "7-add-x", "7-add-x-f1"},
		{"7-add-x", "7-add-x-f1", "7-add-x-f2"},
		{"7-add-x", "7-add-x-f9", "7-add-x-f10"},
	}
	for _, c := range cases {
		if got := nextFollowUpID(c[0], c[1]); got != c[2] {
			t.Errorf("nextFollowUpID(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
