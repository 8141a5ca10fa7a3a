package packer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// original is the bootstrap.sh of the image before eksboot (a stand-in).
const original = "#!/usr/bin/env bash\n# the EKS AMI's bootstrap.sh\nexit 0\n"

// installEnv is install.sh's environment for root.
func installEnv(root string) []string {
	return []string{"DESTDIR=" + root, "EKSBOOT_BINARY=" + binary, "UNITS_DIR=../assets"}
}

// writeFile creates root/rel with content and mode, and its folders.
func writeFile(t *testing.T, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// TestInstallTwice runs install.sh on an image-like root (the original bootstrap.sh,
// a kubelet) twice: the second run changes nothing and says so, the original is kept
// as bootstrap.sh.orig, and the kubelet version comes from the image's kubelet.
func TestInstallTwice(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, root, "etc/eks/bootstrap.sh", original, 0o755)
	writeFile(t, root, "usr/bin/kubelet", "#!/bin/sh\necho Kubernetes v1.31.4-eks-0123456\n", 0o755)
	// Node state left on the build instance must not reach the image.
	writeFile(t, root, "var/lib/eksboot/clusters/us-west-2/demo.json", "{}", 0o600)
	// KUBELET_VERSION is only a fallback: the root's kubelet wins.
	env := append(installEnv(root), "KUBELET_VERSION=v9.9.9")

	code, out := command(t, ".", env, "sh", "install.sh")
	if code != 0 {
		t.Fatalf("first run: exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"install.sh: image: generic (no os-release)",
		"install.sh: /etc/eks/bootstrap.sh: kept the original as /etc/eks/bootstrap.sh.orig",
		"install.sh: /etc/eks/bootstrap.sh: installed (mode 0755)",
		"install.sh: kubelet version: Kubernetes v1.31.4-eks-0123456 (from " + root + "/usr/bin/kubelet --version)",
		"install.sh: kubelet.service: not enabled in the image (eksboot enables it at boot)",
		"install.sh: /etc/systemd/system/multi-user.target.wants/eksboot-config.service: linked to /etc/systemd/system/eksboot-config.service",
		"install.sh: /etc/systemd/system/multi-user.target.wants/eksboot-run.service: linked to /etc/systemd/system/eksboot-run.service",
		"install.sh: /etc/eks/eksboot.d: created",
		"install.sh: /var/lib/eksboot: removed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first run output lacks %q:\n%s", want, out)
		}
	}
	first := tree(t, root)
	if _, ok := first["var/lib/eksboot/clusters/us-west-2/demo.json"]; ok {
		t.Error("install.sh left /var/lib/eksboot in the image")
	}
	for path, want := range map[string]string{
		"etc/eks/bootstrap.sh.orig":   "file 0755 " + original,
		"etc/eks/bootstrap.sh":        "file 0755 " + readFile(t, shim),
		"etc/eks/kubelet-version.txt": "file 0644 Kubernetes v1.31.4-eks-0123456\n",
	} {
		if first[path] != want {
			t.Errorf("%s: %.80q, want %.80q", path, first[path], want)
		}
	}

	code, out = command(t, ".", env, "sh", "install.sh")
	if code != 0 {
		t.Fatalf("second run: exit %d:\n%s", code, out)
	}
	for _, verb := range []string{"installed", "updated", "linked to", "kept the original", "replacing", "disabled", "removed"} {
		if strings.Contains(out, verb) {
			t.Errorf("second run says %q, want every step unchanged:\n%s", verb, out)
		}
	}
	testtools.CompareTrees(t, tree(t, root), first)

	// A package update that puts a new bootstrap.sh back: it is replaced again, but
	// the first original stays in bootstrap.sh.orig.
	if err := os.Remove(filepath.Join(root, "etc/eks/bootstrap.sh")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "etc/eks/bootstrap.sh", "#!/bin/sh\n# updated\n", 0o755)
	code, out = command(t, ".", env, "sh", "install.sh")
	if code != 0 || !strings.Contains(out, "the first original stays in /etc/eks/bootstrap.sh.orig") {
		t.Fatalf("third run: exit %d:\n%s", code, out)
	}
	testtools.CompareTrees(t, tree(t, root), first)
}

