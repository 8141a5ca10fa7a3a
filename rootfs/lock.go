package rootfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockPath is the node file that Lock holds: under /run, so a reboot forgets it.
const LockPath = "/run/eksboot.lock"

// lockPoll is how often Lock tries again while another process holds the lock.
const lockPoll = 50 * time.Millisecond

// Lock takes the run lock of the root, an exclusive flock(2) on LockPath (created, with
// /run, when missing), so that two eksboot runs on one node (cloud-init's script and
// the run-phase unit, a second run by hand) never interleave. While another process
// holds it, Lock waits up to wait (or until ctx ends) and then fails with an error
// naming the holder's PID, which the holder writes into the file. The kernel drops
// the lock when its holder exits, however it exits: a killed run never leaves the
// node locked (only the file, which the next run takes over). unlock removes the file
// and releases the lock; call it once.
func (r *Root) Lock(ctx context.Context, wait time.Duration) (unlock func(), err error) {
	hp, err := r.Resolve(LockPath)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", LockPath, unwrapPath(err))
	}
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(hp, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", LockPath, unwrapPath(err))
		}
		if err := flockWait(ctx, f, hp, wait, deadline); err != nil {
			f.Close()
			return nil, err
		}
		// The holder before us removes the file before it lets go: when the lock we
		// got is on a file that is no longer at hp, the next run has a new one there.
		held, err1 := f.Stat()
		now, err2 := os.Stat(hp)
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		// The lock is ours: say who holds it. A failure here costs only the PID in the
		// message of a waiting run, never the lock.
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return func() {
			_ = os.Remove(hp) // still holding it, so no other run is between its open and its lock
			_ = f.Close()     // releases the flock
		}, nil
	}
}

// flockWait takes the exclusive flock of f, trying again every lockPoll until
// deadline or the end of ctx.
func flockWait(ctx context.Context, f *os.File, hp string, wait time.Duration, deadline time.Time) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("lock %s: %w", LockPath, err)
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("lock %s: another eksboot run (%s) has held it for more than %v; it is still configuring this node (wait for it, or stop it)",
				LockPath, holder(hp), wait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lock %s: stopped while waiting for another eksboot run (%s): %w", LockPath, holder(hp), context.Cause(ctx))
		case <-time.After(min(lockPoll, time.Until(deadline))):
		}
	}
}

// holder names the process that holds the lock file hp, as its PID says.
func holder(hp string) string {
	b, err := ReadRegularFile(hp, 64)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil || pid <= 0 {
		return "PID unknown"
	}
	return "PID " + strconv.Itoa(pid)
}
