//go:build e2e

// Package e2e boots a node in a box: a Debian root with real systemd, cloud-init,
// containerd and a real kubelet, eksboot installed from its DEB (make package), under
// systemd-nspawn with only a loopback network, next to a real API server. Each
// case's user data goes through cloud-init and eksboot as on EC2, and the Node is
// checked through the API server. `make e2e` runs it (root only); see
// docs/development.md, "A node in a box".
package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/testtools"
)

// endpointHost is the API server host of every sample; in the box it is loopback.
const endpointHost = "0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com"

// sampleCA matches the sample cluster CA the user data samples carry (base64 PEM);
// the test replaces it with its own CA, which signed the API server's certificate.
var sampleCA = regexp.MustCompile(`LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t[A-Za-z0-9+/=]+`)

// userDataCase is one user data sample of testdata/userdata and the test-only
// edits it needs in the box, each said in edits.
type userDataCase struct {
	sample string // testdata/userdata/<sample>.userdata (and .expect.json)
	name   string // the subtest's name; the sample's when empty
	// edits are replacements: old text (which must occur exactly once), new text.
	edits [][2]string
	// wantMaxPods is the kubelet's max pods as eksboot computed it (checked against
	// what eksboot wrote, and the Node's capacity against both).
	wantMaxPods int
	// failUnit is, for a case whose kubelet cannot start, the unit that must fail
	// with a message holding failLine.
	failUnit, failLine string
	// kubeletDropIn is a kubelet.service drop-in of the image (the box's), for a
	// kubelet that cannot start for a reason eksboot cannot see.
	kubeletDropIn string
}

// cgroupV1Flag keeps the kubelet running on this machine's cgroup v1 host: from
// 1.35 the kubelet refuses cgroup v1 unless failCgroupV1 is false. It is given
// through the user data, as a user on such a host would.
const cgroupV1Flag = "--fail-cgroupv1=false "

var cases = []userDataCase{
	{
		sample: "02-eksctl-mng-al2-merged-by-eks",
		edits: [][2]string{
			// The first part (eksctl's preBootstrapCommands, a bare `sysctl -w
			// vm.max_map_count`) sets a host-wide kernel value, which the box must not
			// touch; and it has no #!, so cloud-init cannot run it anyway (ENOEXEC).
			{"--//\nContent-Type: text/x-shellscript\nContent-Type: charset=\"us-ascii\"\n\nsysctl -w vm.max_map_count=262144\n", ""},
			{"--kubelet-extra-args '", "--kubelet-extra-args '" + cgroupV1Flag},
		},
		wantMaxPods: 58, // eksctl's sed hook on /etc/eks/bootstrap.sh
	},
	{
		sample:      "05-handwritten-custom-ami-script",
		edits:       [][2]string{{"--kubelet-extra-args '", "--kubelet-extra-args '" + cgroupV1Flag}},
		wantMaxPods: 58,
	},
	{
		sample:      "06-karpenter-al2",
		edits:       [][2]string{{"--kubelet-extra-args '", "--kubelet-extra-args '" + cgroupV1Flag}},
		wantMaxPods: 110,
	},
	{
		sample:      "13-eks-mng-al2023-merged-by-eks",
		edits:       [][2]string{{"    config:\n      maxPods: 110\n", "    config:\n      failCgroupV1: false\n      maxPods: 110\n"}},
		wantMaxPods: 29,
	},
	{
		sample: "13-eks-mng-al2023-merged-by-eks",
		name:   "13-nodeconfig-invalid-kubelet-flag",
		edits: [][2]string{
			{"    config:\n      maxPods: 110\n", "    config:\n      failCgroupV1: false\n      maxPods: 110\n"},
			{"    - --node-labels=tier=backend\n", "    - --node-labels=tier=backend\n    - --e2e-no-such-flag=1\n"},
		},
		// eksboot refuses a flag the node's kubelet does not have, before it writes
		// anything: the config phase fails, and the run phase with it (Requires=).
		failUnit: "eksboot-config.service",
		failLine: `"--e2e-no-such-flag=1": kubelet 1.`,
	},
	{
		// A kubelet that exits at once for a reason eksboot cannot see (here the
		// image's drop-in gives it a flag it does not have): the config phase starts
		// it (NodeConfig only), and the run phase, after cloud-final, must fail
		// naming it.
		sample:        "13-eks-mng-al2023-merged-by-eks",
		name:          "13-kubelet-that-exits",
		edits:         [][2]string{{"    config:\n      maxPods: 110\n", "    config:\n      failCgroupV1: false\n      maxPods: 110\n"}},
		kubeletDropIn: "# make e2e: a kubelet that cannot start.\n[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --e2e-no-such-flag=1\n",
		failUnit:      "eksboot-run.service",
		failLine:      "kubelet.service did not stay running",
	},
}

