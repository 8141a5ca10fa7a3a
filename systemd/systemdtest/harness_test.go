package systemdtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestHarness(t *testing.T) {
	h := Start(t, t.TempDir())

	if !strings.HasPrefix(h.BusAddress(), "unix:path=") {
		t.Errorf("BusAddress() = %q, want a unix:path= address", h.BusAddress())
	}

	got, err := h.Show("default.target", "ActiveState", "Id")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ActiveState": "active", "Id": "default.target"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Show(default.target)[%s] = %q, want %q", k, got[k], v)
		}
	}

	// A child process with Env() reaches the manager on the "system" bus.
	cmd := exec.Command("busctl", "--system", "get-property", "org.freedesktop.systemd1",
		"/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "SystemState")
	cmd.Env = append(os.Environ(), h.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("busctl --system with Env(): %v: %s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != `s "running"` && s != `s "degraded"` {
		t.Errorf("SystemState over the system bus = %s, want running or degraded", s)
	}
}
