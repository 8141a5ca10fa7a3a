// Package systemd is eksboot's client for systemd's D-Bus API: it reloads
// unit files, enables units and starts or restarts them, waiting for each
// job's result under the caller's context.
//
// DBus talks to a real manager through go-systemd; tests run one on a private
// bus (systemd/systemdtest). --dry-run asks no manager: it prints bootstrap's
// Actions.
package systemd

import (
	"context"
	"fmt"
	"strings"
	"syscall"
)

// Manager is the part of systemd's D-Bus API that eksboot drives. *DBus
// implements it against a running manager and *Recorder records the calls.
//
// Unit names without a unit type suffix get ".service" appended.
type Manager interface {
	// Reload reloads all unit files, like `systemctl daemon-reload`, and
	// returns once the manager has finished reloading.
	Reload(ctx context.Context) error
	// Enable enables unit files, like `systemctl enable` (persistent, not
	// forced). Units without an [Install] section are left as they are.
	Enable(ctx context.Context, units ...string) error
	// Start starts a unit in "replace" mode and waits for the job result.
	Start(ctx context.Context, unit string) error
	// Restart restarts a unit in "replace" mode and waits for the job result.
	Restart(ctx context.Context, unit string) error
	// StartNoBlock queues a start job in "replace" mode and returns once systemd
	// has queued it, like `systemctl start --no-block`: for a unit ordered after
	// the caller's own, whose job cannot run until the caller is done.
	StartNoBlock(ctx context.Context, unit string) error
	// Signal sends sig to the unit's main process, like
	// `systemctl kill --kill-whom=main -s SIG`; eksboot uses it to make
	// systemd-logind re-read its configuration (SIGHUP).
	Signal(ctx context.Context, unit string, sig syscall.Signal) error
	// ActiveState returns the unit's ActiveState property: "active",
	// "failed", "inactive", "activating", and so on. Unknown units are
	// "inactive", as with `systemctl is-active`.
	ActiveState(ctx context.Context, unit string) (string, error)
	// Close releases the connection, if any.
	Close()
}

// JobResultDone is the job result systemd reports for a job that succeeded.
const JobResultDone = "done"

// JobError reports a start or restart job that did not leave its unit
// running: either the job itself ended with a result other than "done", or
// it ended "done" but the unit had already failed (a Type=simple unit whose
// process died at once).
type JobError struct {
	// Op is the operation: "start" or "restart".
	Op string
	// Unit is the full unit name, such as "kubelet.service".
	Unit string
	// Result is the job result: "failed", "timeout", "canceled",
	// "dependency", "skipped", or "done" when the unit failed afterwards.
	Result string
	// ActiveState is the unit's state read after a "done" job; it is
	// empty when the job itself did not succeed.
	ActiveState string
}

// Error implements error, for example "restart kubelet.service: job failed".
func (e *JobError) Error() string {
	if e.Result == JobResultDone {
		return fmt.Sprintf("%s %s: job done but unit is %s", e.Op, e.Unit, e.ActiveState)
	}
	return fmt.Sprintf("%s %s: job %s", e.Op, e.Unit, e.Result)
}

// unitTypes are the suffixes systemd accepts for unit names.
var unitTypes = []string{
	".service", ".socket", ".device", ".mount", ".automount", ".swap",
	".target", ".path", ".timer", ".slice", ".scope",
}

// UnitName returns name with ".service" appended unless it already ends in a
// unit type suffix ("kubelet" -> "kubelet.service", "default.target" stays).
func UnitName(name string) string {
	for _, suffix := range unitTypes {
		if strings.HasSuffix(name, suffix) && len(name) > len(suffix) {
			return name
		}
	}
	return name + ".service"
}
