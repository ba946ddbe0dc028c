package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	if err := Run(context.Background(), exec.Command("sh", "-c", "exit 0")); err != nil {
		t.Fatalf("exit 0: %v", err)
	}
	var ee *exec.ExitError
	if err := Run(context.Background(), exec.Command("sh", "-c", "exit 3")); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit 3: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := Run(ctx, exec.Command("sh", "-c", "sleep 30 & sleep 30")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("the group was not killed promptly")
	}
}

func TestBackgroundChildrenDoNotOutliveTheCommand(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "late")
	// The command exits at once; its background child would write the
	// marker a moment later if it were still alive.
	if err := Run(context.Background(), exec.Command("sh", "-c", "(sleep 0.3; touch "+marker+") &")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a background child survived its command")
	}
}
