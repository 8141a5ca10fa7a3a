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
	goldenCase  = "../testdata/golden/01-m5large-usw2-vpc192"
	// blackboxCase is what eksboot writes for goldenCase on an AL2 root.
	blackboxCase = "../testdata/blackbox/01-m5large-usw2-vpc192"
)

// families are the image families the local source stages, each with the kubelet
// version its stand-in image is given (AL2's is the golden case's, so that its
// blackbox tree applies).
var families = []struct {
	name, kubelet, blackbox string
}{
	{"al2023", "v1.35.0-eks-4a1b2c3", ""},
	{"al2", "v1.32.9-eks-113cf36", blackboxCase},
}

// TestTemplate checks the template is formatted and valid, that the variables'
// validation rules are live, and the source AMI's name filter of each family and
// architecture. packer validate reads no network: the amazon-ebs source is only
// prepared, never started (make test runs it without a network).
func TestTemplate(t *testing.T) {
	needTools(t, "packer")
	t.Parallel()
	rel := builtRelease(t)
	if code, out := command(t, ".", packerEnv, "packer", "fmt", "-check", "."); code != 0 {
		t.Errorf("packer fmt -check: exit %d (run packer fmt packer/):\n%s", code, out)
	}
	for _, family := range []string{"al2023", "al2"} {
		if code, out := command(t, ".", packerEnv, "packer", "validate", "-var", "eksboot_rpm="+rel.rpm, "-var", "image_family="+family, "."); code != 0 {
			t.Errorf("packer validate -var image_family=%s: exit %d:\n%s", family, code, out)
		}
	}
	for _, tc := range []struct{ vars, want string }{
		{"kubernetes_version=v1.32", "kubernetes_version must be a minor version"},
		{"image_family=bottlerocket", "image_family must be al2023 or al2"},
	} {
		code, out := command(t, ".", packerEnv, "packer", "validate", "-var", "eksboot_rpm="+rel.rpm, "-var", tc.vars, ".")
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("packer validate -var %s: exit %d, want a failure naming the rule:\n%s", tc.vars, code, out)
		}
	}
	for _, tc := range []struct {
		vars []string
		want string
	}{
		{nil, "amazon-eks-node-al2023-x86_64-standard-1.35-v*"},
		{[]string{"architecture=arm64"}, "amazon-eks-node-al2023-arm64-standard-1.35-v*"},
		{[]string{"kubernetes_version=1.33"}, "amazon-eks-node-al2023-x86_64-standard-1.33-v*"},
		{[]string{"image_family=al2", "kubernetes_version=1.32"}, "amazon-eks-node-1.32-v*"},
		{[]string{"image_family=al2", "kubernetes_version=1.32", "architecture=arm64"}, "amazon-eks-arm64-node-1.32-v*"},
		{[]string{"source_ami_name=my-image-*"}, "my-image-*"},
	} {
		args := []string{"inspect"}
		for _, v := range tc.vars {
			args = append(args, "-var", v)
		}
		code, out := command(t, ".", packerEnv, "packer", append(args, ".")...)
		if want := "local.source_ami_name: \"" + tc.want + "\"\n"; code != 0 || !strings.Contains(out, want) {
			t.Errorf("packer inspect %q: exit %d, want %q:\n%s", tc.vars, code, want, out)
		}
	}
}

// stage runs the template's local source for family into a new staging root, which
// installs the RPM of rel there, and returns the root.
func stage(t *testing.T, rel release, family, kubelet string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := command(t, ".", packerEnv, "packer", "build", "-color=false", "-only="+localSource,
		"-var", "staging_dir="+root, "-var", "eksboot_rpm="+rel.rpm, "-var", "image_family="+family,
		"-var", "kubelet_version="+kubelet, ".")
	if code != 0 {
		t.Fatalf("packer build -only=%s: exit %d:\n%s", localSource, code, out)
	}
	for _, want := range []string{
		"fake-image.sh: laid out the " + family + " image's files",
		"eksboot preinstall: image: " + family + " (ID=amzn",
		"eksboot preinstall: /etc/eks/bootstrap.sh: kept the original as /etc/eks/bootstrap.sh.orig",
		"eksboot postinstall: /etc/systemd/system/multi-user.target.wants/eksboot-run.service: linked to /etc/systemd/system/eksboot-run.service",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("packer build output lacks %q:\n%s", want, out)
		}
	}
	return root
}

