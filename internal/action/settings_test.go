package action

import (
	"strings"
	"testing"
)

func TestParseSettings(t *testing.T) {
	s, err := ParseSettings([]byte("concurrency: 2\nmax-cost-usd: 1.5\ndraft: false\ntrigger-phrase: /bot\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Concurrency: 4, Draft: true, Trigger: "/planex"}
	s.Apply(&c)
	if c.Concurrency != 2 || c.MaxCostUSD != 1.5 || c.Draft || c.Trigger != "/bot" {
		t.Errorf("config after settings = %+v", c)
	}
	bad := map[string]string{
		"colour: red\n":            "line 1: field colour not found",
		"concurrency: 0\n":         "concurrency must be between 1 and 64",
		"concurrency: many\n":      "line 1",
		"trigger-phrase: planex\n": "trigger-phrase must start with '/'",
		"\n\nmax-cost-usd: -1\n":   "max-cost-usd must not be negative",
		"draft: [true]\n":          "line 1",
	}
	for in, want := range bad {
		_, err := ParseSettings([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ".github/planex.yml") {
			t.Errorf("ParseSettings(%q) = %v, want %q", in, err, want)
		}
	}
	if _, err := ParseSettings(nil); err != nil {
		t.Errorf("empty settings: %v", err)
	}
}

func TestNextFollowUpID(t *testing.T) {
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
