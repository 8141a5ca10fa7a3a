package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/systemd/systemdtest"
)

// TestBootUnitsWithRealSystemd boots a NodeConfig node through the shipped
// eksboot-config.service and eksboot-run.service on a real systemd manager, with
// stand-ins for cloud-init.service (a user-data script that checks the files are
// there and the kubelet is not, then drops a NodeConfig into /etc/eks/eksboot.d) and
// cloud-final.service. The kubelet must start once, after cloud-init, with the
// drop-in's flag appended to the user data's.
func TestBootUnitsWithRealSystemd(t *testing.T) {
	root := t.TempDir()
	units := fakeUnits(t, root, "/bin/true")
	h := systemdtest.Start(t, units)

	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	if err != nil {
		t.Fatal(err)
	}
	ud, err := os.ReadFile("../../testdata/userdata/10-nodeadm-plain-nodeconfig.userdata")
	if err != nil {
		t.Fatal(err)
	}
	c.IMDS.UserData = string(ud)
	fakes, err := c.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fakes.Close)

	// The shipped units, with the test binary and its flags in ExecStart and the
	// environment that points it at the fakes and the test manager.
	env := withHarness(fakes.Env(), h)
	var envLines []string
	for k, v := range env {
		envLines = append(envLines, fmt.Sprintf("Environment=%q", k+"="+v))
	}
	sort.Strings(envLines)
	flags := fmt.Sprintf(" --root %s --kubelet-version %s --imds-endpoint %s", root, c.KubeletVersion, fakes.IMDS.URL())
	for name, b := range map[string][]byte{"eksboot-config.service": assets.EksbootConfigService, "eksboot-run.service": assets.EksbootRunService} {
		text := strings.Replace(string(b), "ExecStart=/usr/bin/eksboot init --phase config", "ExecStart="+binary+" init --phase config"+flags, 1)
		text = strings.Replace(text, "ExecStart=/usr/bin/eksboot init --phase run", "ExecStart="+binary+" init --phase run"+flags, 1)
		text = strings.Replace(text, "[Service]\n", "[Service]\n"+strings.Join(envLines, "\n")+"\n", 1)
		if !strings.Contains(text, binary) {
			t.Fatalf("%s: ExecStart not found", name)
		}
		writeFile(t, filepath.Join(units, name), text)
	}
	out := filepath.Join(root, "out")
	dropIn := filepath.Join(root, "etc/eks/eksboot.d/50-between.yaml")
	writeFile(t, filepath.Join(root, "cloud-init.sh"), "#!/bin/sh\nset -e\n"+
		"test -s "+root+"/etc/kubernetes/kubelet/kubelet-config.json && echo yes > "+out+"/config-written-before-cloud-init\n"+
		"test ! -e "+out+"/extra-args && echo yes > "+out+"/kubelet-not-started-yet\n"+
		"mkdir -p "+filepath.Dir(dropIn)+"\n"+
		"printf 'apiVersion: node.eks.aws/v1alpha1\\nkind: NodeConfig\\nspec:\\n  kubelet:\\n    flags: [--node-labels=phase=between]\\n' > "+dropIn+"\n")
	writeFile(t, filepath.Join(units, "cloud-init.service"), "[Service]\nType=oneshot\nExecStart=/bin/sh "+root+"/cloud-init.sh\n")
	writeFile(t, filepath.Join(units, "cloud-final.service"), "[Unit]\nAfter=cloud-init.service\n[Service]\nType=oneshot\nExecStart=/bin/true\n")
	// One transaction, as at boot, where default.target pulls them all in: systemd
	// orders the four units. (`systemctl start a b c d` would make four transactions,
	// and a unit's After= on a unit with no job yet orders nothing: cloud-final ran
	// before cloud-init, and the run phase with it, about one time in six.)
	bootUnits := "eksboot-config.service eksboot-run.service cloud-init.service cloud-final.service"
	writeFile(t, filepath.Join(units, "test-boot.target"), "[Unit]\nWants="+bootUnits+"\nAfter="+bootUnits+"\n")
	if _, err := h.Systemctl("daemon-reload"); err != nil {
		t.Fatal(err)
	}
	if outp, err := h.Systemctl("start", "test-boot.target"); err != nil {
		logs, _ := h.Systemctl("status", "eksboot-config.service", "eksboot-run.service")
		t.Fatalf("%v\n%s\n%s", err, outp, logs)
	}
	for _, marker := range []string{"config-written-before-cloud-init", "kubelet-not-started-yet"} {
		if _, err := os.Stat(filepath.Join(out, marker)); err != nil {
			t.Errorf("the cloud-init stand-in did not find %s: %v", marker, err)
		}
	}
	got := waitFile(t, filepath.Join(out, "extra-args"), "")
	want := "--node-labels=workload=general,env=prod --register-with-taints=env=prod:PreferNoSchedule --node-labels=phase=between"
	if string(got) != want {
		status, _ := h.Systemctl("status", "--lines=40", "eksboot-config.service", "eksboot-run.service", "kubelet.service")
		dropIn, _ := os.ReadFile(filepath.Join(root, "etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"))
		for _, u := range strings.Fields(bootUnits) { // the order they really ran in
			p, _ := h.Show(u, "ExecMainStartTimestampMonotonic", "ExecMainExitTimestampMonotonic")
			t.Logf("%s: %v", u, p)
		}
		t.Errorf("KUBELET_EXTRA_ARGS seen by the kubelet:\n %q\nwant\n %q\n30-kubelet-extra-args.conf now:\n%s\n%s", got, want, dropIn, status)
	}
	for _, u := range []string{"eksboot-config.service", "eksboot-run.service", "kubelet.service"} {
		if p, err := h.Show(u, "ActiveState", "Result"); err != nil || p["ActiveState"] != "active" || p["Result"] != "success" {
			t.Errorf("%s: %v %v", u, p, err)
		}
	}
}

func writeFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
