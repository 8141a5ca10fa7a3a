package kubeletconf

import (
	"flag"
	"os"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// update rewrites eksboot's own golden files (testdata/<renderer>/...). The
// bootstrap.sh reference outputs in testdata/bootstrap-sh/ are never rewritten.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (not testdata/bootstrap-sh/) from the current output")

// bootstrapDir holds what bootstrap.sh wrote for each golden case, copied from
// the project's shared golden outputs (see testdata/README.md).
const bootstrapDir = "testdata/bootstrap-sh"

// Paths, relative to a case folder, of the files bootstrap.sh wrote.
const (
	kubeletConfigPath = "etc/kubernetes/kubelet/kubelet-config.json"
	kubeconfigPath    = "var/lib/kubelet/kubeconfig"
	dropInDir         = "etc/systemd/system/kubelet.service.d"
)

const (
	serverUSW2    = "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com"
	serverCN      = "https://0123456789ABCDEF0123456789ABCDEF.gr7.cn-north-1.eks.amazonaws.com.cn"
	pauseUSW2     = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"
	hostnameUSW2  = "ip-192-168-45-67.us-west-2.compute.internal"
	providerUSW2  = "aws:///us-west-2a/i-0123456789abcdef0"
	nodeIPDefault = "192.168.45.67"
)

// goldenCase is the input of one bootstrap.sh golden case, taken from its
// case.json (arguments, instance metadata, nproc and kubelet --version).
type goldenCase struct {
	name       string
	dns        []string
	maxPods    int32 // from eni-max-pods.txt for the instance type
	setMaxPods bool  // --use-max-pods
	cpus       int   // nproc
	providerID string
	server     string
	region     string
	nodeIP     string
	hostname   string
	pauseImage string
	extraArgs  string // --kubelet-extra-args; "" means no 30-kubelet-extra-args.conf
}

// input returns the kubeletconf.Input of c (all cases: kubelet v1.32.9-eks-113cf36,
// containerd, no --reserved-cpus).
func (c goldenCase) input() Input {
	return Input{
		ClusterDNS:      c.dns,
		MaxPods:         c.maxPods,
		SetMaxPods:      c.setMaxPods,
		CPUs:            c.cpus,
		ProviderID:      c.providerID,
		KubeletVersion:  Version{1, 32, 9},
		ReservedCgroups: true,
	}
}

// kubeletArgs returns the KUBELET_ARGS value bootstrap.sh computes for c.
func (c goldenCase) kubeletArgs() string {
	return "--node-ip=" + c.nodeIP + " --pod-infra-container-image=" + c.pauseImage +
		" --v=2 --hostname-override=" + c.hostname + " --cloud-provider=external"
}

// base is case 01: m5.large in us-west-2, VPC 192.168.0.0/16, minimal flags.
var base = goldenCase{
	name:       "01-m5large-usw2-vpc192",
	dns:        []string{"10.100.0.10"},
	maxPods:    29,
	setMaxPods: true,
	cpus:       2,
	providerID: providerUSW2,
	server:     serverUSW2,
	region:     "us-west-2",
	nodeIP:     nodeIPDefault,
	hostname:   hostnameUSW2,
	pauseImage: pauseUSW2,
}

// goldenCases lists every case of testdata/bootstrap-sh as a change from base.
var goldenCases = []goldenCase{
	base,
	with(base, func(c *goldenCase) {
		c.name = "02-m5large-usw2-vpc10"
		c.dns = []string{"172.20.0.10"}
		c.nodeIP = "10.0.45.67"
		c.hostname = "ip-10-0-45-67.us-west-2.compute.internal"
	}),
	with(base, func(c *goldenCase) {
		c.name = "03-dnsip-nomaxpods-extraargs"
		c.dns = []string{"172.20.0.10"}
		c.setMaxPods = false
		c.extraArgs = "--node-labels=workload=batch,team=a --max-pods=58 --register-with-taints=dedicated=gpu:NoSchedule"
	}),
	with(base, func(c *goldenCase) {
		c.name = "05-t3.micro"
		c.maxPods = 4
	}),
	with(base, func(c *goldenCase) {
		c.name = "07-cn-north-1"
		c.maxPods = 58
		c.cpus = 4
		c.providerID = "aws:///cn-north-1a/i-0123456789abcdef0"
		c.server = serverCN
		c.region = "cn-north-1"
		c.hostname = "ip-192-168-45-67.cn-north-1.compute.internal"
		c.pauseImage = "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn/eks/pause:3.5"
	}),
	with(base, func(c *goldenCase) {
		c.name = "09-eksctl-mng"
		c.setMaxPods = false
		c.extraArgs = "--node-labels=eks.amazonaws.com/sourceLaunchTemplateVersion=1,alpha.eksctl.io/nodegroup-name=ng1," +
			"alpha.eksctl.io/cluster-name=demo,eks.amazonaws.com/nodegroup-image=ami-0b67ce88915e3b7fd," +
			"eks.amazonaws.com/capacityType=ON_DEMAND,eks.amazonaws.com/nodegroup=ng1 --max-pods=110"
	}),
	with(base, func(c *goldenCase) {
		c.name = "10-ipv6"
		c.dns = []string{"fd00:10:96::a"}
		c.nodeIP = "2600:1f14:abcd:1200:1a2b:3c4d:5e6f:7a8b"
	}),
	with(base, func(c *goldenCase) {
		c.name = "12-extra-args-quotes"
		c.extraArgs = `--node-labels=a=b --eviction-hard="memory.available<200Mi"`
	}),
	with(base, func(c *goldenCase) {
		c.name = "13-pause-account-version"
		c.pauseImage = "123456789012.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.9"
	}),
	with(base, func(c *goldenCase) {
		c.name = "15-service-ipv4-cidr"
		c.dns = []string{"10.96.0.10"}
	}),
	with(base, func(c *goldenCase) {
		c.name = "17-dnsip-list"
		c.dns = []string{"10.100.0.10", "10.100.0.11"}
	}),
	with(base, func(c *goldenCase) {
		c.name = "36-use-max-pods-false"
		c.setMaxPods = false
	}),
}

func with(c goldenCase, edit func(*goldenCase)) goldenCase {
	edit(&c)
	return c
}

// TestGoldenCasesCovered fails when testdata/bootstrap-sh gains a case that
// goldenCases does not list (or the other way round).
func TestGoldenCasesCovered(t *testing.T) {
	entries, err := os.ReadDir(bootstrapDir)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range goldenCases {
		listed[c.name] = true
	}
	for _, e := range entries {
		if e.IsDir() && !listed[e.Name()] {
			t.Errorf("case %s in %s is not in goldenCases", e.Name(), bootstrapDir)
		}
		delete(listed, e.Name())
	}
	for name := range listed {
		t.Errorf("case %s of goldenCases has no folder in %s", name, bootstrapDir)
	}
}

// readTestdata returns the content of path, failing the test if it cannot be read.
func readTestdata(t *testing.T, path string) []byte { t.Helper(); return testtools.ReadFile(t, path) }

// checkGolden compares got with the golden file path, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	testtools.CheckGolden(t, path, got, *update)
}
