//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/imds/imdstest"
)

// k8s135 is the AL2023 boxes' older kubelet (tools/k8s1.35).
var k8s135 = kubernetes{version: "1.35.4", module: "k8s1.35", cmds: []string{"k8s.io/kubernetes/cmd/kubelet"}}

// podBox is a node that must run a pod: an image profile, its containerd and a
// kubelet, booted with one of cases' user data.
type podBox struct {
	name        string
	profile     string // "al2023" (the Debian root as it is) or "al2" (os-release of Amazon Linux 2)
	containerd2 bool   // containerd 2 from its Go module; else Debian's containerd 1.6
	k           kubernetes
	sample      string // a sample of cases (its first entry without a name)
}

var podBoxes = []podBox{
	{"al2023-containerd2-kubelet-1.35", "al2023", true, k8s135, "13-eks-mng-al2023-merged-by-eks"},
	{"al2023-containerd2-kubelet-1.37", "al2023", true, k8sNew, "13-eks-mng-al2023-merged-by-eks"},
	{"al2023-containerd2-kubelet-1.38", "al2023", true, k8sNext, "13-eks-mng-al2023-merged-by-eks"},
	{"al2-containerd1-kubelet-1.34", "al2", false, k8sOld, "05-handwritten-custom-ami-script"},
}

var (
	containerd2Mu  sync.Mutex
	containerd2Bin string
)

// containerd2Dir returns the folder of containerd2Binaries, building it the first
// time.
func containerd2Dir(t *testing.T) string {
	containerd2Mu.Lock()
	defer containerd2Mu.Unlock()
	if containerd2Bin == "" {
		dir, err := containerd2Binaries(t)
		if err != nil {
			t.Fatal(err)
		}
		containerd2Bin = dir
		if out, err := exec.Command(filepath.Join(dir, "containerd"), "--version").Output(); err == nil {
			if v := regexp.MustCompile(` (2\.[0-9]+\.[0-9]+)`).FindSubmatch(out); v != nil {
				useBinary("containerd-"+string(v[1]), filepath.Join(dir, "containerd"))
			}
		}
	}
	return containerd2Bin
}

// TestPodOnANode boots each podBox and checks, through the API server, that the Node
// becomes Ready and runs a pod: its image a local one, its container started by the
// box's containerd with systemd cgroups, then deleted. Each box's boot timeline is
// printed at the end.
func TestPodOnANode(t *testing.T) {
	bl := prepare(t)
	var mu sync.Mutex
	var timelines []string
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, tl := range timelines {
			t.Log(tl)
		}
	})
	for i, pb := range podBoxes {
		t.Run(pb.name, func(t *testing.T) {
			t.Parallel()
			tl := runPodBox(t, bl, pb, fmt.Sprintf("e2e-pod-%d", i))
			mu.Lock()
			timelines = append(timelines, tl)
			mu.Unlock()
		})
	}
}

// sampleUserData returns the user data of the named sample in cases (its entry
// without a name), edited as cases says, with the test's CA.
func sampleUserData(t *testing.T, bl *build, sample string) string {
	t.Helper()
	var c *userDataCase
	for i := range cases {
		if cases[i].sample == sample && cases[i].name == "" {
			c = &cases[i]
		}
	}
	if c == nil {
		t.Fatalf("no case %s", sample)
	}
	ud, err := os.ReadFile(filepath.Join(bl.repo, "testdata/userdata", sample+".userdata"))
	if err != nil {
		t.Fatal(err)
	}
	userData := sampleCA.ReplaceAllLiteralString(string(ud), base64.StdEncoding.EncodeToString(bl.pki.caCert))
	for _, e := range c.edits {
		if n := strings.Count(userData, e[0]); n != 1 {
			t.Fatalf("%s: edit %q: found %d times, want once", sample, e[0], n)
		}
		userData = strings.Replace(userData, e[0], e[1], 1)
	}
	return userData
}