// TestStagingBuild runs the local build of each image family and checks the staged
// root: its whole layout (the stand-in image, as fake-image.sh lays it out, with
// the RPM's files and its scripts' changes, those install.sh makes, as
// TestPackagesInstallAsInstallSh holds them to), that its unit links are what
// `systemctl enable` (and on AL2023 `systemctl disable` of nodeadm) make, and that
// the staged /etc/eks/bootstrap.sh configures it exactly like `eksboot bootstrap`.
func TestStagingBuild(t *testing.T) {
	needTools(t, "packer", "rpm")
	needRoot(t, "rpm --root runs the package's scripts chrooted in the staging root")
	t.Parallel()
	rel := builtRelease(t)
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			staged := stage(t, rel, f.name, f.kubelet)
			image := tree(t, fakeImage(t, f.name, f.kubelet))
			testtools.CompareTrees(t, withoutPackageDB(tree(t, staged)), installed(t, image, f.kubelet, f.name == "al2023", rel.inputs()))
			if t.Failed() {
				t.FailNow()
			}

			t.Run("systemctl agrees", func(t *testing.T) {
				needTools(t, "systemctl")
				root := filepath.Join(t.TempDir(), "root")
				copyTree(t, staged, root)
				// --root works on the folder alone: no D-Bus, no running systemd.
				if code, out := command(t, ".", nil, "systemctl", "--root="+root, "enable", "eksboot-config.service", "eksboot-run.service"); code != 0 {
					t.Fatalf("systemctl --root enable: exit %d:\n%s", code, out)
				}
				if f.name == "al2023" {
					if code, out := command(t, ".", nil, "systemctl", "--root="+root, "disable", "nodeadm-config.service", "nodeadm-run.service"); code != 0 {
						t.Fatalf("systemctl --root disable: exit %d:\n%s", code, out)
					}
				}
				testtools.CompareTrees(t, tree(t, root), tree(t, staged))
			})

			t.Run("bootstrap.sh", func(t *testing.T) {
				testStagedBootstrap(t, staged, f.kubelet, f.blackbox)
			})

			t.Run("eksctl's max-pods hook", func(t *testing.T) {
				testStagedMaxPodsHook(t, staged)
			})
		})
	}
}

// testStagedBootstrap runs the staged /etc/eks/bootstrap.sh (the image's user-data
// entry point, the shim, with the staged eksboot at /usr/bin/eksboot) on a copy of
// the staged root, and `eksboot bootstrap` on another, both against a golden case's
// fake IMDS and EC2. The two roots must end up the same, and, given a blackbox tree,
// the files written must be that tree.
func testStagedBootstrap(t *testing.T, staged, kubelet, blackbox string) {
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
		"--kubelet-version", kubelet, "--imds-endpoint", fakes.IMDS.URL())
	if code, out := command(t, ".", env, binary, args...); code != 0 {
		t.Fatalf("eksboot bootstrap: exit %d:\n%s", code, out)
	}
	got := tree(t, viaImage)
	testtools.CompareTrees(t, got, tree(t, viaCommand))
	if blackbox == "" {
		return
	}

	// What it wrote on top of the image is what the blackbox test expects.
	want := withoutDirs(tree(t, staged))
	for k, v := range withoutDirs(tree(t, blackbox)) {
		if old, ok := want[k]; ok && old != v {
			t.Errorf("%s: the image has %.80q, the blackbox tree %.80q", k, old, v)
		}
		want[k] = v
	}
	testtools.CompareTrees(t, withoutDirs(got), want)
}

