package rootfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eksboot/eksboot/internal/testtools"
)

// TestLockIsExclusive: a second Lock on the same root waits for the first, fails
// after its wait naming the holder's PID, and gets the lock once the holder lets go.
// (flock locks belong to the open file, so two Locks in one process exclude each
// other as two processes do.)
func TestLockIsExclusive(t *testing.T) {
	r := newRoot(t)
	unlock, err := r.Lock(context.Background(), time.Second)
	must(t, err)
	if entries, err := os.ReadDir(r.Dir()); err != nil || len(entries) != 0 {
		t.Errorf("Lock wrote into the root: %v, %v", entries, err)
	}

	start := time.Now()
	_, err = r.Lock(context.Background(), 200*time.Millisecond)
	want := fmt.Sprintf("another eksboot run (PID %d) has held the lock of the root %s for more than 200ms", os.Getpid(), r.Dir())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second Lock: %v, want an error containing %q", err, want)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond || waited > 2*time.Second {
		t.Errorf("second Lock gave up after %v, want about 200ms", waited)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := r.Lock(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a cancelled context: %v, want context.Canceled", err)
	}

	time.AfterFunc(100*time.Millisecond, unlock)
	start = time.Now()
	unlock2, err := r.Lock(context.Background(), 5*time.Second)
	must(t, err)
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("Lock got the lock after %v, while the first holder still had it", waited)
	}
	unlock2()
	if entries, err := os.ReadDir(r.Dir()); err != nil || len(entries) != 0 {
		t.Errorf("Lock left something in the root: %v, %v", entries, err)
	}
}

// TestLockHasOneHolder: many lockers on one root, each holding the lock a moment,
// never hold it two at a time.
func TestLockHasOneHolder(t *testing.T) {
	r := newRoot(t)
	var mu sync.Mutex
	holders, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				unlock, err := r.Lock(context.Background(), 10*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				holders++
				most = max(most, holders)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				holders--
				mu.Unlock()
				unlock()
			}
		})
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d lockers held the lock at once, want 1", most)
	}
}

// TestLockNamesAnotherProcess: the error names the PID of another process holding the
// lock (flock(1) here), read from /proc/locks.
func TestLockNamesAnotherProcess(t *testing.T) {
	flock := testtools.Require(t, "flock")
	r := newRoot(t)
	cmd := exec.Command(flock, "--exclusive", r.Dir(), "sleep", "10")
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	want := fmt.Sprintf("another eksboot run (PID %d) has held the lock of the root %s", cmd.Process.Pid, r.Dir())
	for start := time.Now(); time.Since(start) < 5*time.Second; {
		unlock, err := r.Lock(context.Background(), 100*time.Millisecond)
		if err == nil { // before flock(1) got it
			unlock()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if strings.Contains(err.Error(), want) {
			return
		}
		t.Fatalf("Lock: %v, want an error containing %q", err, want)
	}
	t.Fatalf("no error naming flock(1)'s PID %d", cmd.Process.Pid)
}