// TestInstallRefuses checks that install.sh stops before writing anything, with a
// line saying why, when it lacks an input.
func TestInstallRefuses(t *testing.T) {
	t.Parallel()
	// An eksboot with no eksboot-render beside it.
	alone := filepath.Join(t.TempDir(), "eksboot")
	if err := os.Symlink(binary, alone); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  func(root string) []string
		want string
	}{
		{"no DESTDIR", func(string) []string {
			// The binary does not exist either, so a broken guard could not write to /.
			return []string{"EKSBOOT_BINARY=/nonexistent/eksboot", "UNITS_DIR=../assets"}
		}, "DESTDIR is not set"},
		{"no binary", func(root string) []string {
			return []string{"DESTDIR=" + root, "EKSBOOT_BINARY=" + root + "/nope", "UNITS_DIR=../assets", "KUBELET_VERSION=1.32.9"}
		}, "EKSBOOT_BINARY " + "%ROOT%/nope: no such file"},
		{"no eksboot-render", func(root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=1.32.9", "EKSBOOT_RENDER_BINARY="+root+"/nope")
		}, "EKSBOOT_RENDER_BINARY %ROOT%/nope: no such file (make build builds bin/eksboot-render beside bin/eksboot)"},
		{"no eksboot-render beside the binary", func(root string) []string {
			return []string{"DESTDIR=" + root, "EKSBOOT_BINARY=" + alone, "UNITS_DIR=../assets", "KUBELET_VERSION=1.32.9"}
		}, "EKSBOOT_RENDER_BINARY " + filepath.Dir(alone) + "/eksboot-render: no such file"},
		{"no kubelet version", installEnv, "no kubelet in the root and KUBELET_VERSION is not set"},
		{"bad kubelet version", func(root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=latest")
		}, `kubelet version "Kubernetes vlatest" (from KUBELET_VERSION) has no x.y.z version`},
		{"missing unit", func(root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=1.32.9", "UNITS=nope.service")
		}, "unit ../assets/nope.service: no such file"},
		{"unsupported [Install] key", func(root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=1.32.9", "UNITS_DIR="+unitsWithAlias(t), "UNITS=alias.service", "BOOTSTRAP_SH="+shim)
		}, "alias.service: [Install] Alias= is not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			code, out := command(t, ".", tc.env(root), "sh", "install.sh")
			want := strings.ReplaceAll(tc.want, "%ROOT%", root)
			if code == 0 || !strings.Contains(out, "install.sh: error: "+want) {
				t.Errorf("exit %d, want a failure saying %q:\n%s", code, want, out)
			}
			if entries := tree(t, root); len(entries) != 0 {
				t.Errorf("wrote %d entries: %v", len(entries), entries)
			}
		})
	}
}

// unitsWithAlias returns a units folder whose alias.service has an Alias= that
// install.sh does not handle.
func unitsWithAlias(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, "alias.service", "[Service]\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\nAlias=other.service\n", 0o644)
	return dir
}

// TestShellcheck runs shellcheck on install.sh (with image-lib.sh, which it
// sources), image-lib.sh and fake-image.sh (POSIX sh).
func TestShellcheck(t *testing.T) {
	needTools(t, "shellcheck")
	t.Parallel()
	for _, f := range []string{"install.sh", "image-lib.sh", "fake-image.sh"} {
		if code, out := command(t, ".", nil, "shellcheck", "-x", f); code != 0 {
			t.Errorf("shellcheck %s: exit %d:\n%s", f, code, out)
		}
	}
}

