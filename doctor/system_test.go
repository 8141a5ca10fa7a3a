package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/systemd/systemdtest"
)

// TestDBusUnitsOfARealManager: unit state read over D-Bus from a real systemd (the
// harness's private manager): a running service, one that failed with status 3, and
// one that does not exist; and the kubelet check's verdict on each.
func TestDBusUnitsOfARealManager(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"kubelet.service":    "[Service]\nExecStart=/bin/sleep infinity\n",
		"containerd.service": "[Service]\nExecStart=/bin/sh -c 'echo containerd: cannot load config >&2; exit 3'\n",
	} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	h := systemdtest.Start(t, dir)
	for _, kv := range h.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	if _, err := h.Systemctl("start", "kubelet.service"); err != nil {
		t.Fatal(err)
	}
	_, _ = h.Systemctl("start", "containerd.service") // fails: that is the point
	u := &DBusUnits{}
	defer u.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	k, err := u.Unit(ctx, "kubelet.service")
	must(t, err)
	if k.LoadState != "loaded" || k.ActiveState != "active" || k.SubState != "running" || time.Since(k.ActiveEnter) > time.Minute {
		t.Errorf("kubelet.service: %+v, want loaded, active (running), entered just now", k)
	}
	var c UnitState
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err = u.Unit(ctx, "containerd.service"); err == nil && c.ActiveState == "failed" {
			break
		}
	}
	must(t, err)
	if c.ActiveState != "failed" || c.Result != "exit-code" || c.ExecMainStatus != 3 {
		t.Errorf("containerd.service: %+v, want failed, exit-code, status 3", c)
	}
	none, err := u.Unit(ctx, "no-such.service")
	must(t, err)
	if none.LoadState != "not-found" {
		t.Errorf("no-such.service: %+v, want not-found", none)
	}

	n := newNode(t)
	n.env.Units = u
	r := n.run()
	want(t, r, "runtime.kubelet", OK, "kubelet.service active (running)")
	want(t, r, "runtime.containerd", Fail, "containerd.service is failed (failed), result exit-code, main process status 3")
}

// TestJournalCtlArguments: JournalCtl asks journalctl for the unit's latest entries
// as JSON after its own arguments (--root or --file), and parses what it prints. The
// journalctl here replays a recorded export and records its arguments; the real one
// reads the real journald of the node in a box (e2e/doctor_test.go).
func TestJournalCtlArguments(t *testing.T) {
	dir := t.TempDir()
	export, err := filepath.Abs("testdata/kubelet-unauthorized.json")
	must(t, err)
	args := filepath.Join(dir, "args")
	bin := filepath.Join(dir, "journalctl")
	must(t, os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" >"+args+"\ncat "+export+"\n"), 0o755))
	es, err := JournalCtl{Path: bin, Args: []string{"--root=/mnt/node"}}.Entries(context.Background(), "kubelet.service", 50)
	must(t, err)
	if len(es) != 7 || !strings.Contains(es[2].Message, `err="Unauthorized"`) {
		t.Errorf("entries %+v", es)
	}
	got, err := os.ReadFile(args)
	must(t, err)
	want := "--root=/mnt/node\n--output=json\n--no-pager\n--quiet\n--unit=kubelet.service\n--lines=50\n--output-fields=MESSAGE,PRIORITY,SYSLOG_IDENTIFIER\n"
	if string(got) != want {
		t.Errorf("journalctl arguments:\n%s\nwant\n%s", got, want)
	}
	must(t, os.WriteFile(bin, []byte("#!/bin/sh\necho 'No journal files were found.' >&2\nexit 1\n"), 0o755))
	if _, err := (JournalCtl{Path: bin}).Entries(context.Background(), "kubelet.service", 50); err == nil || !strings.Contains(err.Error(), "No journal files") {
		t.Errorf("a failing journalctl: %v", err)
	}
}
