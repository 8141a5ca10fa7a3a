package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/internal/testtools"
	"github.com/eksboot/eksboot/systemd/systemdtest"
	"github.com/eksboot/eksboot/userdata"
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

// bootUnits boots a node through the shipped eksboot-config.service and
// eksboot-run.service on a real systemd manager, the fake IMDS serving userData,
// with stand-ins for cloud-init.service and cloud-final.service (the real ordering
// lines) that run the shell scripts cloudInit and cloudFinal. The fake kubelet
// appends a line to out/starts at each start. It returns the harness and the root.
func bootUnits(t *testing.T, userData string, cloudInit, cloudFinal func(root, out string) string) (*systemdtest.Harness, string) {
	t.Helper()
	root := t.TempDir()
	out := filepath.Join(root, "out")
	units := fakeUnits(t, root, "/bin/sh -c 'echo start >> "+out+"/starts'")
	h := systemdtest.Start(t, units)

	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	if err != nil {
		t.Fatal(err)
	}
	c.IMDS.UserData = userData
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
	writeFile(t, filepath.Join(root, "cloud-init.sh"), "#!/bin/sh\nset -e\n"+cloudInit(root, out))
	writeFile(t, filepath.Join(root, "cloud-final.sh"), "#!/bin/sh\nset -e\n"+cloudFinal(root, out))
	writeFile(t, filepath.Join(units, "cloud-init.service"), cloudInitUnit("cloud-init.service", "/bin/sh "+root+"/cloud-init.sh"))
	// The real cloud-final.service is ordered after cloud-init.service through
	// cloud-config.service and cloud-config.target; the user manager has no
	// multi-user.target or network-online.target, so the stand-in says it directly.
	writeFile(t, filepath.Join(units, "cloud-final.service"), cloudInitUnit("cloud-final.service", "/bin/sh "+root+"/cloud-final.sh")+"[Unit]\nAfter=cloud-init.service\n")
	// One transaction, as at boot, where default.target pulls them all in: systemd
	// orders the four units. (`systemctl start a b c d` would make four transactions,
	// and a unit's After= on a unit with no job yet orders nothing: cloud-final ran
	// before cloud-init, and the run phase with it, about one time in six.)
	writeFile(t, filepath.Join(units, "test-boot.target"), "[Unit]\nWants="+bootUnitList+"\nAfter="+bootUnitList+"\n")
	if _, err := h.Systemctl("daemon-reload"); err != nil {
		t.Fatal(err)
	}
	if outp, err := h.Systemctl("start", "test-boot.target"); err != nil {
		logs, _ := h.Systemctl("status", "eksboot-config.service", "eksboot-run.service")
		t.Fatalf("%v\n%s\n%s", err, outp, logs)
	}
	return h, root
}

// bootUnitList' units, in one transaction.
const bootUnitList = "eksboot-config.service eksboot-run.service cloud-init.service cloud-final.service"

// checkBoot: the kubelet was started once, with want as its KUBELET_EXTRA_ARGS, and
// every unit ran to success. It returns the kubelet's start and cloud-final's end
// (systemd's monotonic clock, µs).
func checkBoot(t *testing.T, h *systemdtest.Harness, root, want string) (kubeletStart, cloudFinalEnd int64) {
	t.Helper()
	got := waitFile(t, filepath.Join(root, "out/extra-args"), "")
	if string(got) != want {
		status, _ := h.Systemctl("status", "--lines=40", "eksboot-config.service", "eksboot-run.service", "kubelet.service")
		dropIn, _ := os.ReadFile(filepath.Join(root, "etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"))
		t.Errorf("KUBELET_EXTRA_ARGS seen by the kubelet:\n %q\nwant\n %q\n30-kubelet-extra-args.conf now:\n%s\n%s", got, want, dropIn, status)
	}
	for _, u := range []string{"eksboot-config.service", "eksboot-run.service", "kubelet.service", "cloud-init.service", "cloud-final.service"} {
		if p, err := h.Show(u, "ActiveState", "Result"); err != nil || p["ActiveState"] != "active" || p["Result"] != "success" {
			t.Errorf("%s: %v %v", u, p, err)
		}
	}
	if starts, _ := os.ReadFile(filepath.Join(root, "out/starts")); string(starts) != "start\n" {
		t.Errorf("the kubelet was started %d times, want once", strings.Count(string(starts), "start"))
	}
	mono := func(unit, prop string) int64 {
		p, err := h.Show(unit, prop)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(p[prop], 10, 64)
		if err != nil || v == 0 {
			t.Fatalf("%s %s=%q: %v", unit, prop, p[prop], err)
		}
		return v
	}
	return mono("kubelet.service", "ExecMainStartTimestampMonotonic"), mono("cloud-final.service", "ExecMainExitTimestampMonotonic")
}

