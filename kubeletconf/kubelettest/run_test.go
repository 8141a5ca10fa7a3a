package kubelettest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// probe stands in for the kubelet in TestRunTouchesNothingOutside: it reports what
// it may change from where Run puts a kubelet, and exits 1 with that report.
const probe = `#!/bin/sh
if [ "$1" = --version ]; then echo "Kubernetes v1.99.0"; exit 0; fi
say() { printf '%s=%s ' "$1" "$2"; }
n=0
for c in /sys/fs/cgroup/ /sys/fs/cgroup/*/; do
  [ -d "$c" ] || continue
  if mkdir "$c/kubelettest-probe" 2>/dev/null; then say cgroup "written:$c"; rmdir "$c/kubelettest-probe"; else n=$((n + 1)); fi
done
say cgroups-refused "$n"
v=$(cat /proc/sys/vm/overcommit_memory)
if (echo "$v" >/proc/sys/vm/overcommit_memory) 2>/dev/null; then say sysctl written; else say sysctl read-only; fi
if mkdir -p /var/lib/kubelet && echo probe >/var/lib/kubelet/kubelettest-probe; then say kubelet-dir writable; fi
if echo probe >/etc/kubelettest-probe; then say etc writable; fi
say links "$(ip -o link show | awk -F': ' '{ printf "%s,", $2 }')"
say sys-links "$(ls /sys/class/net | tr '\n' ,)"
say config "$(tr -d ' \n' </etc/kubernetes/kubelet/kubelet-config.json)"
say args "$*"
say env "$(env | sort | tr '\n' ,)"
echo
exit 1
`

// TestRunTouchesNothingOutside runs a probe where Run runs a kubelet, with
// EKSBOOT_FAKECRI's runtime (the test needs root): it must see only loopback, write
// no cgroup and no sysctl, and find eksboot's files at their node paths, the unit's
// command line and environment, and what it writes in the root file system must not
// reach the host.
func TestRunTouchesNothingOutside(t *testing.T) {
	fake := os.Getenv(FakeCRIEnv)
	if fake == "" || os.Geteuid() != 0 {
		t.Skipf("needs root and %s (the fake runtime; make e2e lists it in the cache's last-run.env)", FakeCRIEnv)
	}
	root := t.TempDir()
	files := map[string]string{
		"etc/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --config /etc/kubernetes/kubelet/kubelet-config.json \\\n" +
			"  --container-runtime-endpoint unix:///run/containerd/containerd.sock $KUBELET_ARGS\n",
		"etc/systemd/system/kubelet.service.d/10-kubelet-args.conf": "[Service]\nEnvironment='KUBELET_ARGS=--node-ip=192.0.2.1 --v=2'\n",
		"etc/kubernetes/kubelet/kubelet-config.json":                `{"kind":"KubeletConfiguration","maxPods":29}`,
	}
	for p, text := range files {
		hp := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(bin, []byte(probe), 0o755); err != nil {
		t.Fatal(err)
	}
	k, err := Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), t, k, fake, root, Force{Config: map[string]any{"cpuManagerPolicy": "static"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Accepted {
		t.Fatalf("the probe was accepted: %s", r.Line)
	}
	t.Logf("probe: %s", r.Line)
	for _, want := range []string{
		"sysctl=read-only", "kubelet-dir=writable", "etc=writable", "links=lo, ", "sys-links=lo, ",
		`config={"cpuManagerPolicy":"static","kind":"KubeletConfiguration","maxPods":29}`,
		"args=--config /etc/kubernetes/kubelet/kubelet-config.json --container-runtime-endpoint unix:///run/containerd/containerd.sock --node-ip=192.0.2.1 --v=2",
		"KUBELET_ARGS=--node-ip=192.0.2.1 --v=2,",
	} {
		if !strings.Contains(r.Line, want) {
			t.Errorf("the probe's report lacks %q:\n%s", want, r.Line)
		}
	}
	if strings.Contains(r.Line, "cgroup=written") || strings.Contains(r.Line, "cgroups-refused=0 ") {
		t.Errorf("the probe made a cgroup, or found no hierarchy to try:\n%s", r.Line)
	}
	for _, p := range []string{"/var/lib/kubelet/kubelettest-probe", "/etc/kubelettest-probe"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s reached the host", p)
			_ = os.Remove(p)
		}
	}
}
