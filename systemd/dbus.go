package systemd

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"syscall"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

// jobMode is the mode of every job eksboot queues: replace conflicting jobs.
const jobMode = "replace"

// DBus talks to systemd over D-Bus with go-systemd's dbus package. Create it
// with Connect and release it with Close. It is safe for concurrent use.
type DBus struct {
	conn *sddbus.Conn
	// cancel ends the context the connection lives under; godbus closes
	// the connection when that context is done.
	cancel context.CancelFunc
}

var _ Manager = (*DBus)(nil)

// Connect connects to the system manager: the system bus (godbus honours
// DBUS_SYSTEM_BUS_ADDRESS, which is how tests point it at a private
// manager), falling back to systemd's private socket when root, as
// go-systemd's NewWithContext does.
//
// ctx bounds only the connecting: the connection stays open after ctx ends,
// until Close.
func Connect(ctx context.Context) (*DBus, error) {
	// godbus closes a connection when the context it was dialled with is
	// done, so dial under a context of our own that only Close (or giving
	// up on ctx below) cancels.
	connCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	type dialed struct {
		conn *sddbus.Conn
		err  error
	}
	ch := make(chan dialed, 1)
	go func() {
		conn, err := sddbus.NewWithContext(connCtx)
		ch <- dialed{conn, err}
	}()
	select {
	case d := <-ch:
		if d.err != nil {
			cancel()
			return nil, fmt.Errorf("connect to systemd: %w", d.err)
		}
		return &DBus{conn: d.conn, cancel: cancel}, nil
	case <-ctx.Done():
		// Cancelling connCtx makes godbus close the half-open connection,
		// so the dialling goroutine returns and the buffered channel lets
		// it finish without a reader.
		cancel()
		return nil, fmt.Errorf("connect to systemd: %w", ctx.Err())
	}
}

// Close closes the connection. Jobs already queued keep running in systemd.
func (d *DBus) Close() {
	d.conn.Close()
	d.cancel()
}

// Reload reloads all unit files, like `systemctl daemon-reload`. systemd
// answers the call only after the reload has finished.
func (d *DBus) Reload(ctx context.Context) error {
	if err := d.conn.ReloadContext(ctx); err != nil {
		return fmt.Errorf("daemon-reload: %w", withCtxErr(ctx, err))
	}
	return nil
}

// Enable enables unit files like `systemctl enable`: persistent
// (runtime=false) and without replacing existing links (force=false). Unit
// files without an [Install] section are accepted and left unchanged, as
// systemctl does (it only warns).
func (d *DBus) Enable(ctx context.Context, units ...string) error {
	if len(units) == 0 {
		return nil
	}
	names := make([]string, len(units))
	for i, u := range units {
		// EnableUnitFiles also takes absolute paths of unit files.
		if path.IsAbs(u) {
			names[i] = u
		} else {
			names[i] = UnitName(u)
		}
	}
	if _, _, err := d.conn.EnableUnitFilesContext(ctx, names, false, false); err != nil {
		return fmt.Errorf("enable %s: %w", strings.Join(names, ", "), withCtxErr(ctx, err))
	}
	return nil
}

// Start starts a unit in "replace" mode and waits for the job result; see
// runJob for what counts as success.
func (d *DBus) Start(ctx context.Context, unit string) error {
	return d.runJob(ctx, "start", unit, d.conn.StartUnitContext)
}

// StartNoBlock queues a start job in "replace" mode and returns when systemd has
// queued it, without waiting for its result: the job waits for the units its unit
// is ordered after, which may include the caller's own.
func (d *DBus) StartNoBlock(ctx context.Context, unit string) error {
	name := UnitName(unit)
	if _, err := d.conn.StartUnitContext(ctx, name, jobMode, nil); err != nil {
		return fmt.Errorf("start --no-block %s: %w", name, withCtxErr(ctx, err))
	}
	return nil
}

// Restart restarts a unit in "replace" mode (starting it if it is not
// running) and waits for the job result; see runJob for what counts as
// success.
func (d *DBus) Restart(ctx context.Context, unit string) error {
	return d.runJob(ctx, "restart", unit, d.conn.RestartUnitContext)
}

// Signal sends sig to the unit's main process. systemd answers the call once
// the signal is sent; what the process does with it is up to the process.
func (d *DBus) Signal(ctx context.Context, unit string, sig syscall.Signal) error {
	name := UnitName(unit)
	if err := d.conn.KillUnitWithTarget(ctx, name, sddbus.Main, int32(sig)); err != nil {
		return fmt.Errorf("signal %s %s: %w", unitSignalName(sig), name, withCtxErr(ctx, err))
	}
	return nil
}

// unitSignalName names sig the way systemctl does ("SIGHUP").
func unitSignalName(sig syscall.Signal) string {
	if sig == syscall.SIGHUP {
		return "SIGHUP"
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// ActiveState returns the unit's ActiveState property. systemd loads unknown
// units on demand and reports them "inactive".
func (d *DBus) ActiveState(ctx context.Context, unit string) (string, error) {
	name := UnitName(unit)
	state, err := d.activeState(ctx, name)
	if err != nil {
		return "", fmt.Errorf("get active state of %s: %w", name, err)
	}
	return state, nil
}

func (d *DBus) activeState(ctx context.Context, name string) (string, error) {
	p, err := d.conn.GetUnitPropertyContext(ctx, name, "ActiveState")
	if err != nil {
		return "", withCtxErr(ctx, err)
	}
	state, ok := p.Value.Value().(string)
	if !ok {
		return "", fmt.Errorf("ActiveState is %s, not a string", p.Value.Signature())
	}
	return state, nil
}

// jobFunc is the shape of go-systemd's StartUnitContext and friends.
type jobFunc func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

// runJob queues a job with queue and waits, under ctx, for its result. A
// result other than "done" is a *JobError. After "done" it reads the
// unit's ActiveState once and returns a *JobError if the unit is "failed"
// already. If ctx ends first, the error wraps ctx.Err(); the job itself
// stays queued in systemd.
func (d *DBus) runJob(ctx context.Context, op, unit string, queue jobFunc) error {
	name := UnitName(unit)
	// go-systemd sends the result while holding its job lock and blocks
	// until the send succeeds; with room for it, a result that arrives
	// after we gave up never blocks the connection, and the channel is
	// collected once go-systemd drops it.
	ch := make(chan string, 1)
	if _, err := queue(ctx, name, jobMode, ch); err != nil {
		return fmt.Errorf("%s %s: %w", op, name, withCtxErr(ctx, err))
	}
	var result string
	select {
	case result = <-ch:
	case <-ctx.Done():
		return fmt.Errorf("%s %s: waiting for job result: %w", op, name, ctx.Err())
	}
	if result != JobResultDone {
		return &JobError{Op: op, Unit: name, Result: result}
	}
	state, err := d.activeState(ctx, name)
	if err != nil {
		return fmt.Errorf("%s %s: job done, but get active state: %w", op, name, err)
	}
	if state == "failed" {
		return &JobError{Op: op, Unit: name, Result: result, ActiveState: state}
	}
	return nil
}

// withCtxErr makes sure err wraps ctx.Err() when the context has ended, so
// callers can test for context.DeadlineExceeded whatever godbus returned.
func withCtxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}
