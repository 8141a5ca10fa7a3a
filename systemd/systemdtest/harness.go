// Package systemdtest runs a real systemd manager on a real, private D-Bus
// bus for tests, so code that drives systemd can be tested against systemd
// itself rather than a mock.
//
// The manager is a `systemd --user` instance inside `unshare --mount --pid`
// (its own mount namespace, with a tmpfs on /run/systemd, and its own PID
// namespace, so every process it starts dies with it). The bus is a
// dbus-daemon the manager itself runs as a socket-activated dbus.service,
// as on a machine with dbus-user-session; its socket lives in a temporary
// directory that the test process can reach.
package systemdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that, set to "1", makes Start fail
// instead of skip when the machine cannot run the harness. CI sets it so
// these tests never silently skip.
const RequireEnv = "EKSBOOT_REQUIRE_SYSTEMD"

// SystemdPath is the systemd binary the harness runs with --user.
const SystemdPath = "/usr/lib/systemd/systemd"

// Bounds on waiting for the manager; generous so slow CI machines pass.
const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
)

// busUnits are the user units that run the bus, socket-activated like
// dbus-user-session's: the manager connects to its API bus only once
// dbus.service runs, so the bus must be one of its units. They come second
// on the unit path, so the harness needs only the dbus-daemon binary.
var busUnits = map[string]string{
	"dbus.socket": `[Unit]
Description=D-Bus bus socket of the eksboot test manager

[Socket]
ListenStream=%t/bus
`,
	"dbus.service": `[Unit]
Description=D-Bus bus of the eksboot test manager
Requires=dbus.socket

[Service]
ExecStart=dbus-daemon --session --address=systemd: --nofork --nopidfile --systemd-activation
`,
}

// Harness is a private systemd user manager on a private D-Bus bus, reading
// units from UnitDir first (then its built-in user unit paths).
type Harness struct {
	// UnitDir is the directory first on the manager's unit search path.
	UnitDir string

	dir        string // temporary root: runtime dir, home, log
	runtimeDir string // XDG_RUNTIME_DIR of the manager
	bus        string // D-Bus address of the private bus
}

