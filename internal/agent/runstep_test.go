package agent

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

	"github.com/planexhq/planex/internal/session"
)

// TestRunStepsConcurrently runs many steps at once against one board
// through RunStep: every line of every step arrives whole, and no step
// sees the board or another step's file.
func TestRunStepsConcurrently(t *testing.T) {
	board := filepath.Join(t.TempDir(), session.DiscoveriesFile)
	const steps, each = 16, 40
	seen := make(chan string, steps)
	a := Func(func(ctx context.Context, s Step) (Result, error) {
		if s.DiscoveriesFile == "" || filepath.Dir(s.DiscoveriesFile) != s.TempDir || s.DiscoveriesFile == board {
			return Result{}, fmt.Errorf("step %s got discoveries file %q in %q", s.ID, s.DiscoveriesFile, s.TempDir)
		}
		seen <- s.TempDir
		f, err := os.OpenFile(s.DiscoveriesFile, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return Result{}, err
		}
		defer f.Close()
		for i := 0; i < each; i++ {
			fmt.Fprintf(f, `{"type":"code_pattern","data":{"step":%q,"i":%d,"pad":%q}}`+"\n", s.ID, i, strings.Repeat("p", 900))
		}
		return Result{Raw: json.RawMessage(`{}`)}, nil
	})
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	var wg sync.WaitGroup
	errs := make(chan error, steps)
	for i := 0; i < steps; i++ {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			_, err := RunStep(context.Background(), a, Step{Phase: PhaseExplore, ID: id}, board, log)
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
	ds, err := session.ReadDiscoveries(board, log)
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
	a := Func(func(ctx context.Context, s Step) (Result, error) {
		if s.TempDir == "" || s.DiscoveriesFile != "" {
			return Result{}, fmt.Errorf("temp %q discoveries %q", s.TempDir, s.DiscoveriesFile)
		}
		return Result{}, nil
	})
	if _, err := RunStep(context.Background(), a, Step{Phase: PhaseReview, ID: "PR"}, "", slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))); err != nil {
		t.Fatal(err)
	}
}
