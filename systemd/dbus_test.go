package systemd_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/systemd"
	"github.com/eksboot/eksboot/systemd/systemdtest"
)

// callTimeout bounds each D-Bus call; outerTimeout guards calls whose own
// deadline is under test. Both are generous: no test asserts durations.
const (
	callTimeout  = 30 * time.Second
	outerTimeout = 90 * time.Second
)

// fakeUnit records $FOO, which its drop-in sets, then sleeps like a daemon.
const fakeUnit = `[Unit]
Description=fake kubelet

[Service]
ExecStart=/bin/sh -c 'printf "%%s\n" "$$FOO" > @OUT@/env.out; exec sleep 1000'

[Install]
WantedBy=default.target
`

// fixture is a harness with the given units and a DBus connected to it.
type fixture struct {
	h   *systemdtest.Harness
	m   *systemd.DBus
	out string // directory units write their records to
}

// newFixture writes units (path relative to the unit dir -> text, with @OUT@
// standing for fixture.out), starts a harness and connects to it the way
// eksboot does, through DBUS_SYSTEM_BUS_ADDRESS.
func newFixture(t *testing.T, units map[string]string) *fixture {
	t.Helper()
	unitDir, out := t.TempDir(), t.TempDir()
	for name, text := range units {
		writeFile(t, filepath.Join(unitDir, name), strings.ReplaceAll(text, "@OUT@", out))
	}
	h := systemdtest.Start(t, unitDir)
	for _, kv := range h.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	m, err := systemd.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return &fixture{h: h, m: m, out: out}
}

// do runs f under a callTimeout context, failing the test on error.
func do(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	if err := within(t, what, callTimeout, f); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// within runs f under a context with the given timeout and returns its
// error. It fails the test if f has not returned after outerTimeout, so a
// call that ignores its context fails the test instead of hanging it.
func within(t *testing.T, what string, timeout time.Duration, f func(ctx context.Context) error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		errc <- f(ctx)
	}()
	select {
	case err := <-errc:
		return err
	case <-time.After(outerTimeout):
		t.Fatalf("%s: still running %s after its context deadline", what, outerTimeout-timeout)
		return nil
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitForFile waits until path holds want: a unit's ExecStart runs after its
// start job is done, so the record appears a little later.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	var got []byte
	for time.Now().Before(deadline) {
		got, _ = os.ReadFile(path)
		if string(got) == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s = %q, want %q", path, got, want)
}

func TestDBusReloadEnableRestart(t *testing.T) {
	f := newFixture(t, map[string]string{"fake.service": fakeUnit})
	dropIn := filepath.Join(f.h.UnitDir, "fake.service.d", "10-x.conf")
	envOut := filepath.Join(f.out, "env.out")

	// Each step rewrites the drop-in; only Reload makes systemd see it.
	steps := []struct {
		name string
		foo  string
	}{
		{"first drop-in", "first"},
		{"changed drop-in", "second value"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			writeFile(t, dropIn, "[Service]\nEnvironment=\"FOO="+step.foo+"\"\n")
			if err := os.Remove(envOut); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			do(t, "Reload", f.m.Reload)
			do(t, "Enable", func(ctx context.Context) error { return f.m.Enable(ctx, "fake") })
			do(t, "Restart", func(ctx context.Context) error { return f.m.Restart(ctx, "fake") })
			waitForFile(t, envOut, step.foo+"\n")

			do(t, "ActiveState", func(ctx context.Context) error {
				state, err := f.m.ActiveState(ctx, "fake.service")
				if err == nil && state != "active" {
					t.Errorf("ActiveState(fake.service) = %q, want active", state)
				}
				return err
			})
			props, err := f.h.Show("fake.service", "ActiveState", "UnitFileState", "DropInPaths")
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"ActiveState": "active", "UnitFileState": "enabled", "DropInPaths": dropIn}
			for k, v := range want {
				if props[k] != v {
					t.Errorf("systemctl show fake.service: %s=%q, want %q", k, props[k], v)
				}
			}
		})
	}

	// enable linked the unit into the harness's config dir, not /root.
	link := filepath.Join(f.h.ConfigHome(), "systemd", "user", "default.target.wants", "fake.service")
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("enable link: %v", err)
	}
}

