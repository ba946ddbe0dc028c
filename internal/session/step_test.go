package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
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

// TestRunStepsConcurrently runs many steps at once against one board
// through RunStep: every line of every step arrives whole, and no step
// sees the board or another step's file.
func TestRunStepsConcurrently(t *testing.T) {
	board := filepath.Join(t.TempDir(), DiscoveriesFile)
	const steps, each = 16, 40
	seen := make(chan string, steps)
	a := agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
		if s.DiscoveriesFile == "" || filepath.Dir(s.DiscoveriesFile) != s.TempDir || s.DiscoveriesFile == board {
			return agent.Result{}, fmt.Errorf("step %s got discoveries file %q in %q", s.ID, s.DiscoveriesFile, s.TempDir)
		}
		seen <- s.TempDir
		f, err := os.OpenFile(s.DiscoveriesFile, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return agent.Result{}, err
		}
		defer f.Close()
		for i := 0; i < each; i++ {
			fmt.Fprintf(f, `{"type":"code_pattern","data":{"step":%q,"i":%d,"pad":%q}}`+"\n", s.ID, i, strings.Repeat("p", 900))
		}
		return agent.Result{Raw: json.RawMessage(`{}`)}, nil
	})
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	var wg sync.WaitGroup
	errs := make(chan error, steps)
	for i := 0; i < steps; i++ {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			_, err := RunStep(context.Background(), a, agent.Step{Phase: agent.PhaseExplore, ID: id}, board, log)
			errs <- err
		}(fmt.Sprintf("E%d", i+1))
	}
	wg.Wait()
	close(errs)
	close(seen)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for dir := range seen {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("step folder %s left behind", dir)
		}
	}
	ds, err := ReadDiscoveries(board, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != steps*each {
		t.Fatalf("board has %d discoveries, want %d", len(ds), steps*each)
	}
	for _, d := range ds {
		var data struct{ Step string }
		json.Unmarshal(d.Data, &data)
		if d.Worker != data.Step {
			t.Fatalf("line of %s filed under %s", data.Step, d.Worker)
		}
	}
}

func TestRunStepWithoutBoard(t *testing.T) {
	a := agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
		if s.TempDir == "" || s.DiscoveriesFile != "" {
			return agent.Result{}, fmt.Errorf("temp %q discoveries %q", s.TempDir, s.DiscoveriesFile)
		}
		return agent.Result{}, nil
	})
	if _, err := RunStep(context.Background(), a, agent.Step{Phase: agent.PhaseReview, ID: "PR"}, "", slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))); err != nil {
		t.Fatal(err)
	}
}
