package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/render"
	"github.com/eksboot/eksboot/render/sim"
	"github.com/eksboot/eksboot/userdata"
)

const sampleDir = "../testdata/userdata"

// expect is a sample's expect.json.
type expect struct {
	Entry            string            `json:"entry"`
	ClusterName      string            `json:"cluster_name"`
	Endpoint         string            `json:"apiserver_endpoint"`
	DNS              []string          `json:"dns_cluster_ip"`
	MaxPods          *float64          `json:"max_pods_in_kubelet_config"`
	KubeletExtraArgs *string           `json:"kubelet_extra_args"`
	Labels           map[string]string `json:"node_labels"`
	Taints           []string          `json:"taints"`
	// Refused is set when the node's kubelet would refuse what the sample gives it:
	// the error eksboot stops with, before it writes anything.
	Refused string `json:"refused"`
	// KubeletConfig are keys kubelet-config.json must hold, with their values
	// (those a script set before bootstrap.sh, which bootstrap.sh kept).
	KubeletConfig map[string]any `json:"kubelet_config"`
}

type sample struct {
	name string
	raw  []byte
	want expect
}

func loadSamples(t *testing.T) []sample {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(sampleDir, "*.expect.json"))
	if len(paths) == 0 {
		t.Fatal("no samples")
	}
	var out []sample
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".expect.json")
		var s sample
		s.name = name
		b, err := os.ReadFile(p)
		must(t, err)
		must(t, json.Unmarshal(b, &s.want))
		if s.raw, err = os.ReadFile(filepath.Join(sampleDir, name+".userdata")); errors.Is(err, os.ErrNotExist) {
			s.raw, err = os.ReadFile(filepath.Join(sampleDir, name+".userdata.gz"))
		}
		must(t, err)
		out = append(out, s)
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// errOffline is what offline's EC2 and EKS answer.
var errOffline = errors.New("not available: offline")

// offline makes init and bootstrap run like render: 2 CPUs (m5.large), no EC2 or EKS.
func offline(t *testing.T) {
	t.Helper()
	old := envHook
	t.Cleanup(func() { envHook = old })
	envHook = func(env *bootstrap.Env) {
		env.CPUs = func() int { return 2 }
		env.EC2 = func(context.Context, string, string, bool) (ec2api.API, error) { return nil, errOffline }
		env.EKS = func(context.Context, string, string, bool) (eksapi.API, error) { return nil, errOffline }
		env.Getenv = func(string) string { return "" }
		env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	}
}

// runNode boots a simulated m5.large (us-west-2) with the sample as its user data:
// `eksboot init` for NodeConfig samples, the bootstrap.sh shim with the script's
// command line for the others, on a root that holds the AL2 image's files as the
// scripts left them before the call (pre). It returns the files written.
func runNode(t *testing.T, s sample, c scriptCall) map[string][]byte {
	t.Helper()
	args := c.args
	inst := imdstest.DefaultInstance()
	inst.UserData = string(s.raw)
	srv, err := imdstest.NewServer(inst)
	must(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	for p, b := range c.pre {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, p), b, 0o644))
	}
	common := []string{"--root", dir, "--no-restart", "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL()}
	var argv []string
	if s.want.Entry == "nodeconfig" {
		argv = append([]string{"eksboot", "init"}, common...)
	} else {
		argv = append(append([]string{"/etc/eks/bootstrap.sh"}, args...), common...)
	}
	var stderr bytes.Buffer
	code := Main(argv, io.Discard, &stderr)
	tree, err := readTree(dir)
	must(t, err)
	written := 0
	for p, b := range tree {
		if pre, ok := c.pre[p]; !ok || !bytes.Equal(pre, b) {
			written++
		}
	}
	switch {
	case s.want.Refused != "":
		if code == 0 || !strings.Contains(stderr.String(), s.want.Refused) || written > 0 {
			t.Fatalf("%s: exit %d, %d files written, want it refused with %q, nothing written\n%s", argv[0], code, written, s.want.Refused, stderr.String())
		}
	case code != 0:
		t.Fatalf("%s: exit %d\n%s", argv[0], code, stderr.String())
	}
	return tree
}

