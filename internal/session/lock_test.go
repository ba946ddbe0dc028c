package session

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	release, stale, err := Lock(dir)
	if err != nil || stale != nil {
		t.Fatalf("first lock: %v %v", err, stale)
	}
	_, _, err = Lock(dir)
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.PID != os.Getpid() || le.Holder.Host == "" || le.Holder.Started.IsZero() {
		t.Fatalf("second lock: %v", err)
	}
	host, _ := os.Hostname()
	if msg := err.Error(); !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(msg, host) {
		t.Errorf("the refusal does not name the holder: %s", msg)
	}
	release()
	if _, err := os.Stat(dir + "/" + LockFile); !os.IsNotExist(err) {
		t.Errorf("lock file left after release: %v", err)
	}
	release2, stale, err := Lock(dir)
	if err != nil || stale != nil {
		t.Fatalf("after release: %v %v", err, stale)
	}
	release2()
}

func TestLockHasOneWinnerAmongMany(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []func()
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, _, err := Lock(dir)
				var le *LockedError
				if err != nil && !errors.As(err, &le) {
					t.Error(err)
				}
				if err == nil {
					mu.Lock()
					winners = append(winners, release)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		// Lockers that came after the winner released could win too;
		// what must never happen is two holding it at once, which the
		// winners (who all still hold it) would show.
		if len(winners) != 1 {
			t.Fatalf("round %d: %d lockers hold the lock at once", round, len(winners))
		}
		winners[0]()
	}
}

// TestLockOfADeadHolderIsTakenOver kills a process that holds a
// session's lock and takes the lock over.
func TestLockOfADeadHolderIsTakenOver(t *testing.T) {
	if os.Getenv("PLANEX_LOCK_HELPER") != "" {
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=TestLockHelper")
	cmd.Env = append(os.Environ(), "PLANEX_LOCK_HELPER="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("helper said %q", line)
	}
	_, _, err := Lock(dir)
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.PID != cmd.Process.Pid {
		cmd.Process.Kill()
		t.Fatalf("while the helper lives: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	release, stale, err := Lock(dir)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	defer release()
	if stale == nil || stale.PID != cmd.Process.Pid {
		t.Errorf("the dead holder is not named: %+v", stale)
	}
}

// TestLockHelper holds a lock until it is killed (run by the test above).
func TestLockHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_LOCK_HELPER")
	if dir == "" {
		t.Skip("helper process only")
	}
	if _, _, err := Lock(dir); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	select {}
}