// readFile returns the content of path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// installed is the tree install.sh (with its default units) must leave on a root that
// was image before it: the binary, the shim as bootstrap.sh with the image's script
// kept as bootstrap.sh.orig, kubelet-version.txt, the units (the image's
// kubelet.service kept as kubelet.service.orig) and the boot units' links,
// eksboot.d; and on AL2023 nodeadm's enablement links gone (its units kept).
func installed(t *testing.T, image map[string]string, kubeletVersion string, al2023 bool, in inputs) map[string]string {
	t.Helper()
	want := map[string]string{}
	for k, v := range image {
		want[k] = v
	}
	dir := func(p string) {
		if _, ok := want[p]; !ok {
			want[p] = "dir 0755"
		}
	}
	for _, d := range []string{"usr", "usr/bin", "etc", "etc/eks", "etc/eks/eksboot.d", "etc/systemd", "etc/systemd/system", "etc/systemd/system/multi-user.target.wants"} {
		dir(d)
	}
	if orig, ok := image["etc/eks/bootstrap.sh"]; ok && !strings.HasPrefix(orig, "link -> ") {
		want["etc/eks/bootstrap.sh.orig"] = orig
	}
	// The image's own kubelet.service (AL2023's runs nodeadm's flags) too.
	if orig, ok := image["etc/systemd/system/kubelet.service"]; ok {
		want["etc/systemd/system/kubelet.service.orig"] = orig
	}
	want["etc/eks/bootstrap.sh"] = "file 0755 " + readFile(t, shim)
	want["usr/bin/eksboot"] = "file 0755 " + readFile(t, in.eksboot)
	want["usr/bin/eksboot-render"] = "file 0755 " + readFile(t, in.render)
	want["etc/eks/kubelet-version.txt"] = "file 0644 Kubernetes " + kubeletVersion + "\n"
	for _, unit := range []string{"kubelet.service", "eksboot-config.service", "eksboot-run.service"} {
		want["etc/systemd/system/"+unit] = "file 0644 " + readFile(t, "../assets/"+unit)
	}
	for _, unit := range []string{"eksboot-config.service", "eksboot-run.service"} {
		want["etc/systemd/system/multi-user.target.wants/"+unit] = "link -> /etc/systemd/system/" + unit
	}
	if al2023 {
		for _, unit := range []string{"nodeadm-config.service", "nodeadm-run.service"} {
			if _, ok := image["etc/systemd/system/"+unit]; !ok {
				t.Fatalf("the AL2023 image has no %s", unit)
			}
			delete(want, "etc/systemd/system/multi-user.target.wants/"+unit)
		}
	}
	if in.docs != "" {
		for src, dst := range map[string]string{
			"eksboot.8":               "usr/share/man/man8/eksboot.8",
			"completion/eksboot.bash": "usr/share/bash-completion/completions/eksboot",
			"completion/_eksboot":     "usr/share/zsh/site-functions/_eksboot",
			"completion/eksboot.fish": "usr/share/fish/vendor_completions.d/eksboot.fish",
		} {
			want[dst] = "file 0644 " + readFile(t, filepath.Join(in.docs, src))
			for d := filepath.Dir(dst); d != "."; d = filepath.Dir(d) {
				dir(d)
			}
		}
	}
	return want
}

// inputs are what install.sh installs: the binaries and, unless "", the docs
// folder (DOCS_DIR).
type inputs struct{ eksboot, render, docs string }

// testBinaries are the package's test build of eksboot and eksboot-render, no docs.
func testBinaries() inputs { return inputs{binary, renderBinary(), ""} }

// fakeImage lays out the stand-in image of family in a new root (fake-image.sh) and
// returns it.
func fakeImage(t *testing.T, family, kubeletVersion string) string {
	t.Helper()
	root := t.TempDir()
	env := []string{"DESTDIR=" + root, "IMAGE_FAMILY=" + family, "KUBELET_VERSION=" + kubeletVersion}
	if code, out := command(t, ".", env, "sh", "fake-image.sh"); code != 0 {
		t.Fatalf("fake-image.sh: exit %d:\n%s", code, out)
	}
	return root
}