// expectation is the part of a sample's expect.json the box checks.
type expectation struct {
	NodeLabels map[string]string `json:"node_labels"`
	Taints     []string          `json:"taints"`
}

var (
	setupOnce sync.Once
	setup     *build
	setupErr  error
	// teardown is what the shared build holds (the cache lock, the built binaries),
	// released by TestMain after every test: not by the first test that asked for
	// the build, whose end would pull them from under the tests after it.
	teardown []func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	writeLastRun()
	for i := len(teardown) - 1; i >= 0; i-- {
		teardown[i]()
	}
	os.Exit(code)
}

// prepare builds (or takes from the cache) everything the boxes are made of.
func prepare(t *testing.T) *build {
	setupOnce.Do(func() {
		setup, setupErr = prepareOnce(t)
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return setup
}

func prepareOnce(t *testing.T) (*build, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("make e2e needs root (systemd-nspawn, mounts)")
	}
	for _, tool := range []string{"systemd-nspawn", "mmdebstrap", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is missing (apt-get install systemd-container mmdebstrap util-linux)", tool)
		}
	}
	unlock, err := lockCache()
	if err != nil {
		return nil, err
	}
	teardown = append(teardown, unlock)
	repo, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	bl := &build{repo: repo, k8s: map[string]string{}}
	tmp, err := os.MkdirTemp("", "eksboot-e2e-bin-")
	if err != nil {
		return nil, err
	}
	teardown = append(teardown, func() { _ = os.RemoveAll(tmp) })
	bl.imdsd = filepath.Join(tmp, "e2e-imdsd")
	bl.pause = filepath.Join(tmp, "e2e-pause")
	// The DEB every box installs: make package's, for this machine.
	dist := filepath.Join(tmp, "dist")
	if _, err := testtools.BuildRelease(filepath.Join(repo, "tools/release"), dist, runtime.GOARCH, "deb"); err != nil {
		return nil, err
	}
	debs, err := filepath.Glob(filepath.Join(dist, "eksboot_*.deb"))
	if err != nil || len(debs) != 1 {
		return nil, fmt.Errorf("make package wrote %v in %s, want one DEB (%v)", debs, dist, err)
	}
	bl.deb = debs[0]
	for out, pkg := range map[string]string{bl.imdsd: "./e2e/imdsd", bl.pause: "./e2e/pause"} {
		cmd := exec.Command("go", "build", "-tags", testtools.NodeTags, "-o", out, pkg)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	// The root (network and dpkg) and the API server's build (CPU) at the same time;
	// each kubelet is built when a case first needs it (kubeletDir).
	var wg sync.WaitGroup
	var rootErr error
	wg.Go(func() { bl.base, rootErr = baseRoot(t) })
	dir, err := k8sBinaries(t, k8sNew)
	wg.Wait()
	if err := errors.Join(err, rootErr); err != nil {
		return nil, err
	}
	bl.k8s[k8sNew.version] = dir
	bl.apiBins = dir
	// kubeletconf/kubelettest's container runtime, for the real-kubelet tests that
	// .ci/run runs with the kubelets last-run.env lists.
	fake, err := fakeCRIBinaryDir(t)
	if err != nil {
		return nil, err
	}
	useBinary("fakecri", filepath.Join(fake, "fakecri"))
	bl.pki, err = newPKI(endpointHost, net.ParseIP("127.0.0.1"), net.ParseIP("10.100.0.1"))
	if err != nil {
		return nil, err
	}
	return bl, nil
}

var (
	usedMu sync.Mutex
	used   = map[string]string{} // "kubelet-1.37.2" -> the binary the run used
)

// useBinary records a binary this run built or took from the cache.
func useBinary(name, path string) {
	usedMu.Lock()
	defer usedMu.Unlock()
	used[name] = path
}

// writeLastRun writes the cache's last-run.env: name=path, one line per program
// the run's boxes were built from (kubelet-<version>, containerd-<version>) and the
// fake runtime of the real-kubelet tests (fakecri), for the tests that check real
// programs (.ci/run gives them to those tests).
func writeLastRun() {
	usedMu.Lock()
	defer usedMu.Unlock()
	if len(used) == 0 {
		return
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(used)) {
		fmt.Fprintf(&b, "%s=%s\n", k, used[k])
	}
	p := filepath.Join(cacheDir(), "last-run.env")
	if err := os.WriteFile(p+".tmp", []byte(b.String()), 0o644); err == nil {
		_ = os.Rename(p+".tmp", p)
	}
}

// kubeletBuild is one release's kubelet, built once however many boxes want it.
type kubeletBuild struct {
	once sync.Once
	dir  string
	err  error
}

var kubeletBuilds sync.Map // version -> *kubeletBuild

// kubeletDir returns the folder with the release's kubelet, building it the first
// time; boxes of a release already built do not wait for another's build.
func kubeletDir(t *testing.T, bl *build, k kubernetes) string {
	v, _ := kubeletBuilds.LoadOrStore(k.version, &kubeletBuild{})
	kb := v.(*kubeletBuild)
	kb.once.Do(func() {
		if dir, ok := bl.k8s[k.version]; ok { // the API server's release, built by prepare
			kb.dir = dir
			return
		}
		kb.dir, kb.err = k8sBinaries(t, k)
	})
	if kb.err != nil {
		t.Fatal(kb.err)
	}
	useBinary("kubelet-"+k.version, filepath.Join(kb.dir, "kubelet"))
	return kb.dir
}

// TestNodeInABox boots every case with each kubelet and checks the Node.
func TestNodeInABox(t *testing.T) {
	bl := prepare(t)
	jobs, _ := strconv.Atoi(os.Getenv("EKSBOOT_E2E_JOBS"))
	if jobs <= 0 {
		jobs = 3
	}
	sem := make(chan struct{}, jobs)
	n := 0
	for _, k := range []kubernetes{k8sOld, k8sNew} {
		t.Run("kubelet-"+k.version, func(t *testing.T) {
			for _, c := range cases {
				n++
				name := cmpOr(c.name, c.sample)
				machine := fmt.Sprintf("e2e-%d-%s", n, strings.ReplaceAll(k.version, ".", ""))
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					sem <- struct{}{}
					defer func() { <-sem }()
					runCase(t, bl, k, c, machine)
				})
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func runCase(t *testing.T, bl *build, k kubernetes, c userDataCase, machine string) {
	ud, err := os.ReadFile(filepath.Join(bl.repo, "testdata/userdata", c.sample+".userdata"))
	if err != nil {
		t.Fatal(err)
	}
	userData := string(ud)
	if n := len(sampleCA.FindAllString(userData, -1)); n == 0 {
		t.Fatalf("%s: no sample CA to replace", c.sample)
	}
	userData = sampleCA.ReplaceAllLiteralString(userData, base64.StdEncoding.EncodeToString(bl.pki.caCert))
	for _, e := range c.edits {
		if n := strings.Count(userData, e[0]); n != 1 {
			t.Fatalf("%s: edit %q: found %d times, want once", c.sample, e[0], n)
		}
		userData = strings.Replace(userData, e[0], e[1], 1)
	}
	var want expectation
	if b, err := os.ReadFile(filepath.Join(bl.repo, "testdata/userdata", c.sample+".expect.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}

	inst := imdstest.DefaultInstance()
	inst.UserData = userData
	b := newBox(t, machine, bl.base)
	provision(t, b, bl, kubeletDir(t, bl, k), inst, endpointHost)
	if c.kubeletDropIn != "" {
		b.write("etc/systemd/system/kubelet.service.d/99-e2e.conf", 0o644, c.kubeletDropIn)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	state := b.boot(ctx)
	t.Logf("first boot: %s after %s", state, time.Since(start).Round(time.Millisecond))
	defer func() {
		if t.Failed() {
			t.Logf("journal of the boot: %s", b.saveJournal())
		}
	}()
	checkNoOrderingCycle(t, b, c.failUnit)

	if c.failUnit != "" {
		checkKubeletFailure(t, b, c.failUnit, c.failLine, state)
		return
	}
	if state != "running" {
		failed, _ := b.exec("systemctl", "--failed", "--no-pager", "--no-legend")
		t.Fatalf("systemctl is-system-running: %s, want running; failed units:\n%s", state, failed)
	}
	checkActive(t, b)
	node := waitNode(t, ctx, b, inst.LocalHostname)
	checkNode(t, b, node, inst, want, c.wantMaxPods)

	// Second boot of the same box: nothing written, nothing restarted, same Node.
	before := snapshot(t, b)
	b.stop()
	start = time.Now()
	state = b.boot(ctx)
	t.Logf("second boot: %s after %s", state, time.Since(start).Round(time.Millisecond))
	if state != "running" {
		failed, _ := b.exec("systemctl", "--failed", "--no-pager", "--no-legend")
		t.Fatalf("second boot: systemctl is-system-running: %s, want running; failed units:\n%s", state, failed)
	}
	checkSecondBoot(t, b, before)
	checkActive(t, b)
	// The Node object outlives the boot: the kubelet of this boot must renew its lease.
	waitLeaseRenewed(t, ctx, b, inst.LocalHostname, start)
	again := waitNode(t, ctx, b, inst.LocalHostname)
	if again.Metadata.UID != node.Metadata.UID {
		t.Errorf("second boot: Node UID %s, want the first boot's %s", again.Metadata.UID, node.Metadata.UID)
	}
	checkNode(t, b, again, inst, want, c.wantMaxPods)
}

// checkNoOrderingCycle: every boot unit of eksboot and cloud-init ran and succeeded
// (systemd breaks an ordering cycle by deleting a start job, which leaves its unit
// inactive, and logs it before the journal runs), and systemd-analyze verify of
// eksboot's units with the box's real cloud-init units finds no cycle.
func checkNoOrderingCycle(t *testing.T, b *box, failUnit string) {
	t.Helper()
	for _, u := range []string{
		"eksboot-config.service", "eksboot-run.service", "cloud-init-local.service",
		"cloud-init.service", "cloud-config.service", "cloud-final.service",
	} {
		// The run phase Requires= the config phase: when that fails, it never runs.
		if u == failUnit || (failUnit == "eksboot-config.service" && u == "eksboot-run.service") {
			continue
		}
		out, err := b.exec("systemctl", "show", "--property=ActiveState,Result", u)
		if err != nil || !strings.Contains(out, "ActiveState=active") || !strings.Contains(out, "Result=success") {
			t.Errorf("%s did not run to success: %v %s", u, err, strings.Join(strings.Fields(out), " "))
		}
	}
	out, err := b.exec("systemd-analyze", "verify", "--man=no", "eksboot-config.service", "eksboot-run.service",
		"cloud-init-local.service", "cloud-init.service", "cloud-config.service", "cloud-final.service", "multi-user.target")
	if err != nil || strings.Contains(out, "cycle") {
		t.Errorf("systemd-analyze verify in the box: %v\n%s", err, out)
	}
}

// checkActive: containerd and the kubelet run. (is-system-running says "running"
// while a unit waits to be restarted after a failure.)
func checkActive(t *testing.T, b *box) {
	t.Helper()
	for _, u := range []string{"containerd.service", "kubelet.service"} {
		out, err := b.exec("systemctl", "show", "--property=ActiveState,SubState,NRestarts", u)
		if err != nil || !strings.Contains(out, "ActiveState=active") || !strings.Contains(out, "SubState=running") {
			t.Errorf("%s is not running: %v %s\n%s", u, err, strings.Join(strings.Fields(out), " "), tail(b.journal(u), 20))
		}
	}
}

// waitLeaseRenewed waits until the node's lease was renewed after since.
func waitLeaseRenewed(t *testing.T, ctx context.Context, b *box, name string, since time.Time) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		out, err := kubectl(ctx, b, "get", "lease", "--namespace=kube-node-lease", name, "--output=jsonpath={.spec.renewTime}")
		last = strings.TrimSpace(out)
		if err == nil {
			if at, err := time.Parse(time.RFC3339Nano, last); err == nil && at.After(since) {
				return
			}
		}
		time.Sleep(time.Second)
	}
	t.Errorf("the kubelet did not renew its lease after the second boot began (%s); renewTime %q\n%s",
		since.Format(time.RFC3339), last, tail(b.journal("kubelet.service"), 20))
}

// checkKubeletFailure: the bootstrap unit failed and its journal holds want.
func checkKubeletFailure(t *testing.T, b *box, unit, want, state string) {
	t.Helper()
	if state != "degraded" {
		t.Errorf("systemctl is-system-running: %s, want degraded (a failed unit)", state)
	}
	if out, _ := b.exec("systemctl", "is-failed", unit); strings.TrimSpace(out) != "failed" {
		t.Errorf("%s: %s, want failed", unit, strings.TrimSpace(out))
	}
	j := b.journal(unit)
	if l := lines(j, want); len(l) == 0 {
		t.Errorf("the journal of %s does not say %q:\n%s", unit, want, tail(j, 30))
	} else {
		t.Logf("%s failed as it should: %s", unit, strings.Join(l, "\n"))
	}
	if unit == "eksboot-config.service" {
		// Refused before anything was written or started.
		if out, _ := b.exec("systemctl", "show", "--property=ExecMainStartTimestampMonotonic", "--value", "kubelet.service"); strings.TrimSpace(out) != "0" {
			t.Errorf("the kubelet was started (ExecMainStartTimestampMonotonic %s) although the config phase refused the user data", strings.TrimSpace(out))
		}
	}
}

// node is the part of a Node object the test reads.
type node struct {
	Metadata struct {
		Name        string            `json:"name"`
		UID         string            `json:"uid"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		ProviderID string `json:"providerID"`
		Taints     []struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Effect string `json:"effect"`
		} `json:"taints"`
	} `json:"spec"`
	Status struct {
		Capacity  map[string]string `json:"capacity"`
		Addresses []struct {
			Type    string `json:"type"`
			Address string `json:"address"`
		} `json:"addresses"`
		NodeInfo struct {
			KubeletVersion string `json:"kubeletVersion"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

// kubectl runs the real kubectl (built with the API server) in the box's network
// namespace against the box's API server, as the admin.
func kubectl(ctx context.Context, b *box, args ...string) (string, error) {
	ca := filepath.Join(b.root, "etc/e2e/pki/ca.crt")
	tokens, err := b.readRoot("etc/e2e/pki/tokens.csv")
	if err != nil {
		return "", err
	}
	var admin string
	for _, l := range strings.Split(tokens, "\n") {
		if f := strings.Split(l, ","); len(f) > 1 && f[1] == "e2e-admin" {
			admin = f[0]
		}
	}
	base := []string{
		filepath.Join(setup.apiBins, "kubectl"), "--server=https://127.0.0.1:443",
		"--tls-server-name=" + endpointHost, "--certificate-authority=" + ca, "--token=" + admin,
		"--kubeconfig=/dev/null", "--request-timeout=10s",
	}
	return b.hostInNet(ctx, append(base, args...)...)
}

// waitNode waits for the Node to register and returns it.
func waitNode(t *testing.T, ctx context.Context, b *box, name string) node {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	var lastErr error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		out, err := kubectl(ctx, b, "get", "node", name, "--output=json")
		if err == nil {
			var n node
			if err := json.Unmarshal([]byte(out), &n); err != nil {
				t.Fatalf("kubectl get node: %v\n%s", err, out)
			}
			return n
		}
		lastErr = err
		time.Sleep(time.Second)
	}
	nodes, _ := kubectl(ctx, b, "get", "nodes")
	t.Fatalf("Node %s did not register: %v\nnodes: %s\nkubelet:\n%s", name, lastErr, nodes, tail(b.journal("kubelet.service"), 40))
	return node{}
}

// checkNode checks the Node against the instance, the sample's expectations and
// what eksboot wrote.
func checkNode(t *testing.T, b *box, n node, inst imdstest.Instance, want expectation, wantMaxPods int) {
	t.Helper()
	args, err := b.readRoot("etc/systemd/system/kubelet.service.d/10-kubelet-args.conf")
	if err != nil {
		t.Fatal(err)
	}
	// The name eksboot chose (the kubelet's --hostname-override), here the
	// instance's private DNS name.
	chosen := regexp.MustCompile(`--hostname-override=(\S+?)['\s]`).FindStringSubmatch(args)
	if chosen == nil {
		t.Errorf("10-kubelet-args.conf has no --hostname-override:\n%s", args)
	} else if n.Metadata.Name != chosen[1] || n.Metadata.Name != inst.LocalHostname {
		t.Errorf("Node name %q; eksboot chose %q, the instance's name is %q", n.Metadata.Name, chosen[1], inst.LocalHostname)
	}
	if want := "aws:///" + inst.AvailabilityZone + "/" + inst.InstanceID; n.Spec.ProviderID != want {
		t.Errorf("spec.providerID %q, want %q", n.Spec.ProviderID, want)
	}
	if got := eksbootMaxPods(t, b); got != wantMaxPods {
		t.Errorf("eksboot's max pods (last --max-pods of the kubelet's flags, else kubelet-config.json): %d, want %d", got, wantMaxPods)
	}
	if got := n.Status.Capacity["pods"]; got != strconv.Itoa(wantMaxPods) {
		t.Errorf("status.capacity.pods %q, want %d", got, wantMaxPods)
	}
	for k, v := range want.NodeLabels {
		if got, ok := n.Metadata.Labels[k]; !ok || got != v {
			t.Errorf("label %s=%q, want %q", k, got, v)
		}
	}
	var taints []string
	for _, tt := range n.Spec.Taints {
		s := tt.Key
		if tt.Value != "" {
			s += "=" + tt.Value
		}
		taints = append(taints, s+":"+tt.Effect)
	}
	for _, w := range want.Taints {
		if !slices.Contains(taints, w) {
			t.Errorf("taint %s missing; the Node has %v", w, taints)
		}
	}
	var internal []string
	for _, a := range n.Status.Addresses {
		if a.Type == "InternalIP" {
			internal = append(internal, a.Address)
		}
	}
	if !slices.Equal(internal, []string{inst.LocalIPv4}) {
		t.Errorf("InternalIP addresses %v, want [%s]", internal, inst.LocalIPv4)
	}
	if got := n.Metadata.Annotations["alpha.kubernetes.io/provided-node-ip"]; got != inst.LocalIPv4 {
		t.Errorf("provided-node-ip annotation %q, want %s (--node-ip with --cloud-provider=external)", got, inst.LocalIPv4)
	}
	t.Logf("Node %s: kubelet %s, providerID %s, pods %s, %d labels, taints %v", n.Metadata.Name,
		n.Status.NodeInfo.KubeletVersion, n.Spec.ProviderID, n.Status.Capacity["pods"], len(n.Metadata.Labels), taints)
}

// eksbootMaxPods is the max pods the kubelet runs with, from eksboot's files: the
// last --max-pods of its flags (the kubelet takes the last), else maxPods of
// kubelet-config.json.
func eksbootMaxPods(t *testing.T, b *box) int {
	t.Helper()
	var flags string
	for _, f := range []string{"10-kubelet-args.conf", "30-kubelet-extra-args.conf"} {
		s, err := b.readRoot("etc/systemd/system/kubelet.service.d/" + f)
		if err == nil {
			flags += s + "\n"
		}
	}
	if m := regexp.MustCompile(`--max-pods[= ]([0-9]+)`).FindAllStringSubmatch(flags, -1); m != nil {
		n, _ := strconv.Atoi(m[len(m)-1][1])
		return n
	}
	s, err := b.readRoot("etc/kubernetes/kubelet/kubelet-config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MaxPods int `json:"maxPods"`
	}
	if err := json.Unmarshal([]byte(s), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.MaxPods
}

// eksbootFiles are the files eksboot writes on a node.
var eksbootFiles = []string{
	"etc/kubernetes/kubelet/kubelet-config.json",
	"etc/kubernetes/pki/ca.crt",
	"var/lib/kubelet/kubeconfig",
	"etc/containerd/config.toml",
	"etc/systemd/system/kubelet.service.d/10-kubelet-args.conf",
	"etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf",
}

// fileState is a file's content, inode and modification time: a rewrite with the
// same bytes changes the inode (eksboot renames into place) or the time.
type fileState struct {
	content string
	ino     uint64
	mtime   time.Time
}

func snapshot(t *testing.T, b *box) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	for _, f := range eksbootFiles {
		p := filepath.Join(b.root, f)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		content, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[f] = fileState{string(content), fi.Sys().(*syscall.Stat_t).Ino, fi.ModTime()}
	}
	return m
}

// checkSecondBoot: eksboot's files are the first boot's (same bytes, never
// rewritten), its units (if they ran) wrote nothing, and containerd and the kubelet
// were started once, by the boot, never restarted.
func checkSecondBoot(t *testing.T, b *box, before map[string]fileState) {
	t.Helper()
	after := snapshot(t, b)
	for f, was := range before {
		now, ok := after[f]
		switch {
		case !ok:
			t.Errorf("second boot: %s was removed", f)
		case now.content != was.content:
			t.Errorf("second boot: %s changed", f)
		case now.ino != was.ino || !now.mtime.Equal(was.mtime):
			t.Errorf("second boot: %s was rewritten (same bytes)", f)
		}
	}
	for _, unit := range []string{"eksboot-config.service", "eksboot-run.service", "cloud-final.service"} {
		if l := lines(b.journal(unit), "wrote"); len(l) > 0 {
			t.Errorf("second boot: %s wrote files:\n%s", unit, strings.Join(l, "\n"))
		}
	}
	for _, unit := range []string{"containerd.service", "kubelet.service"} {
		if starts := len(lines(b.journal(unit), "Started "+unit)); starts != 1 {
			t.Errorf("second boot: %s was started %d times, want once (by the boot)", unit, starts)
		}
	}
}