func runPodBox(t *testing.T, bl *build, pb podBox, machine string) string {
	inst := imdstest.DefaultInstance()
	inst.UserData = sampleUserData(t, bl, pb.sample)
	b := newBox(t, machine, bl.base)
	kdir := kubeletDir(t, bl, pb.k)
	provision(t, b, bl, kdir, inst, endpointHost)
	if pb.k.version != k8sNew.version && slices.Contains(pb.k.cmds, "k8s.io/kubernetes/cmd/kube-apiserver") {
		// The kubelet's own release's API server: a kubelet newer than its API server
		// is outside the version-skew policy.
		copyFile(t, filepath.Join(kdir, "kube-apiserver"), filepath.Join(b.root, "usr/local/bin/kube-apiserver"), 0o755)
	}
	provisionPods(t, b, bl, pb)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	state := b.boot(ctx)
	defer func() {
		if t.Failed() {
			t.Logf("journal of the boot: %s", b.saveJournal())
		}
	}()
	if state != "running" {
		failed, _ := b.exec("systemctl", "--failed", "--no-pager", "--no-legend")
		t.Fatalf("systemctl is-system-running: %s, want running; failed units:\n%s", state, failed)
	}
	checkActive(t, b)
	if pb.containerd2 {
		checkContainerd2(t, b)
	}
	ready := waitNodeReady(t, ctx, b, inst.LocalHostname)
	if out, err := kubectl(ctx, b, "version", "--output=json"); err == nil {
		var v struct {
			Server struct {
				GitVersion string `json:"gitVersion"`
			} `json:"serverVersion"`
		}
		_ = json.Unmarshal([]byte(out), &v)
		t.Logf("API server %s, kubelet %s", v.Server.GitVersion, pb.k.version)
	}
	pod := runPod(t, ctx, b, inst.LocalHostname, pb)
	return timeline(t, b, pb.name, start, ready, pod)
}

