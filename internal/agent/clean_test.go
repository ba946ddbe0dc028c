package agent

import (
	"encoding/json"
	"testing"
)

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented":                            "plain text\n\tindented",
		"\x1b[31mred\x1b[0m and \x1b[1;4mbold\x1b[m":        "red and bold",
		"\x1b]0;evil title\x07after":                        "after",
		"\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\": "link",
		"progress 10%\rprogress 100%\n":                     "progress 10%progress 100%\n",
		"bell\x07 nul\x00 del\x7f esc-c\x1bc end":           "bell nul del esc-c end",
		"c1 csi \u009b2J cleared":                           "c1 csi  cleared",
		"c1 \u0085next line":                                "c1 next line",
		"cursor \x1b[2K\x1b[1Gline":                         "cursor line",
		"bad utf8 \xff ok":                                  "bad utf8 \uFFFD ok",
		"unicode ✓ stays — ü":                               "unicode ✓ stays — ü",
		"trailing esc \x1b":                                 "trailing esc ",
	} {
		if got := CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanJSON(t *testing.T) {
	raw := []byte(`{"id":"T1","findings":"\u001b[32mok\u001b[0m <b>&</b>","n":1.50,"list":["a\u0007b"]}`)
	got := CleanJSON(raw)
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("cleaned JSON invalid: %v: %s", err, got)
	}
	if v["findings"] != "ok <b>&</b>" || v["list"].([]any)[0] != "ab" || v["n"].(float64) != 1.5 {
		t.Errorf("CleanJSON = %s", got)
	}
	clean := []byte(`{"id":"T1",  "findings":"fine"}`)
	if got := CleanJSON(clean); string(got) != string(clean) {
		t.Errorf("clean document rewritten: %s", got)
	}
	if got := CleanJSON([]byte("not json")); string(got) != "not json" {
		t.Errorf("invalid JSON changed: %s", got)
	}
}
