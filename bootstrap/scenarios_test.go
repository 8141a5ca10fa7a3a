package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/unitenv"
	"github.com/eksboot/eksboot/unitenv/unitenvtest"
)

// base is golden case 01 (m5.large, us-west-2), the starting point of the scenarios.
func base(t *testing.T) goldencase.Case {
	t.Helper()
	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	must(t, err)
	return c
}

func kubeletConfig(t *testing.T, dir string) map[string]any {
	t.Helper()
	return readJSON(t, filepath.Join(dir, "etc/kubernetes/kubelet/kubelet-config.json"))
}

func warnings(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.FilterLevelExact(zap.WarnLevel).All() {
		b.WriteString(e.Message + "\n")
	}
	return b.String()
}

func TestUnknownInstanceTypeNeverFailsTheBoot(t *testing.T) {
	t.Run("EC2 does not know it either: 110", func(t *testing.T) {
		c := base(t)
		c.IMDS.InstanceType = "zz9.large"
		core, logs := observer.New(zap.InfoLevel)
		dir, err := runCase(t, c, zap.New(core))
		must(t, err)
		k := kubeletConfig(t, dir)
		if k["maxPods"] != 110.0 || k["kubeReserved"].(map[string]any)["memory"] != "1465Mi" {
			t.Errorf("maxPods %v, kubeReserved %v; want 110 and 1465Mi", k["maxPods"], k["kubeReserved"])
		}
		if w := warnings(logs); !strings.Contains(w, `"zz9.large" is not in the max-pods table`) {
			t.Errorf("no warning naming the type: %q", w)
		}
	})
	t.Run("EC2 knows it: the classic formula", func(t *testing.T) {
		c := base(t)
		c.IMDS.InstanceType = "zz9.large"
		must(t, json.Unmarshal([]byte(`{"Hypervisor":"nitro","CpuCount":4,"NetworkInfo":{"Ipv4AddressesPerInterface":15,"MaximumNetworkInterfaces":4,"DefaultNetworkCardIndex":0,"NetworkCards":[{"NetworkCardIndex":0,"MaximumNetworkInterfaces":4}]}}`), &c.DescribeTypes))
		dir, err := runCase(t, c, zap.NewNop())
		must(t, err)
		if k := kubeletConfig(t, dir); k["maxPods"] != 58.0 {
			t.Errorf("maxPods %v, want 4*(15-1)+2 = 58", k["maxPods"])
		}
	})
}

func TestDescribeInstancesRefusedFallsBackToLocalHostname(t *testing.T) {
	c := base(t)
	c.DescribeInst = nil                                                      // the fake EC2 answers 403 UnauthorizedOperation
	c.IMDS.LocalHostname = "ip-192-168-45-67.us-west-2.compute.internal.corp" // a custom domain: EC2 is asked
	core, logs := observer.New(zap.InfoLevel)
	dir, err := runCase(t, c, zap.New(core))
	must(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"))
	must(t, err)
	if !strings.Contains(string(b), "--hostname-override=ip-192-168-45-67.us-west-2.compute.internal.corp ") {
		t.Errorf("drop-in: %s", b)
	}
	if w := warnings(logs); !strings.Contains(w, "UnauthorizedOperation") || !strings.Contains(w, "local-hostname") {
		t.Errorf("warning should name the EC2 error and the fallback: %q", w)
	}
}

func TestMissingDomainIsDerived(t *testing.T) {
	c := base(t)
	c.IMDS.Overrides = map[string]*string{"latest/meta-data/services/domain": nil}
	dir, err := runCase(t, c, zap.NewNop())
	must(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "etc/containerd/config.toml"))
	must(t, err)
	if !strings.Contains(string(b), `"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"`) {
		t.Errorf("sandbox image not derived: %s", b)
	}
}

func TestIPv6WithoutAddressFailsWritingNothing(t *testing.T) {
	c := base(t)
	c.Args = append(c.Args, "--ip-family", "ipv6", "--service-ipv6-cidr", "fd00:10:96::/112")
	dir, err := runCase(t, c, zap.NewNop())
	if err == nil || !strings.Contains(err.Error(), "ipv6s") {
		t.Fatalf("err = %v, want one naming the ipv6s path", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("wrote %d entries", len(entries))
	}
}

func TestCustomContainerdConfig(t *testing.T) {
	c := base(t)
	c.Files = map[string]string{"/etc/my/containerd.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\nsandbox_image = \"SANDBOX_IMAGE\"\n"}
	c.Args = append(c.Args, "--containerd-config-file", "/etc/my/containerd.toml")
	dir, err := runCase(t, c, zap.NewNop())
	must(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "etc/containerd/config.toml"))
	must(t, err)
	want := "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\nsandbox_image = \"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5\"\n"
	if string(b) != want {
		t.Errorf("config.toml = %q, want %q", b, want)
	}
}

func TestFIPSRegistry(t *testing.T) {
	c := base(t)
	c.Files = map[string]string{"/proc/sys/crypto/fips_enabled": "1\n"}
	core, _ := observer.New(zap.InfoLevel)
	log := zap.New(core)
	// The FIPS host resolves only through the environment's resolver, replaced here.
	dir, err := runCaseWith(t, c, log, func(env *Env) {
		env.LookupHost = func(_ context.Context, host string) ([]string, error) {
			if host == "602401143452.dkr.ecr-fips.us-west-2.amazonaws.com" {
				return []string{"127.0.0.2"}, nil
			}
			return nil, errors.New("no such host")
		}
	})
	must(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "etc/containerd/config.toml"))
	must(t, err)
	if !strings.Contains(string(b), "602401143452.dkr.ecr-fips.us-west-2.amazonaws.com/eks/pause:3.5") {
		t.Errorf("no FIPS registry: %s", b)
	}
}