// provisionPods makes the box into pb's node image, after provision: its
// containerd, the CNI plugins and their configuration, and the local images.
func provisionPods(t *testing.T, b *box, bl *build, pb podBox) {
	t.Helper()
	if pb.containerd2 {
		dir := containerd2Dir(t)
		// Over Debian's containerd 1.6, where its unit runs it.
		for _, bin := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
			copyFile(t, filepath.Join(dir, bin), filepath.Join(b.root, "usr/bin", bin), 0o755)
		}
		// As the AL2023 image build does (install-worker.sh); eksboot reads it.
		out, err := exec.Command(filepath.Join(dir, "containerd"), "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		b.write("etc/eks/containerd-version.txt", 0o644, string(out))
	}
	if pb.profile == "al2" {
		// /etc/os-release is a link to /usr/lib/os-release: the file replaces it.
		if err := os.Remove(filepath.Join(b.root, "etc/os-release")); err != nil {
			t.Fatal(err)
		}
		b.write("etc/os-release", 0o644, "NAME=\"Amazon Linux\"\nVERSION=\"2\"\nID=\"amzn\"\nID_LIKE=\"centos rhel fedora\"\nVERSION_ID=\"2\"\nPRETTY_NAME=\"Amazon Linux 2 (make e2e: a Debian root)\"\n")
	}
	// This machine gives no process CAP_SYS_RESOURCE (an EC2 instance does), so no
	// process may lower an oom_score_adj below 0 nor raise a hard rlimit (RLIMIT_NOFILE
	// stops at 20000 here). runc would fail to start a pod's sandbox at containerd's
	// oom_score_adj -998 ("failed to update /proc/self/oom_score_adj: Permission
	// denied") and, on AL2023, its container at the base runtime spec's RLIMIT_NOFILE
	// 65536/1048576 ("error setting rlimit type 7: operation not permitted").
	// containerd's restrict_oom_score_adj keeps its containers' scores at or above its
	// own, and the runc runtime's base spec is eksboot's with each rlimit capped at
	// what the box may set (e2e-base-runtime-spec, run before containerd). Neither is
	// eksboot's file: containerd 2 imports /etc/containerd/config.d; containerd 1.6
	// replaces a plugin's whole table with an import's, so the AL2 box's image ships
	// its containerd template instead, as the AL2 AMI does
	// (/etc/eks/containerd/containerd-config.toml, which eksboot reads).
	if pb.containerd2 {
		b.write("etc/containerd/config.d/50-e2e-no-sys-resource.toml", 0o644, `# make e2e: no CAP_SYS_RESOURCE on this machine.
version = 3
[plugins.'io.containerd.cri.v1.runtime']
restrict_oom_score_adj = true
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
base_runtime_spec = '/run/e2e/base-runtime-spec.json'
`)
		b.write("usr/local/bin/e2e-base-runtime-spec", 0o755, `#!/usr/bin/python3
# make e2e: eksboot's base runtime spec with each rlimit capped at this box's hard
# limit (no CAP_SYS_RESOURCE on this machine), for containerd's runc runtime.
import json, os, resource
spec = json.load(open("/etc/containerd/base-runtime-spec.json"))
for r in spec.get("process", {}).get("rlimits", []):
    _, hard = resource.getrlimit(getattr(resource, r["type"]))
    if hard != resource.RLIM_INFINITY:
        r["hard"], r["soft"] = min(r["hard"], hard), min(r["soft"], hard)
os.makedirs("/run/e2e", exist_ok=True)
with open("/run/e2e/base-runtime-spec.json", "w") as f:
    json.dump(spec, f, indent=2)
`)
		b.write("etc/systemd/system/containerd.service.d/49-e2e-base-runtime-spec.conf", 0o644,
			"# make e2e: no CAP_SYS_RESOURCE on this machine.\n[Service]\nExecStartPre=/usr/local/bin/e2e-base-runtime-spec\n")
	} else {
		tmpl := strings.Replace(assets.ContainerdConfig, "[plugins.\"io.containerd.grpc.v1.cri\"]\n",
			"[plugins.\"io.containerd.grpc.v1.cri\"]\n# make e2e: no CAP_SYS_RESOURCE on this machine.\nrestrict_oom_score_adj = true\n", 1)
		if tmpl == assets.ContainerdConfig {
			t.Fatal("the containerd 1 template has no [plugins.\"io.containerd.grpc.v1.cri\"] table")
		}
		b.write("etc/eks/containerd/containerd-config.toml", 0o644, tmpl)
	}
	// The CNI plugins where the EKS images have them (Debian installs them in
	// /usr/lib/cni), and a network of the box's own: a bridge in its network
	// namespace, addresses from host-local; containerd runs loopback itself.
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		copyFile(t, filepath.Join(b.root, "usr/lib/cni", p), filepath.Join(b.root, "opt/cni/bin", p), 0o755)
	}
	b.write("etc/cni/net.d/10-e2e.conflist", 0o644, `{
  "cniVersion": "1.0.0",
  "name": "e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "e2e0",
      "isGateway": false,
      "ipMasq": false,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]]}
    }
  ]
}
`)
	// The sandbox image as AL2023's image build caches it, and the pod's image: an
	// archive imported into containerd's k8s.io namespace whenever containerd
	// starts (the image build imports it once into the image's containerd store;
	// the box's store is a fresh folder at every box).
	b.write("etc/eks/pause.tar", 0o644, "")
	if err := writeOCIArchive(bl.pause, "pause", filepath.Join(b.root, "etc/eks/pause.tar"), al2023Pause); err != nil {
		t.Fatal(err)
	}
	// The pod's image is another image (the program under another name, so another
	// digest): containerd would otherwise name the pod's container by any of the
	// image's names.
	b.write("etc/e2e/pod-image.tar", 0o644, "")
	if err := writeOCIArchive(bl.pause, "pod", filepath.Join(b.root, "etc/e2e/pod-image.tar"), podImage); err != nil {
		t.Fatal(err)
	}
	imports := "ExecStart=/usr/bin/ctr --namespace k8s.io images import /etc/eks/pause.tar\n" +
		"ExecStart=/usr/bin/ctr --namespace k8s.io images import /etc/e2e/pod-image.tar\n"
	if pb.profile == "al2023" {
		// AL2023's image has them in containerd's store from its build: nothing waits
		// for them at boot. Here they are imported beside the boot, off the kubelet's
		// path (it needs them for a pod, not to become Ready); runPod waits for them.
		b.write("etc/systemd/system/e2e-images.service", 0o644, "# make e2e: the image build's cached images (never pulled).\n"+
			"[Unit]\nDescription=e2e: the image build's cached images\nRequires=containerd.service\nAfter=containerd.service\n\n"+
			"[Service]\nType=oneshot\nRemainAfterExit=yes\n"+imports+"\n[Install]\nWantedBy=multi-user.target\n")
		b.enable("e2e-images.service", "multi-user.target")
		return
	}
	dropIn := "# make e2e: the image build's cached images (never pulled).\n[Service]\n" + strings.ReplaceAll(imports, "ExecStart=", "ExecStartPost=")
	// AL2: at each start of containerd, as the AMI's sandbox-image.service does after
	// it. That unit pulls the sandbox image that containerd's config names, with the
	// node's ECR credentials; the box has no registry, so the cached image is tagged
	// with that name instead.
	b.write("usr/local/bin/e2e-sandbox-image", 0o755, `#!/bin/sh
# make e2e: the AL2 image's sandbox-image.service without a registry: the cached
# pause image, tagged with the sandbox_image containerd's config names.
set -eu
image=$(sed -n 's/^ *sandbox_image *= *"\(.*\)"/\1/p' /etc/containerd/config.toml)
if [ -z "$image" ]; then
  echo "no sandbox_image in /etc/containerd/config.toml (not eksboot's yet): nothing to tag"
  exit 0
fi
exec /usr/bin/ctr --namespace k8s.io images tag --force `+al2023Pause+` "$image"
`)
	dropIn += "ExecStartPost=/usr/local/bin/e2e-sandbox-image\n"
	b.write("etc/systemd/system/containerd.service.d/50-e2e-images.conf", 0o644, dropIn)
}

