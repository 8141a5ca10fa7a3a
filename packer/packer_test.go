package packer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/goldencase"

	"github.com/eksboot/eksboot/internal/testtools"
)

const (
	// localSource is the template's source that provisions a staging folder.
	localSource = "null.staging"
	// stagedKubelet is the kubelet version the staging build is given.
	stagedKubelet = "v1.32.9-eks-113cf36"
	goldenCase    = "../testdata/golden/01-m5large-usw2-vpc192"
	blackboxCase  = "../testdata/blackbox/01-m5large-usw2-vpc192"
)

// TestTemplate checks the template is formatted and valid, and that the variables'
// validation rules are live. packer validate reads no network: the amazon-ebs source
// is only prepared, never started (make test runs it without a network).
func TestTemplate(t *testing.T) {
	needTools(t, "packer")
	t.Parallel()
	if code, out := command(t, ".", packerEnv, "packer", "fmt", "-check", "."); code != 0 {
		t.Errorf("packer fmt -check: exit %d (run packer fmt packer/):\n%s", code, out)
	}
	if code, out := command(t, ".", packerEnv, "packer", "validate", "-var", "eksboot_binary="+binary, "."); code != 0 {
		t.Errorf("packer validate: exit %d:\n%s", code, out)
	}
	code, out := command(t, ".", packerEnv, "packer", "validate", "-var", "eksboot_binary="+binary, "-var", "kubernetes_version=v1.32", ".")
	if code == 0 || !strings.Contains(out, "kubernetes_version must be a minor version") {
		t.Errorf("packer validate -var kubernetes_version=v1.32: exit %d, want a failure naming the rule:\n%s", code, out)
	}
}

// stage runs the template's local source into a new staging root and returns it.
func stage(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := command(t, ".", packerEnv, "packer", "build", "-color=false", "-only="+localSource,
		"-var", "staging_dir="+root, "-var", "eksboot_binary="+binary, "-var", "kubelet_version="+stagedKubelet, ".")
	if code != 0 {
		t.Fatalf("packer build -only=%s: exit %d:\n%s", localSource, code, out)
	}
	for _, want := range []string{"install.sh: /usr/bin/eksboot: installed (mode 0755)", "install.sh: done"} {
		if !strings.Contains(out, want) {
			t.Errorf("packer build output lacks %q:\n%s", want, out)
		}
	}
	return root
}