// TestInstallOnAL2023MakesEksbootTheOnlyBootstrapper runs install.sh twice on the
// stand-in AL2023 image: its stub bootstrap.sh is kept as .orig and replaced by the
// shim, nodeadm-config/nodeadm-run are disabled (links removed, units kept) while
// eksboot's boot units are enabled, the second run changes nothing, and systemctl
// agrees that nodeadm is disabled and eksboot enabled.
func TestInstallOnAL2023MakesEksbootTheOnlyBootstrapper(t *testing.T) {
	t.Parallel()
	const version = "v1.35.0-eks-4a1b2c3"
	root := fakeImage(t, "al2023", version)
	image := tree(t, root)
	env := append(installEnv(root), "KUBELET_VERSION=v9.9.9")

	code, out := command(t, ".", env, "sh", "install.sh")
	if code != 0 {
		t.Fatalf("first run: exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"install.sh: image: al2023 (ID=amzn VERSION_ID=2023 in /etc/os-release)",
		"install.sh: /etc/eks/bootstrap.sh: kept the original as /etc/eks/bootstrap.sh.orig",
		"install.sh: /etc/eks/bootstrap.sh: installed (mode 0755)",
		"install.sh: /etc/eks/kubelet-version.txt: unchanged",
		"install.sh: /etc/systemd/system/kubelet.service: kept the original as /etc/systemd/system/kubelet.service.orig",
		"install.sh: /etc/systemd/system/kubelet.service: installed (mode 0644)",
		"install.sh: /etc/systemd/system/multi-user.target.wants/eksboot-run.service: linked to /etc/systemd/system/eksboot-run.service",
		"install.sh: nodeadm-config.service: disabled (removed /etc/systemd/system/multi-user.target.wants/nodeadm-config.service;",
		"install.sh: nodeadm-run.service: disabled (removed /etc/systemd/system/multi-user.target.wants/nodeadm-run.service;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first run output lacks %q:\n%s", want, out)
		}
	}
	first := tree(t, root)
	testtools.CompareTrees(t, first, installed(t, image, version, true, testBinaries()))

	code, out = command(t, ".", env, "sh", "install.sh")
	if code != 0 {
		t.Fatalf("second run: exit %d:\n%s", code, out)
	}
	for _, verb := range []string{"installed", "updated", "linked to", "kept the original", "replacing", "disabled", "removed"} {
		if strings.Contains(out, verb) {
			t.Errorf("second run says %q, want every step unchanged:\n%s", verb, out)
		}
	}
	if !strings.Contains(out, "install.sh: nodeadm-run.service: not enabled (unchanged)") {
		t.Errorf("second run does not say nodeadm-run.service is not enabled:\n%s", out)
	}
	testtools.CompareTrees(t, tree(t, root), first)

	t.Run("systemctl agrees", func(t *testing.T) {
		needTools(t, "systemctl")
		// --root works on the folder alone: no D-Bus, no running systemd.
		for unit, want := range map[string]string{
			"nodeadm-config.service": "disabled", "nodeadm-run.service": "disabled",
			"eksboot-config.service": "enabled", "eksboot-run.service": "enabled", "kubelet.service": "disabled",
		} {
			_, out := command(t, ".", nil, "systemctl", "--root="+root, "is-enabled", unit)
			if got := strings.TrimSpace(out); got != want {
				t.Errorf("systemctl is-enabled %s: %q, want %q", unit, got, want)
			}
		}
		if code, out := command(t, ".", nil, "systemctl", "--root="+root, "disable", "nodeadm-config.service", "nodeadm-run.service"); code != 0 {
			t.Fatalf("systemctl --root disable: exit %d:\n%s", code, out)
		}
		testtools.CompareTrees(t, tree(t, root), first)
	})
}