// checkContainerd2: the box runs containerd 2 and it reports no deprecated setting
// (the config eksboot wrote uses the keys this containerd reads).
func checkContainerd2(t *testing.T, b *box) {
	t.Helper()
	v, err := b.exec("ctr", "version")
	if err != nil || !regexp.MustCompile(`Server:\s+Version:\s+2\.`).MatchString(v) {
		t.Errorf("ctr version: %v, want a containerd 2 server:\n%s", err, v)
	}
	out, err := b.exec("ctr", "deprecations", "list")
	if err != nil {
		t.Errorf("ctr deprecations list: %v", err)
	}
	var deprecated []string
	for _, l := range lines(out, "io.containerd.deprecation/") {
		// containerd 2.2 deprecates cgroup v1, a property of the host (this
		// machine's), not of any setting.
		if strings.HasPrefix(l, "io.containerd.deprecation/cgroup-v1 ") && !hostCgroupV2() {
			t.Logf("containerd on this cgroup v1 host: %s", l)
			continue
		}
		deprecated = append(deprecated, l)
	}
	if len(deprecated) > 0 {
		cfg, _ := b.readRoot("etc/containerd/config.toml")
		t.Errorf("containerd reports deprecated settings:\n%s\nconfig.toml:\n%s", out, cfg)
	}
}