// stagedTree is the tree the local source must stage into an empty root.
func stagedTree(t *testing.T) map[string]string {
	t.Helper()
	bin, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	unit := func(name string) string {
		b, err := os.ReadFile("../assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return map[string]string{
		"usr":                                "dir 0755",
		"usr/bin":                            "dir 0755",
		"usr/bin/eksboot":                    "file 0755 " + string(bin),
		"etc":                                "dir 0755",
		"etc/eks":                            "dir 0755",
		"etc/eks/bootstrap.sh":               "file 0755 " + readFile(t, shim),
		"etc/eks/kubelet-version.txt":        "file 0644 Kubernetes " + stagedKubelet + "\n",
		"etc/systemd":                        "dir 0755",
		"etc/systemd/system":                 "dir 0755",
		"etc/eks/eksboot.d":                  "dir 0755",
		"etc/systemd/system/kubelet.service": "file 0644 " + unit("kubelet.service"),
		"etc/systemd/system/eksboot-config.service":                         "file 0644 " + unit("eksboot-config.service"),
		"etc/systemd/system/eksboot-run.service":                            "file 0644 " + unit("eksboot-run.service"),
		"etc/systemd/system/multi-user.target.wants":                        "dir 0755",
		"etc/systemd/system/multi-user.target.wants/eksboot-config.service": "link -> /etc/systemd/system/eksboot-config.service",
		"etc/systemd/system/multi-user.target.wants/eksboot-run.service":    "link -> /etc/systemd/system/eksboot-run.service",
	}
}

// TestStagingBuild runs the local build and checks the staged root: its whole
// layout, that its unit links are what `systemctl enable` makes, and that the staged
// /etc/eks/bootstrap.sh configures it exactly like `eksboot bootstrap`.
func TestStagingBuild(t *testing.T) {
	needTools(t, "packer")
	t.Parallel()
	staged := stage(t)
	testtools.CompareTrees(t, tree(t, staged), stagedTree(t))
	if t.Failed() {
		t.FailNow()
	}

	t.Run("systemctl enable agrees", func(t *testing.T) {
		needTools(t, "systemctl")
		root := filepath.Join(t.TempDir(), "root")
		copyTree(t, staged, root)
		// --root works on the folder alone: no D-Bus, no running systemd.
		if code, out := command(t, ".", nil, "systemctl", "--root="+root, "enable", "eksboot-config.service", "eksboot-run.service"); code != 0 {
			t.Fatalf("systemctl --root enable: exit %d:\n%s", code, out)
		}
		testtools.CompareTrees(t, tree(t, root), tree(t, staged))
	})

	t.Run("bootstrap.sh", func(t *testing.T) {
		testStagedBootstrap(t, staged)
	})
}

// testStagedBootstrap runs the staged /etc/eks/bootstrap.sh (the image's user-data
// entry point, the shim, with the staged eksboot at /usr/bin/eksboot) on a copy of
// the staged root, and `eksboot bootstrap` on another, both against a golden case's
// fake IMDS and EC2. The two roots must end up the same, and the files written must
// be the blackbox test's tree for that case.
func testStagedBootstrap(t *testing.T, staged string) {
	c, err := goldencase.Load(goldenCase)
	if err != nil {
		t.Fatal(err)
	}
	fakes, err := c.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fakes.Close)
	var env []string
	for k, v := range fakes.Env() {
		env = append(env, k+"="+v)
	}
	for k, v := range c.Env {
		env = append(env, k+"="+v)
	}
	viaImage := filepath.Join(t.TempDir(), "image")
	viaCommand := filepath.Join(t.TempDir(), "command")
	for _, root := range []string{viaImage, viaCommand} {
		copyTree(t, staged, root)
		if err := c.WriteFiles(root); err != nil {
			t.Fatal(err)
		}
	}

	// The kubelet version comes from the staged kubelet-version.txt.
	args := append(append([]string{}, c.Args...), "--root", viaImage, "--no-restart", "--imds-endpoint", fakes.IMDS.URL())
	code, out := withEksboot(t, filepath.Join(viaImage, "usr/bin/eksboot"), env, filepath.Join(viaImage, "etc/eks/bootstrap.sh"), args...)
	if code != 0 {
		t.Fatalf("staged /etc/eks/bootstrap.sh: exit %d:\n%s", code, out)
	}
	args = append(append([]string{"bootstrap"}, c.Args...), "--root", viaCommand, "--no-restart",
		"--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL())
	if code, out := command(t, ".", env, binary, args...); code != 0 {
		t.Fatalf("eksboot bootstrap: exit %d:\n%s", code, out)
	}
	got := tree(t, viaImage)
	testtools.CompareTrees(t, got, tree(t, viaCommand))

	// What it wrote on top of the image is what the blackbox test expects.
	want := withoutDirs(tree(t, staged))
	for k, v := range withoutDirs(tree(t, blackboxCase)) {
		if old, ok := want[k]; ok && old != v {
			t.Errorf("%s: the image has %.80q, the blackbox tree %.80q", k, old, v)
		}
		want[k] = v
	}
	testtools.CompareTrees(t, withoutDirs(got), want)
}

// TestLocalSourceNeedsStagingDir is a guard for the template's wiring: without a
// staging folder the local source must fail, because install.sh refuses an empty
// DESTDIR rather than installing into this machine. The binary it is given does not
// exist, so even a broken guard could write nothing.
func TestLocalSourceNeedsStagingDir(t *testing.T) {
	needTools(t, "packer")
	t.Parallel()
	code, out := command(t, ".", packerEnv, "packer", "build", "-color=false", "-only="+localSource,
		"-var", "eksboot_binary=/nonexistent/eksboot", "-var", "kubelet_version="+stagedKubelet, ".")
	if code == 0 || !strings.Contains(out, "DESTDIR is not set") {
		t.Errorf("packer build without staging_dir: exit %d, want install.sh to refuse:\n%s", code, out)
	}
}