// scriptUserData is sample 10's NodeConfig and a shell script part, in MIME.
func scriptUserData(t *testing.T, script string) string {
	t.Helper()
	nc, err := os.ReadFile("../../testdata/userdata/10-nodeadm-plain-nodeconfig.userdata")
	if err != nil {
		t.Fatal(err)
	}
	return "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: application/node.eks.aws\n\n" +
		string(nc) + "\n--B\nContent-Type: text/x-shellscript\n\n" + script + "\n--B--\n"
}

// TestBootUnitsScriptPartRunsBeforeTheKubelet boots user data with a NodeConfig and a
// script part through the shipped units on a real systemd manager: the stand-in of
// cloud-init.service checks that the config phase wrote the files; that of
// cloud-final.service runs the user data's script part, which checks that the
// kubelet has not started and drops a NodeConfig into /etc/eks/eksboot.d. The
// kubelet must start once, after cloud-final, with the drop-in's flag appended to
// the user data's. It fails if a script part let the kubelet start before it ran.
func TestBootUnitsScriptPartRunsBeforeTheKubelet(t *testing.T) {
	const script = "#!/bin/sh\n# cloud-final runs this part: the kubelet must not have started.\nset -e\n" +
		"test ! -e \"$OUT/starts\" && echo yes > \"$OUT/kubelet-not-started-yet\"\n" +
		"mkdir -p \"$ROOT/etc/eks/eksboot.d\"\n" +
		"printf 'apiVersion: node.eks.aws/v1alpha1\\nkind: NodeConfig\\nspec:\\n  kubelet:\\n    flags: [--node-labels=phase=between]\\n' > \"$ROOT/etc/eks/eksboot.d/50-between.yaml\"\n"
	ud := scriptUserData(t, script)
	parts, err := userdata.Parse([]byte(ud))
	if err != nil || len(parts) != 2 || parts[1].ContentType != userdata.TypeShellScript {
		t.Fatalf("user data: %v %v", parts, err)
	}
	h, root := bootUnits(t, ud,
		func(root, out string) string {
			return "test -s " + root + "/etc/kubernetes/kubelet/kubelet-config.json && echo yes > " + out + "/config-written-before-cloud-init\n"
		},
		func(root, out string) string {
			// The part as cloud-final runs it (its scripts_user module).
			writeFile(t, filepath.Join(root, "part-002"), string(parts[1].Body))
			return "OUT=" + out + " ROOT=" + root + " /bin/sh " + root + "/part-002\n"
		})
	for _, marker := range []string{"config-written-before-cloud-init", "kubelet-not-started-yet"} {
		if _, err := os.Stat(filepath.Join(root, "out", marker)); err != nil {
			t.Errorf("%s: %v", marker, err)
		}
	}
	start, finalEnd := checkBoot(t, h, root,
		"--node-labels=workload=general,env=prod --register-with-taints=env=prod:PreferNoSchedule --node-labels=phase=between")
	if start < finalEnd {
		t.Errorf("the kubelet started %.3fs before cloud-final ended, which ran the user data's script: want after", float64(finalEnd-start)/1e6)
	}
}

// TestBootUnitsNodeConfigOnlyStartsTheKubeletEarly boots user data of NodeConfig
// parts only through the shipped units: the config phase queues the kubelet's start,
// so it runs while cloud-final still runs (the stand-in waits up to 20 s for it);
// the run phase, after cloud-final, starts nothing again.
func TestBootUnitsNodeConfigOnlyStartsTheKubeletEarly(t *testing.T) {
	nc, err := os.ReadFile("../../testdata/userdata/10-nodeadm-plain-nodeconfig.userdata")
	if err != nil {
		t.Fatal(err)
	}
	h, root := bootUnits(t, string(nc),
		func(string, string) string { return "" },
		func(_, out string) string {
			return "i=0; until test -e " + out + "/extra-args || [ $i -ge 200 ]; do sleep 0.1; i=$((i+1)); done\n" +
				"test -e " + out + "/extra-args && echo yes > " + out + "/kubelet-ran-before-cloud-final\n" +
				"exit 0\n"
		})
	if _, err := os.Stat(filepath.Join(root, "out/kubelet-ran-before-cloud-final")); err != nil {
		t.Errorf("the kubelet did not run while cloud-final ran: %v", err)
	}
	start, finalEnd := checkBoot(t, h, root, "--node-labels=workload=general,env=prod --register-with-taints=env=prod:PreferNoSchedule")
	if start >= finalEnd {
		t.Errorf("the kubelet started %.3fs after cloud-final ended: want before", float64(start-finalEnd)/1e6)
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
