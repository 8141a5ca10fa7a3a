package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/internal/testtools"
)

var updateAL2023 = flag.Bool("update", false, "rewrite testdata/al2023 from what eksboot writes")

// al2023Dir holds the nodes eksboot writes on the AL2023 image (see testdata/README.md).
const al2023Dir = "../testdata/al2023"

// al2023Kubelets are the kubelets of the AL2023 golden trees: the oldest EKS supports
// on AL2023 images today, the middle and the newest.
var al2023Kubelets = []string{"v1.33.5-eks-113cf36", "v1.35.1-eks-113cf36", "v1.37.0-eks-0a1b2c3"}

// al2023NodeConfigSamples are the NodeConfig user-data samples of the AL2023 trees.
var al2023NodeConfigSamples = []string{
	"08-karpenter-al2023-nodeconfig",
	"10-nodeadm-plain-nodeconfig",
	"11-terraform-cloudinit-al2023-mime",
	"12-eksctl-nodegroup-al2023-two-nodeconfigs",
	"13-eks-mng-al2023-merged-by-eks",
}

// TestAL2023Golden boots the bootstrap.sh command lines of every golden case (through
// the bootstrap.sh name) and the NodeConfig samples (through `eksboot init`) on an
// AL2023 image at three kubelet versions, and compares the files eksboot wrote with
// testdata/al2023 (go test ./cli -run TestAL2023Golden -update rewrites them: review
// the diff).
func TestAL2023Golden(t *testing.T) {
	cases, err := goldencase.LoadAll("../testdata/golden")
	must(t, err)
	for _, kv := range al2023Kubelets {
		minor := kv[1:5]
		for _, c := range cases {
			if c.ExitCode != 0 {
				continue
			}
			t.Run("bootstrap-"+c.Name+"-"+minor, func(t *testing.T) {
				fakes := c.StartFor(t)
				for k, v := range c.Env {
					t.Setenv(k, v)
				}
				old := envHook
				t.Cleanup(func() { envHook = old })
				envHook = func(env *bootstrap.Env) {
					env.CPUs = c.CPUs
					env.DNSNameAttempts, env.DNSNameInterval = 1, 0
				}
				argv := append([]string{"/etc/eks/bootstrap.sh"}, c.Args...)
				argv = append(argv, "--root", "ROOT", "--no-restart", "--imds-endpoint", fakes.IMDS.URL())
				checkAL2023(t, kv, "bootstrap-"+c.Name+"-"+minor, argv, func(dir string) { must(t, c.WriteFiles(dir)) })
			})
		}
		for _, name := range al2023NodeConfigSamples {
			t.Run("init-"+name+"-"+minor, func(t *testing.T) {
				offline(t)
				raw, err := os.ReadFile(filepath.Join(sampleDir, name+".userdata"))
				must(t, err)
				inst := imdstest.DefaultInstance()
				inst.UserData = string(raw)
				srv, err := imdstest.NewServer(inst)
				must(t, err)
				t.Cleanup(func() { _ = srv.Close() })
				argv := []string{"eksboot", "init", "--root", "ROOT", "--no-restart", "--imds-endpoint", srv.URL()}
				checkAL2023(t, kv, "init-"+name+"-"+minor, argv, nil)
			})
		}
	}
}

// checkAL2023 lays out the AL2023 image with kubelet kv in a fresh root, runs argv
// ("ROOT" replaced by the root) and compares the files it wrote or changed with the
// tree testdata/al2023/<name>.
func checkAL2023(t *testing.T, kv, name string, argv []string, prepare func(dir string)) {
	t.Helper()
	dir := t.TempDir()
	must(t, imagefixture.AL2023{KubeletVersion: kv}.Write(dir))
	if prepare != nil {
		prepare(dir)
	}
	before, err := readTree(dir)
	must(t, err)
	for i, a := range argv {
		if a == "ROOT" {
			argv[i] = dir
		}
	}
	var stderr bytes.Buffer
	code := Main(argv, io.Discard, &stderr)
	if !strings.Contains(stderr.String(), `"imageProfile": "al2023"`) && !strings.Contains(stderr.String(), "imageProfile") {
		t.Errorf("the log does not name the image profile:\n%s", stderr.String())
	}
	after, err := readTree(dir)
	must(t, err)
	got := map[string]string{}
	for p, b := range after {
		if old, ok := before[p]; !ok || !bytes.Equal(old, b) {
			got[p] = string(b)
		}
	}
	if code != 0 {
		// A refusal is a result too (what that kubelet would refuse, refused before
		// anything is written): the tree is the exit status and the error line.
		if len(got) > 0 {
			t.Errorf("exit %d, but it wrote %d files", code, len(got))
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		got = map[string]string{"/REFUSED": fmt.Sprintf("exit %d\n%s\n", code, lines[len(lines)-1])}
	}
	wantDir := filepath.Join(al2023Dir, name)
	if *updateAL2023 {
		must(t, os.RemoveAll(wantDir))
		for p, b := range got {
			hp := filepath.Join(wantDir, filepath.FromSlash(p))
			must(t, os.MkdirAll(filepath.Dir(hp), 0o755))
			must(t, os.WriteFile(hp, []byte(b), 0o644))
		}
		return
	}
	wantTree, err := readTree(wantDir)
	if err != nil {
		t.Fatalf("%v (go test ./cli -run TestAL2023Golden -update writes it)", err)
	}
	want := map[string]string{}
	for p, b := range wantTree {
		want[p] = string(b)
	}
	testtools.CompareTrees(t, got, want)
}