// scriptCall is a sample's bootstrap.sh call: the command line the shim hands to
// eksboot, and the AL2 image's files (imagefixture.AL2: kubelet-config.json) as
// the scripts left them before it (sample 07 edits kubelet-config.json with jq
// first).
type scriptCall struct {
	args []string
	pre  map[string][]byte
}

// scriptArgs is a sample's bootstrap.sh call, as render's evaluation of its scripts
// finds it on the simulated m5.large (sample 04's eksctl scripts read IMDS and build
// it at boot; sample 02's sed hook edits the shim).
func scriptArgs(t *testing.T, s sample) scriptCall {
	t.Helper()
	parts, err := userdata.Parse(s.raw)
	must(t, err)
	image := map[string]sim.File{sim.BootstrapPath: {Data: assets.BootstrapShim(), Mode: 0o755}}
	for p, content := range (imagefixture.AL2{}).Files() {
		image[p] = sim.File{Data: []byte(content), Mode: 0o644}
	}
	ev, err := sim.Evaluate(context.Background(), parts, sim.Options{Image: image, Metadata: render.SimulatedMetadata("m5.large", "us-west-2")})
	must(t, err)
	if len(ev.Calls) != 1 {
		t.Fatalf("%d bootstrap.sh calls, want 1", len(ev.Calls))
	}
	c := ev.Calls[0]
	if len(c.Unknown) > 0 {
		t.Fatalf("%s: unknown before boot: %q", c.Where, c.Unknown)
	}
	pre := map[string][]byte{}
	for p := range (imagefixture.AL2{}).Files() {
		pre[p] = c.Node.Files[p].Data
	}
	return scriptCall{args: c.Eksboot, pre: pre}
}

// TestSamples boots a node with every sample and checks what its expect.json says.
func TestSamples(t *testing.T) {
	offline(t)
	for _, s := range loadSamples(t) {
		t.Run(s.name, func(t *testing.T) {
			var call scriptCall
			if s.want.Entry == "bootstrap.sh" {
				call = scriptArgs(t, s)
			}
			node := runNode(t, s, call)
			if s.want.Refused == "" {
				checkNode(t, node, s.want)
			}
		})
	}
}

// TestRenderAgrees: render prints what init and the shim write, file for file.
func TestRenderAgrees(t *testing.T) {
	offline(t)
	for _, s := range loadSamples(t) {
		t.Run(s.name, func(t *testing.T) {
			var call scriptCall
			if s.want.Entry == "bootstrap.sh" {
				call = scriptArgs(t, s)
			}
			node := runNode(t, s, call)
			r, err := render.Render(context.Background(), s.raw, render.Options{
				InstanceType: "m5.large", Region: "us-west-2",
				KubeletVersion: kubeletconf.Version{Major: 1, Minor: 32, Patch: 9}, Profile: "al2", Log: zapNop(),
			})
			if s.want.Refused != "" {
				if err == nil || !strings.Contains(err.Error(), s.want.Refused) {
					t.Fatalf("render: %v, want it refused with %q", err, s.want.Refused)
				}
				return
			}
			must(t, err)
			got, flags := r.Tree, r.Flags
			if !reflect.DeepEqual(keys(got), keys(node)) {
				t.Fatalf("render wrote %q\nthe node got %q", keys(got), keys(node))
			}
			for p := range node {
				if !bytes.Equal(got[p], node[p]) {
					t.Errorf("%s differs:\nrender:\n%s\nnode:\n%s", p, got[p], node[p])
				}
			}
			if flags != kubeletFlags(node) {
				t.Errorf("flags %q, node %q", flags, kubeletFlags(node))
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