// testStagedMaxPodsHook runs eksctl's maxPodsPerNode hook as sample 02's user data
// does (its sed on /etc/eks/bootstrap.sh), then the staged bootstrap.sh with
// --kubelet-extra-args, on a copy of the staged root, and the unedited bootstrap.sh on
// another: the roots must differ only in files that carry the hook's --max-pods=58,
// and in at least one, so the node's kubelet really gets it.
func testStagedMaxPodsHook(t *testing.T, staged string) {
	_, expr := maxPodsHook(t)
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
	trees := map[bool]map[string]string{}
	for _, edit := range []bool{false, true} {
		root := filepath.Join(t.TempDir(), "root")
		copyTree(t, staged, root)
		if err := c.WriteFiles(root); err != nil {
			t.Fatal(err)
		}
		bs := filepath.Join(root, "etc/eks/bootstrap.sh")
		if edit {
			if code, out := command(t, ".", nil, "sed", "-i", expr, bs); code != 0 {
				t.Fatalf("sed -i %q: exit %d:\n%s", expr, code, out)
			}
		}
		args := append(append([]string{}, c.Args...), "--kubelet-extra-args", "--node-labels=team=a",
			"--root", root, "--no-restart", "--imds-endpoint", fakes.IMDS.URL())
		if code, out := withEksboot(t, filepath.Join(root, "usr/bin/eksboot"), env, bs, args...); code != 0 {
			t.Fatalf("staged /etc/eks/bootstrap.sh (sed: %v): exit %d:\n%s", edit, code, out)
		}
		trees[edit] = withoutDirs(tree(t, root))
		delete(trees[edit], "etc/eks/bootstrap.sh")
	}
	carried := 0
	for k, edited := range trees[true] {
		if plain := trees[false][k]; plain != edited {
			if !strings.Contains(edited, maxPodsFlag) || strings.Contains(plain, maxPodsFlag) {
				t.Errorf("%s differs after the hook without carrying %s:\n  plain: %.200q\n edited: %.200q", k, maxPodsFlag, plain, edited)
			}
			carried++
		}
	}
	if carried == 0 {
		t.Errorf("no file written differs after the hook: the node's kubelet does not get %s", maxPodsFlag)
	}
	if len(trees[true]) != len(trees[false]) {
		testtools.CompareTrees(t, trees[true], trees[false])
	}
}

// TestLocalSourceNeedsStagingDir is a guard for the template's wiring: without a
// staging folder the local source must fail, because fake-image.sh and the rpm step
// refuse an empty DESTDIR rather than installing into this machine. The RPM it is
// given does not exist, so even a broken guard could install nothing.
func TestLocalSourceNeedsStagingDir(t *testing.T) {
	needTools(t, "packer")
	t.Parallel()
	code, out := command(t, ".", packerEnv, "packer", "build", "-color=false", "-only="+localSource,
		"-var", "eksboot_rpm=/nonexistent/eksboot.rpm", ".")
	if code == 0 || !strings.Contains(out, "fake-image.sh: error: DESTDIR is not set") || strings.Contains(out, "rpm --root") || strings.Contains(out, "eksboot preinstall") {
		t.Errorf("packer build without staging_dir: exit %d, want fake-image.sh to refuse before rpm runs:\n%s", code, out)
	}
}

// TestFreshCheckoutValidate: packer validate in a checkout where make package has not
// run names the step that is missing, not only the file.
func TestFreshCheckoutValidate(t *testing.T) {
	needTools(t, "packer")
	t.Parallel()
	checkout := t.TempDir()
	copyTree(t, ".", filepath.Join(checkout, "packer"))
	copyTree(t, "../assets", filepath.Join(checkout, "assets"))
	dir := filepath.Join(checkout, "packer")
	code, out := command(t, dir, packerEnv, "packer", "validate", ".")
	if code == 0 || !strings.Contains(out, "run make package first") {
		t.Errorf("packer validate without an RPM: exit %d, want it to say make package comes first:\n%s", code, out)
	}
	if code, out := command(t, dir, packerEnv, "packer", "validate", "-var", "eksboot_rpm="+builtRelease(t).rpm, "."); code != 0 {
		t.Errorf("packer validate with both: exit %d:\n%s", code, out)
	}
}

// TestPluginsFileIsForModernPackerOnly: the plugins file names the Amazon plugin
// and sits where Packer 1.6.6, which refuses required_plugins, never reads it with
// the template.
func TestPluginsFileIsForModernPackerOnly(t *testing.T) {
	b := readFile(t, "plugins/plugins.pkr.hcl")
	for _, want := range []string{"required_plugins", `source  = "github.com/hashicorp/amazon"`, `required_version = ">= 1.10.0"`} {
		if !strings.Contains(b, want) {
			t.Errorf("plugins/plugins.pkr.hcl lacks %q", want)
		}
	}
	if m, _ := filepath.Glob("*.pkr.hcl"); strings.Contains(strings.Join(m, " "), "plugins") {
		t.Errorf("a plugins file next to the template: %v", m)
	}
}
