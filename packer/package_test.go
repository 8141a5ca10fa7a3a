package packer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// release is what make package writes for this machine's architecture, built once
// for the package's tests (beside the test binary, removed with it).
type release struct {
	rpm, deb string
	// tarball is the tarball unpacked: install.sh's inputs.
	tarball string
}

var buildRelease = sync.OnceValues(func() (release, error) {
	out := filepath.Join(filepath.Dir(binary), "dist")
	if _, err := testtools.BuildRelease("../tools/release", out, runtime.GOARCH, "rpm", "deb", "tar.gz"); err != nil {
		return release{}, err
	}
	var r release
	for p, glob := range map[*string]string{&r.rpm: "eksboot-*.rpm", &r.deb: "eksboot_*.deb", &r.tarball: "eksboot-*.tar.gz"} {
		m, err := filepath.Glob(filepath.Join(out, glob))
		if err != nil || len(m) != 1 {
			return release{}, fmt.Errorf("%s in %s: %v %v", glob, out, m, err)
		}
		*p = m[0]
	}
	if b, err := exec.Command("tar", "-xzf", r.tarball, "-C", out).CombinedOutput(); err != nil {
		return release{}, fmt.Errorf("tar -xzf %s: %v\n%s", r.tarball, err, b)
	}
	r.tarball = strings.TrimSuffix(r.tarball, ".tar.gz")
	return r, nil
})

// inputs are the tarball's binaries and docs, what its install.sh installs and
// the packages hold.
func (r release) inputs() inputs {
	return inputs{filepath.Join(r.tarball, "eksboot"), filepath.Join(r.tarball, "eksboot-render"), filepath.Join(r.tarball, "docs")}
}

// builtRelease returns the release, built on first use.
func builtRelease(t *testing.T) release {
	t.Helper()
	r, err := buildRelease()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withShell gives root a shell and the tools the package scripts run, chrooted in
// it: a static busybox as /bin/busybox and its applets linked in /bin (an image has
// its own; the stand-in images and an empty root have none).
func withShell(t *testing.T, root string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, "bin/busybox")); err == nil {
		return // fake-image.sh's
	}
	bb := testtools.Require(t, "busybox")
	writeFile(t, root, "bin/busybox", readFile(t, bb), 0o755)
	if b, err := exec.Command("chroot", root, "/bin/busybox", "--install", "-s", "/bin").CombinedOutput(); err != nil {
		t.Fatalf("busybox --install in the root (a static busybox is needed: apt-get install busybox-static): %v\n%s", err, b)
	}
}

// packageDB are the paths the package managers keep their own records in (and
// rpm's scratch folder), left out when trees are compared.
var packageDB = []string{"var/lib/rpm", "var/lib/dpkg", "var/log/dpkg.log", "var/tmp"}

// withoutPackageDB returns a tree without the package managers' records and the
// folders that only hold them.
func withoutPackageDB(entries map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range entries {
		keep := true
		for _, p := range packageDB {
			if k == p || strings.HasPrefix(k, p+"/") {
				keep = false
			}
		}
		if keep {
			out[k] = v
		}
	}
	for _, d := range []string{"var/log", "var/lib", "var"} {
		empty := true
		for k := range out {
			if strings.HasPrefix(k, d+"/") {
				empty = false
			}
		}
		if empty {
			delete(out, d)
		}
	}
	return out
}

// packageManager installs, reinstalls and removes a package in a root, as rpm or
// dpkg does with --root.
type packageManager struct {
	name                       string
	install, reinstall, remove func(root, pkg string) []string
	prepare                    func(t *testing.T, root string)
}

var packageManagers = []packageManager{
	{
		name: "rpm",
		// AL2023's and AL2's rpm keep their database in /var/lib/rpm, Debian's in ~/.rpmdb.
		install: func(root, pkg string) []string {
			return []string{"rpm", "--root", root, "--dbpath", "/var/lib/rpm", "-i", pkg}
		},
		reinstall: func(root, pkg string) []string {
			return []string{"rpm", "--root", root, "--dbpath", "/var/lib/rpm", "-U", "--replacepkgs", pkg}
		},
		remove: func(root, _ string) []string {
			return []string{"rpm", "--root", root, "--dbpath", "/var/lib/rpm", "-e", "eksboot"}
		},
		prepare: func(*testing.T, string) {},
	},
	{
		name:      "dpkg",
		install:   func(root, pkg string) []string { return []string{"dpkg", "--root", root, "-i", pkg} },
		reinstall: func(root, pkg string) []string { return []string{"dpkg", "--root", root, "-i", pkg} },
		remove:    func(root, _ string) []string { return []string{"dpkg", "--root", root, "--purge", "eksboot"} },
		// dpkg's database of a root with no package installed: an empty status file
		// and the folders it keeps the packages' files lists and updates in.
		prepare: func(t *testing.T, root string) {
			writeFile(t, root, "var/lib/dpkg/status", "", 0o644)
			for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		},
	},
}

// run runs a package manager's command and fails the test unless it succeeded with
// every package script: rpm says a failed script only in a warning.
func (pm packageManager) run(t *testing.T, argv []string) string {
	t.Helper()
	code, out := command(t, ".", []string{"KUBELET_VERSION=v1.35.0-eks-4a1b2c3"}, argv[0], argv[1:]...)
	if code != 0 || strings.Contains(out, "scriptlet failed") || strings.Contains(out, "error:") {
		t.Fatalf("%s: exit %d:\n%s", strings.Join(argv, " "), code, out)
	}
	return out
}