// TestInstallReplacesEksbootsSymlink installs on images made by the install.sh of
// before the shim, whose bootstrap.sh is a symlink to eksboot: the link is replaced by
// the shim and is not kept as .orig; an existing .orig (the EKS script) stays.
func TestInstallReplacesEksbootsSymlink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, link string
		orig       bool
	}{
		{"relative link, original kept", "../../usr/bin/eksboot", true},
		{"absolute link, no original", "/usr/bin/eksboot", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "usr/bin/eksboot", "old eksboot", 0o755)
			if tc.orig {
				writeFile(t, root, "etc/eks/bootstrap.sh.orig", original, 0o755)
			}
			if err := os.MkdirAll(filepath.Join(root, "etc/eks"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.link, filepath.Join(root, "etc/eks/bootstrap.sh")); err != nil {
				t.Fatal(err)
			}
			env := append(installEnv(root), "KUBELET_VERSION=1.32.9")
			code, out := command(t, ".", env, "sh", "install.sh")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			for _, want := range []string{
				"install.sh: /etc/eks/bootstrap.sh: replacing eksboot's symlink (" + tc.link + ") with the shim",
				"install.sh: /etc/eks/bootstrap.sh: updated (mode 0755)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			got := tree(t, root)
			if want := "file 0755 " + readFile(t, shim); got["etc/eks/bootstrap.sh"] != want {
				t.Errorf("bootstrap.sh: %.80q, want the shim", got["etc/eks/bootstrap.sh"])
			}
			orig, ok := got["etc/eks/bootstrap.sh.orig"]
			if tc.orig && orig != "file 0755 "+original {
				t.Errorf("bootstrap.sh.orig: %.80q, want the original", orig)
			}
			if !tc.orig && ok {
				t.Errorf("bootstrap.sh.orig: %.80q, want none (a link to eksboot is not an original)", orig)
			}
		})
	}
}

// TestInstallDetectsTheImage checks the image install.sh works out from a root: AL2023
// from os-release (a file or a link, relative or absolute) or from nodeadm's units,
// AL2, and anything else (a Debian root, no os-release) as generic, where nodeadm is
// left alone.
func TestInstallDetectsTheImage(t *testing.T) {
	t.Parallel()
	const al2023 = "NAME=\"Amazon Linux\"\nID=\"amzn\"\nVERSION_ID=\"2023\"\n"
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		want  string
	}{
		{"AL2023 os-release", func(t *testing.T, root string) {
			writeFile(t, root, "etc/os-release", al2023, 0o644)
		}, "al2023 (ID=amzn VERSION_ID=2023 in /etc/os-release)"},
		{"AL2023 os-release, unquoted", func(t *testing.T, root string) {
			writeFile(t, root, "etc/os-release", "ID=amzn\nVERSION_ID=2023\n", 0o644)
		}, "al2023 (ID=amzn VERSION_ID=2023 in /etc/os-release)"},
		{"AL2023 os-release as a relative link", func(t *testing.T, root string) {
			writeFile(t, root, "usr/lib/os-release", al2023, 0o644)
			symlink(t, "../usr/lib/os-release", filepath.Join(root, "etc/os-release"))
		}, "al2023 (ID=amzn VERSION_ID=2023 in /etc/os-release)"},
		{"AL2023 os-release as an absolute link, read under the root", func(t *testing.T, root string) {
			writeFile(t, root, "usr/lib/os-release", al2023, 0o644)
			symlink(t, "/usr/lib/os-release", filepath.Join(root, "etc/os-release"))
		}, "al2023 (ID=amzn VERSION_ID=2023 in /usr/lib/os-release)"},
		{"only /usr/lib/os-release", func(t *testing.T, root string) {
			writeFile(t, root, "usr/lib/os-release", al2023, 0o644)
		}, "al2023 (ID=amzn VERSION_ID=2023 in /usr/lib/os-release)"},
		{"nodeadm's units, no os-release", func(t *testing.T, root string) {
			writeFile(t, root, "etc/systemd/system/nodeadm-run.service", "[Service]\nExecStart=/usr/bin/nodeadm\n", 0o644)
		}, "al2023 (/etc/systemd/system/nodeadm-run.service)"},
		{"AL2", func(t *testing.T, root string) {
			writeFile(t, root, "etc/os-release", "NAME=\"Amazon Linux\"\nVERSION=\"2\"\nID=\"amzn\"\nVERSION_ID=\"2\"\n", 0o644)
		}, "al2 (ID=amzn VERSION_ID=2 in /etc/os-release)"},
		{"Debian", func(t *testing.T, root string) {
			writeFile(t, root, "etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_ID=\"12\"\nID=debian\n", 0o644)
		}, "generic (ID=debian VERSION_ID=12 in /etc/os-release)"},
		{"no os-release", func(*testing.T, string) {}, "generic (no os-release)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.setup(t, root)
			code, out := command(t, ".", append(installEnv(root), "KUBELET_VERSION=1.32.9"), "sh", "install.sh")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			if want := "install.sh: image: " + tc.want + "\n"; !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
			if al2023 := strings.HasPrefix(tc.want, "al2023"); al2023 != strings.Contains(out, "nodeadm-run.service: not enabled") {
				t.Errorf("AL2023 is %v, but the output says otherwise about nodeadm:\n%s", al2023, out)
			}
		})
	}
}