// hostCgroupV2 reports whether this machine runs the unified cgroup hierarchy.
func hostCgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// nodeStatus is the part of a Node the pod boxes read.
type nodeStatus struct {
	Metadata struct {
		CreationTimestamp time.Time `json:"creationTimestamp"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type, Status, Reason, Message string
			LastTransitionTime            time.Time `json:"lastTransitionTime"`
		} `json:"conditions"`
	} `json:"status"`
}

// readyAt is when the Node was registered and became Ready.
type readyAt struct{ registered, ready time.Time }

// waitNodeReady waits for the Node's Ready condition to be True.
func waitNodeReady(t *testing.T, ctx context.Context, b *box, name string) readyAt {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	var last string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		out, err := kubectl(ctx, b, "get", "node", name, "--output=json")
		if err == nil {
			var n nodeStatus
			if err := json.Unmarshal([]byte(out), &n); err != nil {
				t.Fatalf("kubectl get node: %v", err)
			}
			for _, c := range n.Status.Conditions {
				if c.Type == "Ready" {
					last = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
					if c.Status == "True" {
						t.Logf("Node %s: %s", name, last)
						return readyAt{n.Metadata.CreationTimestamp, c.LastTransitionTime}
					}
				}
			}
		} else {
			last = err.Error()
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("Node %s did not become Ready: %s\nkubelet:\n%s\ncontainerd:\n%s", name, last,
		tail(b.journal("kubelet.service"), 30), tail(b.journal("containerd.service"), 20))
	return readyAt{}
}

// podStatus is the part of a Pod the test reads.
type podStatus struct {
	Status struct {
		Phase             string `json:"phase"`
		ContainerStatuses []struct {
			ContainerID string `json:"containerID"`
			Image       string `json:"image"`
			State       struct {
				Running *struct {
					StartedAt time.Time `json:"startedAt"`
				} `json:"running"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// runPod creates a pod bound to the node (the box has no scheduler), its image the
// local podImage and never pulled, waits for it to run, checks its container in
// containerd (the runc shim, systemd cgroups, the sandbox image), deletes it and
// waits for it to go. It returns when the container started.
func runPod(t *testing.T, ctx context.Context, b *box, nodeName string, pb podBox) time.Time {
	t.Helper()
	manifest := filepath.Join(b.dir, "pod.json")
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "e2e-pod", "namespace": "default"},
		"spec": map[string]any{
			"nodeName":                      nodeName,
			"automountServiceAccountToken":  false,
			"terminationGracePeriodSeconds": 10,
			"tolerations":                   []any{map[string]any{"operator": "Exists"}},
			"containers": []any{map[string]any{
				"name": "pause", "image": podImage, "imagePullPolicy": "Never",
			}},
		},
	}
	j, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, j, 0o644); err != nil {
		t.Fatal(err)
	}
	if pb.profile == "al2023" {
		if out, err := b.execCtx(ctx, "sh", "-c", "until systemctl is-active --quiet e2e-images.service; do systemctl is-failed --quiet e2e-images.service && exit 1; sleep 0.2; done"); err != nil {
			t.Fatalf("the cached images were not imported: %v %s\n%s", err, out, tail(b.journal("e2e-images.service"), 20))
		}
	}
	// The ServiceAccount admission wants the namespace's default account, which the
	// controller manager (not in the box) would make.
	if out, err := kubectl(ctx, b, "create", "serviceaccount", "default", "--namespace=default"); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		t.Fatalf("kubectl create serviceaccount: %v %s", err, out)
	}
	if out, err := kubectl(ctx, b, "create", "--filename="+manifest); err != nil {
		t.Fatalf("kubectl create pod: %v %s", err, out)
	}
	deadline := time.Now().Add(3 * time.Minute)
	var p podStatus
	var last string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		out, err := kubectl(ctx, b, "get", "pod", "e2e-pod", "--namespace=default", "--output=json")
		last = fmt.Sprint(err)
		if err == nil {
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatal(err)
			}
			last = p.Status.Phase
			if p.Status.Phase == "Running" && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil {
				break
			}
		}
		time.Sleep(time.Second)
	}
	if p.Status.Phase != "Running" || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil {
		events, _ := kubectl(ctx, b, "get", "events", "--namespace=default", "--field-selector=involvedObject.name=e2e-pod")
		t.Fatalf("pod e2e-pod is not Running (last: %s)\nevents:\n%s\nkubelet:\n%s\ncontainerd:\n%s", last, events,
			tail(b.journal("kubelet.service"), 25), tail(b.journal("containerd.service"), 25))
	}
	cs := p.Status.ContainerStatuses[0]
	id, ok := strings.CutPrefix(cs.ContainerID, "containerd://")
	if !ok {
		t.Errorf("container ID %q: want containerd://<id>", cs.ContainerID)
	}
	checkPodContainer(t, b, id, pb)

	if out, err := kubectl(ctx, b, "delete", "pod", "e2e-pod", "--namespace=default", "--wait=true", "--timeout=90s"); err != nil {
		t.Fatalf("kubectl delete pod: %v %s", err, out)
	}
	if out, err := kubectl(ctx, b, "get", "pod", "e2e-pod", "--namespace=default", "--ignore-not-found", "--output=name"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("pod e2e-pod after its deletion: %q %v", out, err)
	}
	if out, _ := b.exec("ctr", "--namespace", "k8s.io", "tasks", "ls"); strings.Contains(out, id) && strings.Contains(lines(out, id)[0], "RUNNING") {
		t.Errorf("the pod's container %s still runs after the pod was deleted:\n%s", id, out)
	}
	t.Logf("pod e2e-pod ran (container %.12s) and was deleted", id)
	return cs.State.Running.StartedAt
}

