package action

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// laughs is a YAML document of nine anchors, each a list of nine aliases
// to the one before: 9^9 strings once expanded.
func laughs() string {
	var b strings.Builder
	b.WriteString("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ") + "]\n")
		prev = n
	}
	return b.String()
}

// TestRedTeamSettingsBombsBounded: whoever can merge to the default
// branch (or a pull request, were settings read from it) writes a
// .github/planex.yml that would take memory or time without end to read:
// a billion-laughs alias tree, the same tree used as a key's value and as
// a key, and a flow sequence 200,000 deep. Each is refused as a settings
// mistake naming a line, having allocated a bounded amount: the decoder
// never expands an alias into a typed key and stops at depth 10,000.
// This held before the test was written.
func TestRedTeamSettingsBombsBounded(t *testing.T) {
	// Not parallel: the allocation count is the process's.
	for name, doc := range map[string]string{
		"billion laughs":          laughs(),
		"laughs as a known value": laughs() + "label: *i\n",
		"laughs as a key":         laughs() + "*i : x\n",
		"laughs merged":           laughs() + "draft: {<<: *i}\n",
		"200,000 deep":            "label: " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParseSettings([]byte(doc))
		runtime.ReadMemStats(&after)
		var se *SettingsError
		if !errors.As(err, &se) {
			t.Errorf("%s: ParseSettings = %v, want a settings mistake", name, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
			t.Errorf("%s: reading the settings allocated %d MiB", name, got>>20)
		}
	}
}