// TestPackagesInstallAsInstallSh installs the RPM (rpm --root) and the DEB (dpkg
// --root) on an empty root (a shell only), and on the AL2023 and AL2 stand-in
// images, and the tarball's install.sh on a copy of each: the trees must be the same
// files, modes and unit links, the packages' records aside. Reinstalling the same
// version changes nothing. Removing the package gives the image back: its own
// bootstrap.sh and kubelet.service, nodeadm's links on AL2023, nothing of eksboot
// but kubelet-version.txt (the image's kubelet's version, which AL2023 ships too).
func TestPackagesInstallAsInstallSh(t *testing.T) {
	needRoot(t, "rpm --root and dpkg --root run the package scripts chrooted in the root")
	needTools(t, "rpm", "dpkg", "busybox", "chroot")
	t.Parallel()
	rel := builtRelease(t)
	images := []struct {
		name   string
		layout func(t *testing.T) string
	}{
		{"empty", func(t *testing.T) string { return t.TempDir() }},
		{"al2023", func(t *testing.T) string { return fakeImage(t, "al2023", "v1.35.0-eks-4a1b2c3") }},
		{"al2", func(t *testing.T) string { return fakeImage(t, "al2", "v1.32.9-eks-113cf36") }},
	}
	for _, image := range images {
		for _, pm := range packageManagers {
			t.Run(image.name+"/"+pm.name, func(t *testing.T) {
				t.Parallel()
				base := image.layout(t)
				withShell(t, base)
				pm.prepare(t, base)
				viaScript := filepath.Join(t.TempDir(), "root")
				viaPackage := filepath.Join(t.TempDir(), "root")
				copyTree(t, base, viaScript)
				copyTree(t, base, viaPackage)

				env := []string{
					"DESTDIR=" + viaScript, "EKSBOOT_BINARY=" + filepath.Join(rel.tarball, "eksboot"),
					"UNITS_DIR=" + filepath.Join(rel.tarball, "units"), "DOCS_DIR=" + filepath.Join(rel.tarball, "docs"),
					"KUBELET_VERSION=v1.35.0-eks-4a1b2c3",
				}
				if code, out := command(t, ".", env, "sh", filepath.Join(rel.tarball, "install.sh")); code != 0 {
					t.Fatalf("the tarball's install.sh: exit %d:\n%s", code, out)
				}
				pkg := map[string]string{"rpm": rel.rpm, "dpkg": rel.deb}[pm.name]
				out := pm.run(t, pm.install(viaPackage, pkg))
				for _, want := range []string{
					"eksboot postinstall: /etc/systemd/system/multi-user.target.wants/eksboot-run.service: linked to /etc/systemd/system/eksboot-run.service",
					"eksboot postinstall: kubelet version: Kubernetes v1.3",
				} {
					if !strings.Contains(out, want) {
						t.Errorf("%s lacks %q:\n%s", pm.name, want, out)
					}
				}
				installed := withoutPackageDB(tree(t, viaPackage))
				testtools.CompareTrees(t, installed, withoutPackageDB(tree(t, viaScript)))
				if t.Failed() {
					t.FailNow()
				}

				pm.run(t, pm.reinstall(viaPackage, pkg))
				testtools.CompareTrees(t, withoutPackageDB(tree(t, viaPackage)), installed)

				out = pm.run(t, pm.remove(viaPackage, pkg))
				want := withoutDirs(withoutPackageDB(tree(t, base)))
				want["etc/eks/kubelet-version.txt"] = installed["etc/eks/kubelet-version.txt"]
				testtools.CompareTrees(t, withoutDirs(withoutPackageDB(tree(t, viaPackage))), want)
				if image.name != "empty" && !strings.Contains(out, "eksboot postremove: /etc/eks/bootstrap.sh: restored the original from /etc/eks/bootstrap.sh.orig") {
					t.Errorf("%s: removal does not say it restored bootstrap.sh:\n%s", pm.name, out)
				}
			})
		}
	}
}

// TestPackagesCarryTheVersion: the RPM's and the DEB's version is the one eksboot
// version prints in them (the packages and the tarball hold the same binary: the
// trees of TestPackagesInstallAsInstallSh), without the v, from git's tags.
func TestPackagesCarryTheVersion(t *testing.T) {
	needTools(t, "rpm", "dpkg-deb")
	t.Parallel()
	rel := builtRelease(t)
	out, err := exec.Command(filepath.Join(rel.tarball, "eksboot"), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	tag, ok := strings.CutPrefix(first, "eksboot v")
	if !ok {
		t.Fatalf("eksboot version: %q, want eksboot v...", out)
	}
	want := strings.Replace(tag, "-", "~", 1)
	if code, got := command(t, ".", nil, "rpm", "-qp", "--queryformat", "%{NAME} %{VERSION}-%{RELEASE}", rel.rpm); code != 0 || got != "eksboot "+want+"-1" {
		t.Errorf("rpm -qp: exit %d, %q, want %q", code, got, "eksboot "+want+"-1")
	}
	if code, got := command(t, ".", nil, "dpkg-deb", "--show", "--showformat", "${Package} ${Version}", rel.deb); code != 0 || got != "eksboot "+want+"-1" {
		t.Errorf("dpkg-deb --show: exit %d, %q, want %q", code, got, "eksboot "+want+"-1")
	}
	if !strings.HasPrefix(filepath.Base(rel.tarball), "eksboot-"+want+"-linux-") {
		t.Errorf("tarball %s: want it named for %s", rel.tarball, want)
	}
}