// Start starts a manager reading units from unitDir and waits until it is
// running (or degraded). It skips the test, with the reason, when not root
// or when systemd, systemctl, dbus-daemon or unshare are missing, unless
// EKSBOOT_REQUIRE_SYSTEMD=1 is set, in which case it fails the test. It
// registers t.Cleanup to stop the manager and the bus and remove its files.
func Start(t testing.TB, unitDir string) *Harness {
	t.Helper()
	if reason := missing(); reason != "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("systemd harness: %s (%s=1 forbids skipping)", reason, RequireEnv)
		}
		t.Skipf("systemd harness: %s", reason)
	}
	abs, err := filepath.Abs(unitDir)
	if err != nil {
		t.Fatalf("systemd harness: unit dir: %v", err)
	}

	// Not t.TempDir: unix socket paths must stay under 108 bytes and
	// t.TempDir names grow with the test name.
	dir, err := os.MkdirTemp("", "eksboot-sd-")
	if err != nil {
		t.Fatalf("systemd harness: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	h := &Harness{
		UnitDir:    abs,
		dir:        dir,
		runtimeDir: filepath.Join(dir, "run"),
	}
	h.bus = "unix:path=" + filepath.Join(h.runtimeDir, "bus")
	busDir := filepath.Join(dir, "bus-units")
	for _, d := range []string{h.runtimeDir, h.ConfigHome(), busDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("systemd harness: %v", err)
		}
	}
	for name, text := range busUnits {
		if err := os.WriteFile(filepath.Join(busDir, name), []byte(text), 0o644); err != nil {
			t.Fatalf("systemd harness: %v", err)
		}
	}

	logPath := filepath.Join(dir, "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("systemd harness: %v", err)
	}
	defer logFile.Close()
	ready := filepath.Join(dir, "ready")

	cmd := exec.Command("unshare", "--mount", "--pid", "--fork", "--mount-proc",
		"--kill-child", "--", "sh", "-c", script)
	cmd.Env = append(h.managerEnv(),
		// The trailing ":" keeps the built-in user unit paths after ours.
		"SYSTEMD_UNIT_PATH="+abs+":"+busDir+":",
		"SYSTEMD_LOG_TARGET=console",
		"EKSBOOT_SD_READY="+ready,
		"EKSBOOT_SD_SYSTEMD="+SystemdPath,
		"EKSBOOT_SD_CGROUP="+filepath.Base(dir),
	)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Own process group, so Cleanup can signal unshare, the shell, the bus
	// and the manager at once; SIGKILL unshare if the test process dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("systemd harness: start unshare: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		stop(t, cmd.Process.Pid, exited, logPath)
		removeCgroups(filepath.Base(dir))
	})

	deadline := time.After(readyTimeout)
	for {
		if _, err := os.Stat(ready); err == nil {
			return h
		}
		select {
		case <-exited:
			t.Fatalf("systemd harness: manager exited before it was ready: %s\n%s",
				cmd.ProcessState, tail(logPath))
		case <-deadline:
			t.Fatalf("systemd harness: manager not ready after %s\n%s", readyTimeout, tail(logPath))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// script runs as PID 1 of the new PID namespace, in the new mount
// namespace. When it exits, the kernel kills every process left in the
// namespace, so TERM (trapped) or KILL ends bus, manager and units.
const script = `
set -eu
trap 'exit 0' TERM INT
mount --make-rprivate /
mkdir -p /run/systemd
mount -t tmpfs tmpfs /run/systemd
# systemd --user refuses to start unless /run/systemd/system exists.
mkdir -p /run/systemd/system
# A cgroup of its own in each hierarchy that systemd keeps its units in: a manager
# puts app.slice, runtime.slice... under its own cgroup (or that cgroup's parent when
# it is init.scope), so managers started side by side from one cgroup would share
# their units' cgroups, and stopping a unit in one would kill the other's processes.
for m in $(awk '$3 == "cgroup2" || ($3 == "cgroup" && $4 ~ /(^|,)name=systemd(,|$)/) { print $2 }' /proc/self/mounts); do
	{ mkdir "$m/$EKSBOOT_SD_CGROUP" && echo 0 >"$m/$EKSBOOT_SD_CGROUP/cgroup.procs"; } ||
		echo "systemd harness: no cgroup of its own under $m: managers running side by side may collide" >&2
done
"$EKSBOOT_SD_SYSTEMD" --user &
sd=$!
while :; do
	state=$(systemctl --user is-system-running 2>/dev/null) || :
	case "$state" in running|degraded) break ;; esac
	kill -0 "$sd" 2>/dev/null || { echo "systemd --user exited" >&2; exit 1; }
	sleep 0.1
done
# The manager joins the bus once dbus.service runs; wait for its name.
systemctl --user start dbus.service
until busctl --address="$DBUS_SESSION_BUS_ADDRESS" --auto-start=no call org.freedesktop.DBus \
	/org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s org.freedesktop.systemd1 2>/dev/null |
	grep -q true; do
	sleep 0.05
done
: >"$EKSBOOT_SD_READY"
wait
`

// removeCgroups removes the harness's cgroup, name, from every cgroup hierarchy, its
// children first (best effort: a cgroup goes once its last process is reaped).
func removeCgroups(name string) {
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || (f[2] != "cgroup" && f[2] != "cgroup2") {
			continue
		}
		top := filepath.Join(f[1], name)
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for attempt := 0; attempt < 50 && len(dirs) > 0; attempt++ {
			var left []string
			for i := len(dirs) - 1; i >= 0; i-- { // deepest first
				if err := syscall.Rmdir(dirs[i]); err != nil && !os.IsNotExist(err) {
					left = append([]string{dirs[i]}, left...)
				}
			}
			dirs = left
			if len(dirs) > 0 {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}

// missing says why the harness cannot run here, or "" if it can.
func missing() string {
	if os.Geteuid() != 0 {
		return "not running as root"
	}
	if _, err := os.Stat(SystemdPath); err != nil {
		return fmt.Sprintf("systemd not installed: %v", err)
	}
	for _, bin := range []string{"systemctl", "busctl", "dbus-daemon", "unshare", "mount"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Sprintf("%s not found: %v", bin, err)
		}
	}
	return ""
}

// stop signals the whole process group with SIGTERM (the namespace's init
// traps it and exits, which kills everything in the namespace), falling
// back to SIGKILL, and waits until unshare has exited.
func stop(t testing.TB, pgid int, exited <-chan struct{}, logPath string) {
	t.Helper()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(stopTimeout):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		t.Errorf("systemd harness: manager process group %d still running after SIGKILL\n%s", pgid, tail(logPath))
	}
}