func TestDBusJobFailures(t *testing.T) {
	f := newFixture(t, map[string]string{
		"pre-false.service":    "[Service]\nExecStartPre=/bin/false\nExecStart=/bin/sleep 1000\n",
		"oneshot-fail.service": "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'exit 1'\n",
		"needs-broken.service": "[Unit]\nRequires=pre-false.service\nAfter=pre-false.service\n" +
			"[Service]\nExecStart=/bin/sleep 1000\n",
	})
	tests := []struct {
		name       string
		op         func(systemd.Manager, context.Context, string) error
		unit       string
		wantErr    string // exact text when wantResult is set, else a substring
		wantResult string // JobError.Result, "" when not a JobError
	}{
		{"ExecStartPre fails", systemd.Manager.Restart, "pre-false", "restart pre-false.service: job failed", "failed"},
		{"oneshot exits 1", systemd.Manager.Start, "oneshot-fail.service", "start oneshot-fail.service: job failed", "failed"},
		{"dependency fails", systemd.Manager.Restart, "needs-broken", "restart needs-broken.service: job dependency", "dependency"},
		{"unknown unit", systemd.Manager.Restart, "no-such-unit", "restart no-such-unit.service: ", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := within(t, tc.name, callTimeout, func(ctx context.Context) error {
				return tc.op(f.m, ctx, tc.unit)
			})
			if err == nil {
				t.Fatalf("error = nil, want %q", tc.wantErr)
			}
			var jerr *systemd.JobError
			isJob := errors.As(err, &jerr)
			switch {
			case tc.wantResult != "" && (!isJob || jerr.Result != tc.wantResult):
				t.Errorf("error = %v, want a *JobError with result %q", err, tc.wantResult)
			case tc.wantResult != "" && err.Error() != tc.wantErr:
				t.Errorf("error = %q, want %q", err, tc.wantErr)
			case tc.wantResult == "" && (isJob || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %q, want a D-Bus error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDBusRestartDeadline(t *testing.T) {
	f := newFixture(t, map[string]string{
		"hang.service": "[Service]\nExecStartPre=/bin/sleep 1000\nExecStart=/bin/sleep 1000\n",
		"ok.service":   "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n",
	})

	err := within(t, "Restart(hang)", 2*time.Second, func(ctx context.Context) error {
		return f.m.Restart(ctx, "hang")
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "hang.service") {
		t.Fatalf("Restart(hang) = %v, want an error naming hang.service wrapping context.DeadlineExceeded", err)
	}

	// The abandoned job ends now ("canceled"); its late result must not
	// block the connection, so the next job's result still arrives.
	if _, err := f.h.Systemctl("stop", "hang.service"); err != nil {
		t.Fatal(err)
	}
	do(t, "Start(ok) after an abandoned job", func(ctx context.Context) error { return f.m.Start(ctx, "ok") })
}

// TestDBusStartNoBlock: the job is queued and the call returns while the job still
// waits for the unit it is ordered after; the unit starts once that one is done.
func TestDBusStartNoBlock(t *testing.T) {
	f := newFixture(t, map[string]string{
		"gate.service": "[Service]\nType=oneshot\nRemainAfterExit=yes\n" +
			"ExecStart=/bin/sh -c 'until test -e @OUT@/open; do sleep 0.05; done'\n",
		"after-gate.service": "[Unit]\nAfter=gate.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\n" +
			"ExecStart=/bin/sh -c 'echo ran > @OUT@/after-gate.out'\n",
	})
	if _, err := f.h.Systemctl("start", "--no-block", "gate.service"); err != nil {
		t.Fatal(err)
	}
	do(t, "StartNoBlock(after-gate)", func(ctx context.Context) error { return f.m.StartNoBlock(ctx, "after-gate") })
	props, err := f.h.Show("after-gate.service", "ActiveState", "Job")
	if err != nil {
		t.Fatal(err)
	}
	if props["ActiveState"] != "inactive" || props["Job"] == "" || props["Job"] == "0" {
		t.Errorf("after StartNoBlock, while gate.service runs: after-gate.service %v, want inactive with a queued job", props)
	}
	t.Logf("after-gate.service while gate.service runs: %v", props)
	writeFile(t, filepath.Join(f.out, "open"), "")
	waitForFile(t, filepath.Join(f.out, "after-gate.out"), "ran\n")

	err = within(t, "StartNoBlock(no-such-unit)", callTimeout, func(ctx context.Context) error { return f.m.StartNoBlock(ctx, "no-such-unit") })
	if err == nil || !strings.Contains(err.Error(), "start --no-block no-such-unit.service: ") {
		t.Errorf("StartNoBlock(no-such-unit) = %v, want an error naming the unit", err)
	}
}

func TestDBusActiveState(t *testing.T) {
	f := newFixture(t, map[string]string{
		"ok.service": "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n",
	})
	do(t, "Start(ok)", func(ctx context.Context) error { return f.m.Start(ctx, "ok") })
	tests := []struct {
		name string
		unit string
		want string
	}{
		{"unknown unit", "no-such-unit", "inactive"},
		{"started unit", "ok", "active"},
		{"target", "default.target", "active"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			err := within(t, "ActiveState", callTimeout, func(ctx context.Context) (err error) {
				got, err = f.m.ActiveState(ctx, tc.unit)
				return err
			})
			if err != nil || got != tc.want {
				t.Errorf("ActiveState(%s) = %q, %v; want %q, nil", tc.unit, got, err, tc.want)
			}
		})
	}
}

// TestChildProcess points a child process at the harness with Env() alone,
// as blackbox tests do with the eksboot binary: the child is this test
// binary, re-run in child mode.
func TestChildProcess(t *testing.T) {
	if os.Getenv("EKSBOOT_SYSTEMD_TEST_CHILD") == "1" {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		m, err := systemd.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := errors.Join(m.Reload(ctx), m.Restart(ctx, "fake")); err != nil {
			t.Fatal(err)
		}
		return
	}

	unitDir, out := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(unitDir, "fake.service"), strings.ReplaceAll(fakeUnit, "@OUT@", out))
	writeFile(t, filepath.Join(unitDir, "fake.service.d", "10-x.conf"), "[Service]\nEnvironment=FOO=child\n")
	h := systemdtest.Start(t, unitDir)

	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EKSBOOT_SYSTEMD_TEST_CHILD=1")
	cmd.Env = append(cmd.Env, h.Env()...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	waitForFile(t, filepath.Join(out, "env.out"), "child\n")
}
