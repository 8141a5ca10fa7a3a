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

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/kubeletconf"
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
// command line for the others. It returns the files written.
func runNode(t *testing.T, s sample, args []string) map[string][]byte {
	t.Helper()
	inst := imdstest.DefaultInstance()
	inst.UserData = string(s.raw)
	srv, err := imdstest.NewServer(inst)
	must(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	common := []string{"--root", dir, "--no-restart", "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL()}
	var argv []string
	if s.want.Entry == "nodeconfig" {
		argv = append([]string{"eksboot", "init"}, common...)
	} else {
		argv = append(append([]string{"/etc/eks/bootstrap.sh"}, args...), common...)
	}
	var stderr bytes.Buffer
	if code := Main(argv, io.Discard, &stderr); code != 0 {
		t.Fatalf("%s: exit %d\n%s", argv[0], code, stderr.String())
	}
	tree, err := readTree(dir)
	must(t, err)
	return tree
}

// scriptArgs is the bootstrap.sh command line of a sample, as eksboot reads it; for
// sample 04, whose arguments are computed by eksctl's scripts at boot (render reports
// that it cannot know them), the command line those scripts build.
func scriptArgs(t *testing.T, s sample) []string {
	t.Helper()
	parts, err := userdata.Parse(s.raw)
	must(t, err)
	call, err := userdata.FindBootstrapCall(parts)
	must(t, err)
	if call != nil {
		return call.Args
	}
	if !strings.HasPrefix(s.name, "04-") {
		t.Fatal("no bootstrap.sh command line")
	}
	ca := regexpFind(t, parts[0].Body, "B64_CLUSTER_CA=(\\S+)")
	return []string{s.want.ClusterName, "--apiserver-endpoint", s.want.Endpoint, "--b64-cluster-ca", ca,
		"--dns-cluster-ip", strings.Join(s.want.DNS, ","), "--kubelet-extra-args", *s.want.KubeletExtraArgs,
		"--container-runtime", "containerd"}
}

// TestSamples boots a node with every sample and checks what its expect.json says.
func TestSamples(t *testing.T) {
	offline(t)
	for _, s := range loadSamples(t) {
		t.Run(s.name, func(t *testing.T) {
			var args []string
			if s.want.Entry == "bootstrap.sh" {
				args = scriptArgs(t, s)
			}
			checkNode(t, runNode(t, s, args), s.want)
		})
	}
}

// TestRenderAgrees: render prints what init and the shim write, file for file.
func TestRenderAgrees(t *testing.T) {
	offline(t)
	for _, s := range loadSamples(t) {
		t.Run(s.name, func(t *testing.T) {
			var args []string
			if s.want.Entry == "bootstrap.sh" {
				args = scriptArgs(t, s)
			}
			node := runNode(t, s, args)
			got, flags, _, err := render(s.raw, "m5.large", "us-west-2", kubeletconf.Version{Major: 1, Minor: 32, Patch: 9}, "al2", zapNop())
			if strings.HasPrefix(s.name, "04-") {
				if err == nil || !strings.Contains(err.Error(), "no NodeConfig part and no /etc/eks/bootstrap.sh command line") {
					t.Fatalf("render of eksctl's cloud-config: %v; want it to say it finds no command line", err)
				}
				return
			}
			must(t, err)
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
