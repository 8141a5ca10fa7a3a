package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/rootfs"
)

// goldenDir holds bootstrap.sh's outputs for a set of cases (see testdata/README.md).
const goldenDir = "../testdata/golden"

// goldenCase is a case.json.
type goldenCase struct {
	Name           string            `json:"name"`
	Args           []string          `json:"args"`
	KubeletVersion string            `json:"kubelet_version"`
	NProc          string            `json:"nproc"`
	Env            map[string]string `json:"env"`
	Files          map[string]string `json:"files"`
	IMDS           imdstest.Instance `json:"imds"`
	DescribeInst   *struct {
		Reservations []struct {
			Instances []struct {
				InstanceID     string `json:"InstanceId"`
				PrivateDNSName string `json:"PrivateDnsName"`
			}
		}
	} `json:"aws_describe_instances"`
	DescribeTypes *struct {
		Hypervisor  string
		CpuCount    int
		NetworkInfo struct {
			Ipv4AddressesPerInterface int
			MaximumNetworkInterfaces  int
			DefaultNetworkCardIndex   int
			NetworkCards              []struct {
				NetworkCardIndex         int
				MaximumNetworkInterfaces int
			}
		}
	} `json:"aws_describe_instance_types"`
}

func loadGoldenCases(t *testing.T) []goldenCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "*", "case.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases in %s: %v", goldenDir, err)
	}
	var cases []goldenCase
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var c goldenCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		rc, err := os.ReadFile(filepath.Join(filepath.Dir(p), "exit_code"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(rc)) == "0" {
			cases = append(cases, c)
		}
	}
	return cases
}

// fakeAWS starts the fake IMDS and EC2 for a case and points the AWS SDK at them.
func fakeAWS(t *testing.T, c goldenCase) (*imdstest.Server, *ec2test.Server) {
	t.Helper()
	metadata, err := imdstest.NewServer(c.IMDS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { metadata.Close() })
	ec2, err := ec2test.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ec2.Close() })
	if c.DescribeInst == nil {
		ec2.SetError("DescribeInstances", 403, "UnauthorizedOperation", "You are not authorized to perform this operation.")
	} else {
		for _, r := range c.DescribeInst.Reservations {
			for _, i := range r.Instances {
				ec2.AddInstance(i.InstanceID, i.PrivateDNSName)
			}
		}
	}
	if d := c.DescribeTypes; d != nil {
		enis := d.NetworkInfo.MaximumNetworkInterfaces
		for _, card := range d.NetworkInfo.NetworkCards {
			if card.NetworkCardIndex == d.NetworkInfo.DefaultNetworkCardIndex {
				enis = card.MaximumNetworkInterfaces
			}
		}
		ec2.AddInstanceType(c.IMDS.InstanceType, maxpods.TypeInfo{Hypervisor: d.Hypervisor, VCPUs: d.CpuCount, ENIs: enis, IPv4PerENI: d.NetworkInfo.Ipv4AddressesPerInterface})
	}
	t.Setenv("AWS_ENDPOINT_URL_EC2", ec2.URL())
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFAKE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return metadata, ec2
}

// runCase runs eksboot in-process on a golden case into a fresh root and returns it.
func runCase(t *testing.T, c goldenCase, log *zap.Logger) (string, error) {
	t.Helper()
	metadata, _ := fakeAWS(t, c)
	dir := t.TempDir()
	for p, content := range c.Files {
		must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
	}
	root, err := rootfs.New(dir)
	must(t, err)
	args := append(append([]string{}, c.Args...), "--root", dir, "--no-restart",
		"--kubelet-version", c.KubeletVersion, "--imds-endpoint", metadata.URL())
	o, err := Parse(args, func(k string) string { return c.Env[k] })
	if err != nil {
		return dir, err
	}
	env := DefaultEnv(root, log, &bytes.Buffer{}, &bytes.Buffer{})
	cpus, err := strconv.Atoi(c.NProc)
	must(t, err)
	env.CPUs = func() int { return cpus }
	env.Getenv = func(k string) string { return c.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	return dir, Run(context.Background(), o, env)
}

// TestGolden runs eksboot on the inputs of every golden case and compares its files
// with what bootstrap.sh wrote: kubelet-config.json as JSON (keys the kubelet treats as
// unset may be missing), the drop-ins, kubeconfig, CA and containerd config byte for byte.
func TestGolden(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			core, logs := observer.New(zap.InfoLevel)
			dir, err := runCase(t, c, zap.New(core))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := filepath.Join(goldenDir, c.Name)
			for _, rel := range []string{
				"var/lib/kubelet/kubeconfig",
				"etc/kubernetes/pki/ca.crt",
				"etc/systemd/system/kubelet.service.d/10-kubelet-args.conf",
				"etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf",
				"etc/containerd/config.toml",
			} {
				wantB, werr := os.ReadFile(filepath.Join(want, rel))
				gotB, gerr := os.ReadFile(filepath.Join(dir, rel))
				if os.IsNotExist(werr) && os.IsNotExist(gerr) {
					continue
				}
				if werr != nil || gerr != nil || !bytes.Equal(gotB, wantB) {
					t.Errorf("%s differs from bootstrap.sh's:\n got (%v): %q\nwant (%v): %q", rel, gerr, gotB, werr, wantB)
				}
			}
			got := readJSON(t, filepath.Join(dir, "etc/kubernetes/kubelet/kubelet-config.json"))
			exp := readJSON(t, filepath.Join(want, "etc/kubernetes/kubelet/kubelet-config.json"))
			for _, d := range jsonDiff("", exp, got) {
				t.Errorf("kubelet-config.json: %s", d)
			}
			for _, e := range logs.All() {
				if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), "BEGIN CERTIFICATE") {
					t.Errorf("the log shows the CA: %v", e)
				}
			}
		})
	}
}

func readJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	var v map[string]any
	must(t, json.Unmarshal(b, &v))
	return v
}

// jsonDiff lists the differences between want and got; a key on one side only is not a
// difference when its value is one the kubelet treats as unset (0, "", "0s", {}, []).
func jsonDiff(path string, want, got map[string]any) []string {
	var out []string
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, wok := want[k]
		g, gok := got[k]
		p := path + "." + k
		switch {
		case !gok:
			if !unset(w) {
				out = append(out, fmt.Sprintf("%s missing (want %v)", p, w))
			}
		case !wok:
			if !unset(g) {
				out = append(out, fmt.Sprintf("%s unexpected (%v)", p, g))
			}
		default:
			wm, wIsMap := w.(map[string]any)
			gm, gIsMap := g.(map[string]any)
			if wIsMap && gIsMap {
				out = append(out, jsonDiff(p, wm, gm)...)
			} else if !reflect.DeepEqual(w, g) {
				out = append(out, fmt.Sprintf("%s = %v, want %v", p, g, w))
			}
		}
	}
	return out
}

func unset(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case float64:
		return x == 0
	case string:
		return x == "" || x == "0s" || x == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !unset(e) {
				return false
			}
		}
		return true
	}
	return false
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
