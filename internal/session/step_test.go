package session

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMergeDiscoveriesValidatesEachLine(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "step.ndjson")
	board := filepath.Join(dir, "session", DiscoveriesFile)
	lines := []string{
		`{"ts":"2026-01-01T00:00:00Z","worker":"T9","type":"convention","data":{"rule":"tabs"}}`, // worker replaced
		`{"type":"test_command","data":{"command":"go test ./..."}}`,                             // ts stamped
		`{"type":"gossip","data":{"a":1}}`,                                                       // unknown type
		`{"type":"convention","data":"text"}`,                                                    // data not an object
		`{"type":"convention","data":null}`,                                                      // data null
		`{"type":"convention","data":{"a":1}`,                                                    // broken JSON
		`{"ts":"yesterday","type":"convention","data":{"a":1}}`,                                  // bad ts
		`{"type":"convention","data":{"big":"` + strings.Repeat("x", MaxDiscoveryData) + `"}}`,   // too large
		`[1,2,3]`,
		``,
		`{"type":"blocker","data":{"why":"needs a key"}}`,
	}
	if err := os.WriteFile(from, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	now := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	n, err := MergeDiscoveries(board, from, "T1", now, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || n != 3 {
		t.Fatalf("merged %d, %v\n%s", n, err, logs.String())
	}
	b, _ := os.ReadFile(board)
	want := `{"ts":"2026-01-01T00:00:00Z","worker":"T1","type":"convention","data":{"rule":"tabs"}}
{"ts":"2026-02-03T04:05:06Z","worker":"T1","type":"test_command","data":{"command":"go test ./..."}}
{"ts":"2026-02-03T04:05:06Z","worker":"T1","type":"blocker","data":{"why":"needs a key"}}
`
	if string(b) != want {
		t.Errorf("board:\n%s\nwant:\n%s", b, want)
	}
	for _, line := range []string{"line=3", "line=4", "line=5", "line=6", "line=7", "line=8", "line=9"} {
		if !strings.Contains(logs.String(), line+" ") {
			t.Errorf("bad %s was not logged:\n%s", line, logs.String())
		}
	}
	if strings.Contains(logs.String(), "line=1 ") || strings.Contains(logs.String(), "line=11 ") {
		t.Errorf("a good line was logged as bad:\n%s", logs.String())
	}
}

func TestMergeDiscoveriesCapsLines(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "step.ndjson")
	var b strings.Builder
	for i := 0; i < MaxStepDiscoveries+20; i++ {
		fmt.Fprintf(&b, `{"type":"convention","data":{"n":%d}}`+"\n", i)
	}
	os.WriteFile(from, []byte(b.String()), 0o644)
	board := filepath.Join(dir, DiscoveriesFile)
	n, err := MergeDiscoveries(board, from, "E1", time.Now(), slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	if err != nil || n != MaxStepDiscoveries {
		t.Fatalf("merged %d, %v", n, err)
	}
	got, _ := os.ReadFile(board)
	if c := strings.Count(string(got), "\n"); c != MaxStepDiscoveries {
		t.Errorf("board has %d lines", c)
	}
}