// checkPodContainer: containerd ran the pod's container with the runc shim in a
// systemd scope under the kubepods slice, the pod's sandbox from the sandbox image
// eksboot pinned, and pulled no image.
func checkPodContainer(t *testing.T, b *box, id string, pb podBox) {
	t.Helper()
	info, err := b.exec("ctr", "--namespace", "k8s.io", "containers", "info", id)
	if err != nil {
		t.Fatalf("ctr containers info: %v", err)
	}
	var c struct {
		Image   string
		Runtime struct{ Name string }
		Spec    struct {
			Linux struct {
				CgroupsPath string `json:"cgroupsPath"`
			} `json:"linux"`
		}
	}
	// ctr prints its warnings (containerd 2.2's cgroup v1 one) before the JSON.
	if i := strings.Index(info, "{"); i > 0 {
		info = info[i:]
	}
	if err := json.Unmarshal([]byte(info), &c); err != nil {
		t.Fatalf("ctr containers info: %v\n%s", err, info)
	}
	if c.Image != podImage {
		t.Errorf("the pod's container runs image %q, want %s", c.Image, podImage)
	}
	if c.Runtime.Name != "io.containerd.runc.v2" {
		t.Errorf("the pod's container runtime %q, want io.containerd.runc.v2", c.Runtime.Name)
	}
	// The systemd cgroup driver's form, slice:prefix:name (cgroupfs: a path).
	if !regexp.MustCompile(`^kubepods[-a-z0-9_]*\.slice:cri-containerd:` + regexp.QuoteMeta(id) + `$`).MatchString(c.Spec.Linux.CgroupsPath) {
		t.Errorf("the pod's container cgroupsPath %q, want kubepods-…slice:cri-containerd:%s (systemd cgroups)", c.Spec.Linux.CgroupsPath, id)
	}
	tasks, err := b.exec("ctr", "--namespace", "k8s.io", "tasks", "ls")
	if err != nil {
		t.Fatal(err)
	}
	var pid string
	for _, l := range lines(tasks, id) {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == id && f[2] == "RUNNING" {
			pid = f[1]
		}
	}
	if cg, err := b.exec("cat", "/proc/"+pid+"/cgroup"); pid == "" || err != nil || !strings.Contains(cg, "/cri-containerd-"+id+".scope") {
		t.Errorf("the pod's process (PID %q in the box) is not in the systemd scope cri-containerd-%s.scope: %v\n%s\n%s", pid, id, err, cg, tasks)
	}
	if pb.profile == "al2023" {
		// The base runtime spec's RLIMIT_NOFILE (65536/1048576), at most the box's
		// hard limit (see provisionPods); containerd's own default is 1024.
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		soft, hard := min(uint64(65536), lim.Max), min(uint64(1048576), lim.Max)
		limits, err := b.exec("cat", "/proc/"+pid+"/limits")
		want := regexp.MustCompile(fmt.Sprintf(`Max open files\s+%d\s+%d\s`, soft, hard))
		if err != nil || !want.MatchString(limits) {
			t.Errorf("the pod's process has not the base runtime spec's RLIMIT_NOFILE %d/%d: %v\n%s", soft, hard, err, limits)
		}
	}
	want := al2023Pause
	if pb.profile == "al2" {
		cfg, _ := b.readRoot("etc/containerd/config.toml")
		m := regexp.MustCompile(`(?m)^\s*sandbox_image\s*=\s*"(.*)"`).FindStringSubmatch(cfg)
		if m == nil {
			t.Fatalf("config.toml names no sandbox_image:\n%s", cfg)
		}
		want = m[1]
	}
	containers, _ := b.exec("ctr", "--namespace", "k8s.io", "containers", "ls")
	if len(lines(containers, want)) == 0 {
		t.Errorf("no container runs the sandbox image %s:\n%s", want, containers)
	}
	if l := lines(b.journal("containerd.service"), "PullImage"); len(l) > 0 {
		t.Errorf("containerd pulled an image:\n%s", strings.Join(l, "\n"))
	}
}

