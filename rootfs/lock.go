package rootfs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockPoll is how often Lock tries again while another process holds the lock.
const lockPoll = 50 * time.Millisecond

// procLocks lists the file locks of the system, with their holders' PIDs.
var procLocks = "/proc/locks"

// Lock takes the run lock of the root: an exclusive flock(2) of the root directory
// itself, so that two eksboot runs on one node (cloud-init's script and the run-phase
// unit, a second run by hand) never interleave, and so that taking it writes nothing
// (a lock file would be a write by runs that must leave the node alone). While another
// process holds it, Lock waits up to wait (or until ctx ends) and then fails with an
// error naming the holder's PID, as /proc/locks gives it. The kernel drops the lock
// when its holder exits, however it exits: a killed run never leaves the node locked.
// unlock releases it; call it once.
func (r *Root) Lock(ctx context.Context, wait time.Duration) (unlock func(), err error) {
	d, err := os.Open(r.dir)
	if err != nil {
		return nil, fmt.Errorf("lock the root %s: %w", r.dir, unwrapPath(err))
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = d.Close() }, nil // the close releases the flock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			d.Close()
			return nil, fmt.Errorf("lock the root %s: %w", r.dir, err)
		}
		if !time.Now().Before(deadline) {
			who := holder(d)
			d.Close()
			return nil, fmt.Errorf("another eksboot run (%s) has held the lock of the root %s for more than %v; it is still configuring this node (wait for it, or stop it)",
				who, r.dir, wait)
		}
		select {
		case <-ctx.Done():
			who := holder(d)
			d.Close()
			return nil, fmt.Errorf("stopped while waiting for another eksboot run (%s) to release the lock of the root %s: %w", who, r.dir, context.Cause(ctx))
		case <-time.After(min(lockPoll, time.Until(deadline))):
		}
	}
}

// holder names the process that holds a flock of the open directory d, from
// /proc/locks ("1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF"), or
// says the PID is unknown.
func holder(d *os.File) string {
	st, err := d.Stat()
	sys, ok := st.Sys().(*syscall.Stat_t)
	if err != nil || !ok {
		return "PID unknown"
	}
	dev := fmt.Sprintf("%02x:%02x:%d", major(sys.Dev), minor(sys.Dev), sys.Ino)
	f, err := os.Open(procLocks)
	if err != nil {
		return "PID unknown"
	}
	defer f.Close()
	byInode := "" // a match on the inode alone (file systems whose stat reports another device)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[3] != "WRITE" {
			continue // "->" lines are waiters, not holders
		}
		if _, err := strconv.Atoi(fields[4]); err != nil {
			continue
		}
		if fields[5] == dev {
			return "PID " + fields[4]
		}
		if strings.HasSuffix(fields[5], fmt.Sprintf(":%d", sys.Ino)) && byInode == "" {
			byInode = "PID " + fields[4]
		}
	}
	if byInode != "" {
		return byInode
	}
	return "PID unknown"
}

// major and minor split a Linux device number as the kernel's new_encode_dev does.
func major(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff) }
func minor(dev uint64) uint64 { return dev&0xff | (dev>>12)&^uint64(0xff) }
