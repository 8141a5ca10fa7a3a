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
		"install.sh: /etc/eks/bootstrap.sh: kept the original as /etc/eks/bootstrap.sh.orig",
		"install.sh: /etc/eks/bootstrap.sh: linked to ../../usr/bin/eksboot",
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
		"etc/eks/bootstrap.sh":        "link -> ../../usr/bin/eksboot",
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
	for _, verb := range []string{"installed", "updated", "linked to", "kept the original", "replacing"} {
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
		{"no kubelet version", installEnv, "no kubelet in the root and KUBELET_VERSION is not set"},
		{"bad kubelet version", func(root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=latest")
		}, `kubelet version "Kubernetes vlatest" (from KUBELET_VERSION) has no x.y.z version`},
		{"missing unit", func(root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=1.32.9", "UNITS=nope.service")
		}, "unit ../assets/nope.service: no such file"},
		{"unsupported [Install] key", func(root string) []string {
			return append(installEnv(root), "KUBELET_VERSION=1.32.9", "UNITS_DIR="+unitsWithAlias(t), "UNITS=alias.service")
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

// TestShellcheck runs shellcheck on install.sh (POSIX sh, from its #! line).
func TestShellcheck(t *testing.T) {
	needTools(t, "shellcheck")
	t.Parallel()
	if code, out := command(t, ".", nil, "shellcheck", "install.sh"); code != 0 {
		t.Errorf("shellcheck install.sh: exit %d:\n%s", code, out)
	}
}
