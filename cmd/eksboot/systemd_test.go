package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/systemd/systemdtest"
)

// fakeUnits prepares root for a real systemd manager: a containerd that only sleeps,
// and a drop-in that swaps the kubelet for a script recording what systemd gave it
// (its KUBELET_EXTRA_ARGS and its argv). pre is the kubelet's ExecStartPre.
func fakeUnits(t *testing.T, root, pre string) string {
	t.Helper()
	out := filepath.Join(root, "out")
	units := filepath.Join(root, "etc/systemd/system")
	script := filepath.Join(root, "fake-kubelet")
	files := map[string]string{
		// argv first, extra-args last, each renamed into place: the tests wait for
		// extra-args, and argv must be whole by then.
		script: "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + out + "/argv.tmp && mv " + out + "/argv.tmp " + out + "/argv\n" +
			"printf '%s' \"$KUBELET_EXTRA_ARGS\" > " + out + "/extra-args.tmp && mv " + out + "/extra-args.tmp " + out + "/extra-args\nexec sleep 1000\n",
		filepath.Join(units, "containerd.service"): "[Service]\nExecStart=/bin/sleep 1000\n\n[Install]\nWantedBy=default.target\n",
		filepath.Join(units, "kubelet.service.d/99-test.conf"): "[Service]\nExecStartPre=\nExecStartPre=" + pre +
			"\nExecStart=\nExecStart=" + script + " $KUBELET_ARGS $KUBELET_EXTRA_ARGS\n",
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return units
}

func withHarness(env map[string]string, h *systemdtest.Harness) map[string]string {
	for _, e := range h.Env() {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	return env
}

// argsWithout drops --no-restart and sets --kubelet-extra-args to extra.
func argsWithout(args []string, extra string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--no-restart":
			continue
		case "--kubelet-extra-args":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return append(out, "--mount-bpf-fs", "false", "--kubelet-extra-args", extra)
}

// TestRestartWithRealSystemd runs the binary against a real systemd manager over
// D-Bus: the kubelet must get --kubelet-extra-args exactly as given, a second run must
// restart nothing, and new extra args must reach a restarted kubelet.
func TestRestartWithRealSystemd(t *testing.T) {
	root := t.TempDir()
	h := systemdtest.Start(t, fakeUnits(t, root, "/bin/true"))
	env, args := startCase(t, "01-m5large-usw2-vpc192", root)
	env = withHarness(env, h)

	// Flags the kubelet has, with a quoted space, %, $ and a backslash in their values.
	extra := `--node-labels=a=b,team=x --eviction-hard="memory.available<200Mi" --provider-id='y z' --eviction-minimum-reclaim=memory.available=50% --cert-dir=$HOME --resolv-conf=a\b`
	code, _, stderr := run(t, env, "", argsWithout(args, extra)...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	got := waitFile(t, filepath.Join(root, "out/extra-args"), "")
	if string(got) != extra {
		t.Errorf("KUBELET_EXTRA_ARGS seen by the kubelet:\n %q\nwant\n %q", got, extra)
	}
	argv, _ := os.ReadFile(filepath.Join(root, "out/argv"))
	if !strings.Contains(string(argv), "--hostname-override=ip-192-168-45-67.us-west-2.compute.internal\n") {
		t.Errorf("kubelet argv lacks KUBELET_ARGS:\n%s", argv)
	}
	props, err := h.Show("kubelet.service", "ActiveState", "MainPID")
	if err != nil || props["ActiveState"] != "active" {
		t.Fatalf("kubelet: %v %v", props, err)
	}

	// Same inputs: nothing written, nothing restarted.
	code, _, stderr = run(t, env, "", argsWithout(args, extra)...)
	if code != 0 || !strings.Contains(stderr, "every file already up to date") {
		t.Fatalf("second run: exit %d:\n%s", code, stderr)
	}
	again, err := h.Show("kubelet.service", "ActiveState", "MainPID")
	if err != nil || again["MainPID"] != props["MainPID"] || again["ActiveState"] != "active" {
		t.Errorf("second run restarted the kubelet: before %v, after %v (%v)", props, again, err)
	}

	// New extra args: one file changes and the kubelet restarts with them.
	code, _, stderr = run(t, env, "", argsWithout(args, "--v=4")...)
	if code != 0 {
		t.Fatalf("third run: exit %d:\n%s", code, stderr)
	}
	if got := waitFile(t, filepath.Join(root, "out/extra-args"), extra); string(got) != "--v=4" {
		t.Errorf("after the change the kubelet saw %q, want --v=4", got)
	}
	if n := strings.Count(stderr, "\twrote\t"); n != 1 {
		t.Errorf("third run wrote %d files, want 1:\n%s", n, stderr)
	}
	if after, _ := h.Show("kubelet.service", "MainPID"); after["MainPID"] == props["MainPID"] {
		t.Errorf("the kubelet was not restarted (MainPID %s)", after["MainPID"])
	}
}

// waitFile waits for the fake kubelet, which systemd starts asynchronously, to write p
// with content other than old, and returns it (bounded: a kubelet that never starts
// fails the test).
func waitFile(t *testing.T, p, old string) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(p)
		if err == nil && string(b) != old {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake kubelet did not write %s (last: %q, %v)", p, b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFailingKubeletFailsTheRun checks that a kubelet that cannot start makes eksboot
// exit 1 with an error naming the unit.
func TestFailingKubeletFailsTheRun(t *testing.T) {
	root := t.TempDir()
	h := systemdtest.Start(t, fakeUnits(t, root, "/bin/false"))
	env, args := startCase(t, "01-m5large-usw2-vpc192", root)
	code, _, stderr := run(t, withHarness(env, h), "", argsWithout(args, "--v=2")...)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.Contains(last, "kubelet.service") || !strings.Contains(last, "failed") {
		t.Errorf("exit %d, last line %q; want exit 1 naming kubelet.service and the failed job\n%s", code, last, stderr)
	}
}

// TestGracefulShutdownWithRealSystemd checks --graceful-shutdown end to end: the
// kubelet config gets the grace periods, the logind drop-in is written, and the running
// logind (here a stand-in unit that re-reads logind.conf.d on SIGHUP, as logind does)
// is told over D-Bus to pick it up. Turning it off again removes the drop-in.
func TestGracefulShutdownWithRealSystemd(t *testing.T) {
	root := t.TempDir()
	units := fakeUnits(t, root, "/bin/true")
	out := filepath.Join(root, "out")
	logind := filepath.Join(root, "fake-logind")
	script := "#!/bin/sh\ntrap 'cat " + root + "/etc/systemd/logind.conf.d/*.conf > " + out + "/logind-seen 2>&1' HUP\n" +
		"echo ready > " + out + "/logind-ready\nwhile :; do sleep 1 & wait $!; done\n"
	if err := os.WriteFile(logind, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(units, "systemd-logind.service"), []byte("[Service]\nExecStart="+logind+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := systemdtest.Start(t, units)
	if _, err := h.Systemctl("start", "systemd-logind.service"); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(out, "logind-ready"), "")
	env, args := startCase(t, "01-m5large-usw2-vpc192", root)
	env = withHarness(env, h)

	code, _, stderr := run(t, env, "", append(argsWithout(args, "--v=2"), "--graceful-shutdown")...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	seen := waitFile(t, filepath.Join(out, "logind-seen"), "")
	if !strings.Contains(string(seen), "InhibitDelayMaxSec=150") {
		t.Errorf("logind re-read %q, want InhibitDelayMaxSec=150", seen)
	}
	cfg, err := os.ReadFile(filepath.Join(root, "etc/kubernetes/kubelet/kubelet-config.json"))
	if err != nil || !strings.Contains(string(cfg), `"shutdownGracePeriod": "2m30s"`) || !strings.Contains(string(cfg), `"shutdownGracePeriodCriticalPods": "30s"`) {
		t.Errorf("kubelet config (%v):\n%s", err, cfg)
	}

	code, _, stderr = run(t, env, "", argsWithout(args, "--v=2")...)
	if code != 0 || !strings.Contains(stderr, "removed") {
		t.Fatalf("turning it off: exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd/logind.conf.d/40-eksboot-shutdown.conf")); !os.IsNotExist(err) {
		t.Errorf("logind drop-in still there: %v", err)
	}
}

// TestKubeletThatExitsFailsTheRun: a kubelet whose process starts and then exits (an
// unknown flag, a bad config) makes the run fail naming kubelet.service, although its
// start job was done: the unit is Type=simple, and systemd would restart it forever.
func TestKubeletThatExitsFailsTheRun(t *testing.T) {
	root := t.TempDir()
	units := fakeUnits(t, root, "/bin/true")
	dropIn := "[Service]\nExecStart=\nExecStart=/bin/sh -c 'sleep 0.3; echo \"unknown flag: --x\" >&2; exit 1'\nRestart=on-failure\nRestartSec=5\n"
	if err := os.WriteFile(filepath.Join(units, "kubelet.service.d/99-zz-exits.conf"), []byte(dropIn), 0o644); err != nil {
		t.Fatal(err)
	}
	h := systemdtest.Start(t, units)
	env, args := startCase(t, "01-m5large-usw2-vpc192", root)
	env = withHarness(env, h)
	env["EKSBOOT_KUBELET_SETTLE"] = "2s"
	code, _, stderr := run(t, env, "", argsWithout(args, "--v=2")...)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.Contains(last, "kubelet.service did not stay running") {
		t.Errorf("exit %d, last line %q; want exit 1 naming kubelet.service\n%s", code, last, stderr)
	}
}
