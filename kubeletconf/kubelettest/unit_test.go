package kubelettest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/systemd/systemdtest"
)

func TestFlagValue(t *testing.T) {
	argv := []string{"/usr/bin/kubelet", "--config", "/a", "--config=/b", "-v", "2", "--kubeconfig=/k"}
	for name, want := range map[string]string{"config": "/b", "v": "2", "kubeconfig": "/k"} {
		if got, err := flagValue(argv, name); err != nil || got != want {
			t.Errorf("flagValue(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := flagValue(argv, "node-ip"); err != errNoFlag {
		t.Errorf("flagValue(node-ip): %v, want errNoFlag", err)
	}
}

func TestRefusalLine(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{"I1204 18:38:54.305333   24123 x.go:1] \"hello\"\npanic: failed to merge: unrecognized feature gate: X\n\ngoroutine 1:\n", "panic: failed to merge: unrecognized feature gate: X"},
		{
			"E1204 18:40:56.753746     417 run.go:72] \"command failed\" err=\"failed to parse kubelet flag: unknown flag: --nosuch\"\n",
			`"command failed" err="failed to parse kubelet flag: unknown flag: --nosuch"`,
		},
		{
			"E1204 18:40:56.753746     417 run.go:72] \"command failed\" err=<\n\tfailed to validate kubelet flags: unknown labels\n\tmore\n >\n",
			`"command failed" err=failed to validate kubelet flags: unknown labels more`,
		},
		{"I1204 18:40:56.753746     417 a.go:1] \"x\"\nE1204 18:40:56.753746     417 b.go:2] \"last error\"\nsomething\n", `"last error"`},
		{"just a line\n", "just a line"},
	} {
		if got := refusalLine(c.log); got != c.want {
			t.Errorf("refusalLine(%q) = %q, want %q", c.log, got, c.want)
		}
	}
}

func TestMergePatch(t *testing.T) {
	got := mergePatch(map[string]any{"a": 1.0, "b": map[string]any{"c": 2.0, "d": 3.0}},
		map[string]any{"a": nil, "b": map[string]any{"c": "x"}, "e": true})
	want := map[string]any{"b": map[string]any{"c": "x", "d": 3.0}, "e": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mergePatch: %v, want %v", got, want)
	}
}

// TestUnitCommandAgreesWithSystemd starts a unit with the shape of eksboot's
// kubelet.service (ExecStart= continued over lines, $VARIABLES from drop-ins, one of
// them written the way eksboot quotes a user's --kubelet-extra-args) on a real
// systemd manager, its program a script that records its arguments, and requires
// UnitCommand to give the same command line.
func TestUnitCommandAgreesWithSystemd(t *testing.T) {
	root := t.TempDir()
	units := filepath.Join(root, "etc/systemd/system")
	record := filepath.Join(root, "record")
	out := filepath.Join(root, "argv")
	write := func(p, text string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(record, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >"+out+"\n", 0o755)
	write(filepath.Join(units, "kt-record.service"), `[Unit]
Description=kubelettest: records its arguments

[Service]
Type=oneshot
Environment=FIRST=replaced
ExecStart=`+record+` \
    --config /etc/kubernetes/kubelet/kubelet-config.json \
    $KUBELET_ARGS $UNSET ${BRACED}x $$literal $KUBELET_EXTRA_ARGS $EMPTY
`, 0o644)
	write(filepath.Join(units, "kt-record.service.d/10-args.conf"), `[Service]
Environment='KUBELET_ARGS=--node-ip=192.168.45.67 --v=2 --hostname-override=ip-192-168-45-67.us-west-2.compute.internal'
Environment=BRACED=b EMPTY=
`, 0o644)
	write(filepath.Join(units, "kt-record.service.d/30-extra.conf"), `[Service]
Environment='KUBELET_EXTRA_ARGS=--node-labels="tier=back end" --w=\'single quoted\' --y=a\\\\b\\ c --max-pods=58	--z="unbalanced'
`, 0o644)

	got, err := UnitCommand(root, "kt-record.service")
	if err != nil {
		t.Fatal(err)
	}
	h := systemdtest.Start(t, units)
	if out, err := h.Systemctl("start", "kt-record.service"); err != nil {
		t.Fatalf("systemctl start: %v\n%s", err, out)
	}
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err = os.ReadFile(out); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the unit recorded nothing: %v", err)
	}
	want := append([]string{record}, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")...)
	if !reflect.DeepEqual(got.Argv, want) {
		t.Errorf("UnitCommand:\n%q\nsystemd ran:\n%q", got.Argv, want)
	}
	t.Logf("systemd ran %q", want)
	if wantFiles := []string{
		"etc/systemd/system/kt-record.service", "etc/systemd/system/kt-record.service.d/10-args.conf",
		"etc/systemd/system/kt-record.service.d/30-extra.conf",
	}; !reflect.DeepEqual(got.Files, wantFiles) {
		t.Errorf("files %q, want %q", got.Files, wantFiles)
	}
}