// timeline is the box's boot, each step as seconds from the box's start (when
// systemd-nspawn was started): systemd's own start, eksboot's and cloud-init's
// units done, the kubelet started (from systemd's timestamps in the box), the Node
// registered and Ready and the pod's container started (from the API server's,
// whose resolution is a second), and how long eksboot's units ran: the config
// phase, which the kubelet is ordered after, and the run phase, whose check that the
// kubelet stays up follows the kubelet's start.
func timeline(t *testing.T, b *box, name string, start time.Time, r readyAt, podStarted time.Time) string {
	t.Helper()
	at := func(unit, prop string) time.Time {
		args := []string{"systemctl", "show", "--timestamp=us+utc", "--property=" + prop, "--value"}
		if unit != "" {
			args = append(args, unit)
		}
		out, err := b.exec(args...)
		if err != nil {
			return time.Time{}
		}
		ts, err := time.Parse("Mon 2006-01-02 15:04:05.000000 MST", strings.TrimSpace(out))
		if err != nil {
			return time.Time{}
		}
		return ts
	}
	steps := []struct {
		what string
		when time.Time
	}{
		{"systemd up", at("", "UserspaceTimestamp")},
		{"eksboot-config done", at("eksboot-config.service", "ActiveEnterTimestamp")},
		{"cloud-init final", at("cloud-final.service", "ActiveEnterTimestamp")},
		{"eksboot-run done", at("eksboot-run.service", "ActiveEnterTimestamp")},
		{"kubelet started", at("kubelet.service", "ExecMainStartTimestamp")},
		{"Node registered", r.registered},
		{"Node Ready", r.ready},
		{"Pod Running", podStarted},
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "timeline %s (s from the box's start):", name)
	for _, s := range steps {
		if s.when.IsZero() {
			fmt.Fprintf(&sb, " %s ?;", s.what)
			continue
		}
		fmt.Fprintf(&sb, " %s %.1f;", s.what, s.when.Sub(start).Seconds())
	}
	for i, u := range []string{"eksboot-config.service", "eksboot-run.service"} {
		if from, to := at(u, "InactiveExitTimestamp"), at(u, "ActiveEnterTimestamp"); !from.IsZero() && !to.IsZero() {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, " %s ran %.2fs", strings.TrimSuffix(u, ".service"), to.Sub(from).Seconds())
		}
	}
	return sb.String()
}