// TestRootCheck: configuring the real node (--root /) needs root; the check comes
// before anything is read from IMDS or written, and --dry-run is allowed.
func TestRootCheck(t *testing.T) {
	root, err := rootfs.New("/")
	must(t, err)
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.Geteuid = func() int { return 1000 }
	env.IMDS = func(context.Context, imds.Options) (*imds.Facts, error) {
		t.Fatal("IMDS was read before the root check")
		return nil, nil
	}
	o, err := parseArgs(validArgs(t), noEnv)
	must(t, err)
	err = runOptions(t, context.Background(), o, env)
	if err == nil || !strings.Contains(err.Error(), "must run as root") {
		t.Fatalf("err = %v, want the root check", err)
	}
	// A dry run passes the check and goes on to read IMDS.
	o.DryRun = true
	read := false
	env.IMDS = func(context.Context, imds.Options) (*imds.Facts, error) {
		read = true
		return nil, errors.New("stop here")
	}
	env.KubeletVersion = func(context.Context) (string, error) { return "Kubernetes v1.32.9", nil }
	o.KubeletVersion = "1.32.9"
	if err := runOptions(t, context.Background(), o, env); err == nil || !read {
		t.Fatalf("dry run: err = %v, IMDS read %v; want it past the root check", err, read)
	}
}

// TestOldKubelet: below 1.24 bootstrap.sh defaulted to dockerd; eksboot asks for
// --container-runtime containerd, and with it configures the node (kubeAPIQPS and
// kubeAPIBurst as bootstrap.sh sets them for 1.22-1.26).
func TestOldKubelet(t *testing.T) {
	c := base(t)
	c.KubeletVersion = "v1.23.17-eks-0123456"
	_, err := runCase(t, c, zap.NewNop())
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--container-runtime containerd") {
		t.Fatalf("err = %v, want a usage error asking for --container-runtime containerd", err)
	}
	c.Args = append(c.Args, "--container-runtime", "containerd")
	dir, err := runCase(t, c, zap.NewNop())
	must(t, err)
	k := kubeletConfig(t, dir)
	if k["kubeAPIQPS"] != 10.0 || k["kubeAPIBurst"] != 20.0 {
		t.Errorf("kubeAPIQPS %v, kubeAPIBurst %v; want 10 and 20", k["kubeAPIQPS"], k["kubeAPIBurst"])
	}
}

// TestAL2ExtraArgsOnTodaysKubelets: AL2-era --kubelet-extra-args on kubelets that
// removed some of their flags join, with a warning per flag left out, and the
// kubelet gets exactly the other arguments (systemd's split of the drop-in); what
// the kubelet refuses is refused before anything is written.
func TestAL2ExtraArgsOnTodaysKubelets(t *testing.T) {
	extra := `--node-labels=team=a --container-runtime remote --network-plugin cni --cni-bin-dir /opt/cni/bin ` +
		`--cloud-provider aws --pod-infra-container-image=602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.10 ` +
		`--provider-id="aws:///x y" --max-pods=58`
	for _, kv := range []string{"v1.35.4-eks-0123456", "v1.37.2-eks-0123456", "v1.38.0-eks-0123456"} {
		c := base(t)
		c.KubeletVersion = kv
		c.Args = append(c.Args, "--kubelet-extra-args", extra)
		core, logs := observer.New(zap.InfoLevel)
		dir, err := runCase(t, c, zap.New(core))
		must(t, err)
		b, err := os.ReadFile(filepath.Join(dir, "etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"))
		must(t, err)
		opts, err := unit.DeserializeOptions(bytes.NewReader(b))
		must(t, err)
		env, err := unitenvtest.Parse(opts[0].Value)
		must(t, err)
		value := strings.TrimPrefix(env[0], "KUBELET_EXTRA_ARGS=")
		want := []string{"--node-labels=team=a", "--provider-id=aws:///x y", "--max-pods=58"}
		if got := unitenv.SplitWords(value); !slices.Equal(got, want) {
			t.Errorf("%s: the kubelet gets %q, want %q", kv, got, want)
		}
		w := warnings(logs)
		for _, flag := range []string{"--container-runtime", "--network-plugin", "--cni-bin-dir", "--cloud-provider", "--pod-infra-container-image"} {
			if !strings.Contains(w, `"`+flag) {
				t.Errorf("%s: no warning names %s:\n%s", kv, flag, w)
			}
		}
	}
	for _, bad := range []string{"--max-pods=abc", "--nosuch=1", "--node-labels=node-role.kubernetes.io/worker=true", "--eviction-hard=" + strings.Replace("memory.available", "ilable", "ilble", 1) + "<100Mi", "--feature-gates=DynamicResourceAllocation=true", "--cpu-manager-policy=bogus"} {
		c := base(t)
		c.KubeletVersion = "v1.38.0-eks-0123456"
		c.Args = append(c.Args, "--kubelet-extra-args", bad)
		dir, err := runCase(t, c, zap.NewNop())
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "kubelet 1.38 refuses it") && !strings.Contains(err.Error(), "kubelet 1.38 has no flag") {
			t.Errorf("%s: err = %v, want a usage error naming kubelet 1.38", bad, err)
		}
		if _, statErr := os.Stat(filepath.Join(dir, "etc/kubernetes/kubelet/kubelet-config.json")); statErr == nil {
			t.Errorf("%s: refused, but kubelet-config.json was written", bad)
		}
	}
}
