package systemdtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BusAddress returns the D-Bus address of the private bus, "unix:path=...".
func (h *Harness) BusAddress() string { return h.bus }

// Env returns the environment entries a child process needs to reach this
// manager as if it were the system manager: go-systemd (through godbus) and
// sd-bus tools such as `busctl --system` honour DBUS_SYSTEM_BUS_ADDRESS.
// Append them to os.Environ() for exec.Cmd.Env. In-process callers can use
// t.Setenv with the same entry.
func (h *Harness) Env() []string {
	return []string{"DBUS_SYSTEM_BUS_ADDRESS=" + h.bus}
}

// Systemctl runs `systemctl --user args...` against this manager and returns
// its combined output.
func (h *Harness) Systemctl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "systemctl", append([]string{"--user", "--no-pager"}, args...)...)
	// Without XDG_RUNTIME_DIR, systemctl --user talks to the manager over
	// DBUS_SESSION_BUS_ADDRESS. With it, it would use the manager's private
	// socket, which drops peers outside the manager's PID namespace.
	for _, e := range h.managerEnv() {
		if !strings.HasPrefix(e, "XDG_RUNTIME_DIR=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("systemctl --user %s: %w: %s",
			strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Show returns the unit's properties, via `systemctl --user show`, as a map
// from name to value; with no props it returns all of them.
func (h *Harness) Show(unit string, props ...string) (map[string]string, error) {
	args := []string{"show", unit}
	for _, p := range props {
		args = append(args, "--property="+p)
	}
	out, err := h.Systemctl(args...)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("systemctl --user show %s: %w", unit, err)
	}
	return m, nil
}

// ConfigHome returns the manager's XDG_CONFIG_HOME, where `enable` puts its
// links (under systemd/user).
func (h *Harness) ConfigHome() string { return filepath.Join(h.home(), ".config") }

func (h *Harness) home() string { return filepath.Join(h.dir, "home") }

// managerEnv is the environment of the manager and of systemctl --user: a
// home, config and runtime dir of its own so nothing lands in /root.
func (h *Harness) managerEnv() []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	return []string{
		"PATH=" + path,
		"LANG=C.UTF-8",
		"HOME=" + h.home(),
		"XDG_CONFIG_HOME=" + h.ConfigHome(),
		"XDG_DATA_HOME=" + filepath.Join(h.home(), ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(h.home(), ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(h.home(), ".cache"),
		"XDG_RUNTIME_DIR=" + h.runtimeDir,
		"DBUS_SESSION_BUS_ADDRESS=" + h.bus,
	}
}

// tail returns the last lines of the manager's log, for failure messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no manager log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return "manager log:\n" + strings.Join(lines, "\n")
}
