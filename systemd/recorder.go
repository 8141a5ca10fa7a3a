package systemd

import (
	"context"
	"strings"
	"sync"
	"syscall"
)

// Recorder is a Manager that performs nothing and records each call as a
// line such as "daemon-reload", "enable kubelet.service" or
// "restart kubelet.service", for --dry-run output and tests. Units it has
// started or restarted report "active", all others "inactive". The zero
// value is ready to use and it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	calls  []string
	active map[string]bool
}

var _ Manager = (*Recorder)(nil)

// Calls returns a copy of the recorded lines, oldest first.
func (r *Recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *Recorder) record(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, line)
}

// Reload records "daemon-reload".
func (r *Recorder) Reload(context.Context) error {
	r.record("daemon-reload")
	return nil
}

// Enable records "enable" followed by the unit names, in the order given.
func (r *Recorder) Enable(_ context.Context, units ...string) error {
	if len(units) == 0 {
		return nil
	}
	r.record("enable " + strings.Join(unitNames(units), " "))
	return nil
}

// Start records "start <unit>" and marks the unit active.
func (r *Recorder) Start(_ context.Context, unit string) error {
	r.activate("start", unit)
	return nil
}

// Restart records "restart <unit>" and marks the unit active.
func (r *Recorder) Restart(_ context.Context, unit string) error {
	r.activate("restart", unit)
	return nil
}

func (r *Recorder) activate(op, unit string) {
	name := UnitName(unit)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, op+" "+name)
	if r.active == nil {
		r.active = make(map[string]bool)
	}
	r.active[name] = true
}

// Signal records "signal SIGHUP <unit>" (or the signal's number).
func (r *Recorder) Signal(_ context.Context, unit string, sig syscall.Signal) error {
	r.record("signal " + unitSignalName(sig) + " " + UnitName(unit))
	return nil
}

// ActiveState records "is-active <unit>" and returns "active" for units
// started or restarted through r, "inactive" for all others.
func (r *Recorder) ActiveState(_ context.Context, unit string) (string, error) {
	name := UnitName(unit)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "is-active "+name)
	if r.active[name] {
		return "active", nil
	}
	return "inactive", nil
}

// Close does nothing; it is not recorded.
func (r *Recorder) Close() {}
