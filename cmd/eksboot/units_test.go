package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/internal/testtools"
	"github.com/eksboot/eksboot/systemd/systemdtest"
)

// cloudInitUnits are stand-ins for cloud-init's units with the [Unit] ordering
// lines of the real ones (Debian 12's cloud-init 22.4.2, the box of make e2e; upstream
// ships the same lines for Debian and Ubuntu) and ExecStart left for the caller. The
// lines that matter to eksboot: cloud-init.service runs in early boot
// (DefaultDependencies=no, Before=sysinit.target, Before=network-online.target) and
// cloud-final.service after multi-user.target.
var cloudInitUnits = map[string]string{
	"cloud-init-local.service": "[Unit]\nDefaultDependencies=no\nWants=network-pre.target\n" +
		"After=hv_kvp_daemon.service\nAfter=systemd-remount-fs.service\nBefore=NetworkManager.service\n" +
		"Before=network-pre.target\nBefore=shutdown.target\nBefore=sysinit.target\nConflicts=shutdown.target\n" +
		"RequiresMountsFor=/var/lib/cloud\n",
	"cloud-init.service": "[Unit]\nDefaultDependencies=no\nWants=cloud-init-local.service\n" +
		"Wants=sshd-keygen.service\nWants=sshd.service\nAfter=cloud-init-local.service\n" +
		"After=systemd-networkd-wait-online.service\nAfter=networking.service\nBefore=network-online.target\n" +
		"Before=chronyd.service\nBefore=sshd-keygen.service\nBefore=sshd.service\nBefore=sysinit.target\n" +
		"Before=shutdown.target\nConflicts=shutdown.target\nBefore=systemd-user-sessions.service\n",
	"cloud-config.service": "[Unit]\nAfter=network-online.target cloud-config.target\nAfter=snapd.seeded.service\n" +
		"Wants=network-online.target cloud-config.target\n",
	"cloud-final.service": "[Unit]\nAfter=network-online.target cloud-config.service rc-local.service\n" +
		"After=multi-user.target\nBefore=apt-daily.service\nWants=network-online.target cloud-config.service\n",
	"cloud-config.target": "[Unit]\nWants=cloud-init-local.service cloud-init.service\n" +
		"After=cloud-init-local.service cloud-init.service\n",
	"cloud-init.target": "[Unit]\nAfter=multi-user.target\n",
}

// cloudInitUnit is cloudInitUnits[name] with a [Service] running execStart.
func cloudInitUnit(name, execStart string) string {
	text := cloudInitUnits[name]
	if strings.HasSuffix(name, ".service") {
		text += "\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=" + execStart + "\n"
	}
	return text
}

// TestBootUnitsHaveNoOrderingCycleWithCloudInit asks systemd-analyze verify, in
// system mode, for the boot transaction of multi-user.target on a node with eksboot's
// units enabled as packer/install.sh enables them and cloud-init's units (their real
// ordering) enabled as cloud-init's generator enables them. Any ordering cycle fails
// the test: at boot systemd breaks one by dropping a start job, and the node comes up
// without cloud-init's user data or without eksboot's config phase.
func TestBootUnitsHaveNoOrderingCycleWithCloudInit(t *testing.T) {
	testtools.Require(t, "systemd-analyze")
	dir := t.TempDir()
	files := map[string]string{
		"eksboot-config.service": strings.ReplaceAll(string(assets.EksbootConfigService), "/usr/bin/eksboot ", "/bin/true "),
		"eksboot-run.service":    strings.ReplaceAll(string(assets.EksbootRunService), "/usr/bin/eksboot ", "/bin/true "),
	}
	for name := range cloudInitUnits {
		files[name] = cloudInitUnit(name, "/bin/true")
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string][]string{
		"multi-user.target.wants": {"eksboot-config.service", "eksboot-run.service", "cloud-init.target"},
		"cloud-init.target.wants": {"cloud-init-local.service", "cloud-init.service", "cloud-config.service", "cloud-final.service"},
	}
	for wants, names := range links {
		for _, name := range names {
			if err := os.MkdirAll(filepath.Join(dir, wants), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(dir, name), filepath.Join(dir, wants, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command("systemd-analyze", "verify", "multi-user.target")
	// The trailing ":" keeps the built-in unit paths (sysinit.target, ...) after ours.
	cmd.Env = append(os.Environ(), "SYSTEMD_UNIT_PATH="+dir+":")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "cycle") {
		t.Errorf("systemd-analyze verify multi-user.target with eksboot's and cloud-init's units: %v\n%s", err, out)
	}
}

// TestBootUnitsWithRealSystemd boots a NodeConfig node through the shipped
// eksboot-config.service and eksboot-run.service on a real systemd manager, with
// stand-ins for cloud-init.service (the real ordering lines and a user-data script that
// checks the files are there and the kubelet is not, then drops a NodeConfig into
// /etc/eks/eksboot.d) and cloud-final.service. The kubelet must start once, after
// cloud-init, with the drop-in's flag appended to the user data's.
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
	writeFile(t, filepath.Join(units, "cloud-init.service"), cloudInitUnit("cloud-init.service", "/bin/sh "+root+"/cloud-init.sh"))
	// The real cloud-final.service is ordered after cloud-init.service through
	// cloud-config.service and cloud-config.target; the user manager has no
	// multi-user.target or network-online.target, so the stand-in says it directly.
	writeFile(t, filepath.Join(units, "cloud-final.service"), cloudInitUnit("cloud-final.service", "/bin/true")+"[Unit]\nAfter=cloud-init.service\n")
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