// symlink makes link point to target, creating link's folder.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestInstallRefusesBeforeWriting checks failures found on a root that has files:
// install.sh says why and leaves the root as it was.
func TestInstallRefusesBeforeWriting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) []string
		want  string
	}{
		{"no shim", func(t *testing.T, root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=1.32.9", "BOOTSTRAP_SH="+root+"/nope.sh")
		}, "bootstrap.sh shim %ROOT%/nope.sh: no such file"},
		{"a shim that does not exec eksboot", func(t *testing.T, root string) []string {
			writeFile(t, root, "shim.sh", "#!/bin/sh\nexec /usr/bin/eksboot \"$@\"\n", 0o755)
			return append(installEnv(root), "KUBELET_VERSION=1.32.9", "BOOTSTRAP_SH="+root+"/shim.sh")
		}, `bootstrap.sh shim %ROOT%/shim.sh: no line 'exec /usr/bin/eksboot bootstrap "$@"'`},
		{"nodeadm enabled by a vendor link", func(t *testing.T, root string) []string {
			writeFile(t, root, "etc/os-release", "ID=amzn\nVERSION_ID=2023\n", 0o644)
			writeFile(t, root, "usr/lib/systemd/system/nodeadm-run.service", "[Install]\nWantedBy=multi-user.target\n", 0o644)
			symlink(t, "../nodeadm-run.service", filepath.Join(root, "usr/lib/systemd/system/multi-user.target.wants/nodeadm-run.service"))
			return append(installEnv(root), "KUBELET_VERSION=1.32.9")
		}, "/usr/lib/systemd/system/multi-user.target.wants/nodeadm-run.service: nodeadm-run.service is enabled by the distribution's own link"},
		{"a file where nodeadm's link should be", func(t *testing.T, root string) []string {
			writeFile(t, root, "etc/os-release", "ID=amzn\nVERSION_ID=2023\n", 0o644)
			writeFile(t, root, "etc/systemd/system/multi-user.target.wants/nodeadm-config.service", "[Service]\n", 0o644)
			return append(installEnv(root), "KUBELET_VERSION=1.32.9")
		}, "/etc/systemd/system/multi-user.target.wants/nodeadm-config.service: not a symlink"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			env := tc.setup(t, root)
			before := tree(t, root)
			code, out := command(t, ".", env, "sh", "install.sh")
			want := strings.ReplaceAll(tc.want, "%ROOT%", root)
			if code == 0 || !strings.Contains(out, "install.sh: error: "+want) {
				t.Errorf("exit %d, want a failure saying %q:\n%s", code, want, out)
			}
			testtools.CompareTrees(t, tree(t, root), before)
		})
	}
}
