package rootfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockIsExclusive: a second Lock on the same root waits for the first, fails
// after its wait naming the holder's PID, and gets the lock once the holder lets go.
// (flock locks belong to the open file, so two Locks in one process exclude each
// other as two processes do.)
func TestLockIsExclusive(t *testing.T) {
	r := newRoot(t) // no /run yet: Lock makes it
	unlock, err := r.Lock(context.Background(), time.Second)
	must(t, err)
	b, err := os.ReadFile(filepath.Join(r.Dir(), "run/eksboot.lock"))
	must(t, err)
	if want := fmt.Sprintf("%d\n", os.Getpid()); string(b) != want {
		t.Errorf("lock file = %q, want the holder's PID %q", b, want)
	}

	start := time.Now()
	_, err = r.Lock(context.Background(), 200*time.Millisecond)
	want := fmt.Sprintf("lock /run/eksboot.lock: another eksboot run (PID %d) has held it for more than 200ms", os.Getpid())
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
}
