package bootstrap

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/rootfs"
)

// planFastImagePull plans golden case 01 on instanceType with the FastImagePull gate
// (on), on a node of cpus CPUs and mem bytes (what the node itself says, used when
// the table lacks the type), whose image has the files of extra.
func planFastImagePull(t *testing.T, instanceType string, on bool, cpus int, mem int64, extra ...string) (*Facts, *Node) {
	t.Helper()
	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	must(t, err)
	c.IMDS.InstanceType = instanceType
	fakes := c.StartFor(t)
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	root, err := rootfs.New(dir)
	must(t, err)
	for _, p := range extra {
		must(t, root.WriteFile(p, []byte("x"), 0o755))
	}
	o, err := parseArgs(append(slices.Clone(c.Args), "--root", dir, "--no-restart", "--kubelet-version", c.KubeletVersion,
		"--imds-endpoint", fakes.IMDS.URL()), func(string) string { return "" })
	must(t, err)
	cfg, err := Validate(o)
	must(t, err)
	cfg.FastImagePull = on
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = func() int { return cpus }
	env.MemoryBytes = func() (int64, error) { return mem, nil }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	f, n, err := ComputeNode(context.Background(), cfg, env)
	must(t, err)
	return f, n
}

func file(n *Node, p string) []byte {
	for _, f := range n.Files {
		if f.Path == p {
			return f.Data
		}
	}
	return nil
}

// TestFastImagePullThreshold: the SOCI snapshotter at 4 vCPUs and 7 GiB and above,
// the default snapshotter with a warning below, the instance type's facts from the
// table, the node's own for a type the table lacks.
func TestFastImagePullThreshold(t *testing.T) {
	const gib = int64(1) << 30
	tests := []struct {
		name, instanceType string
		on                 bool
		cpus               int
		mem                int64
		want               bool
		warning            string
	}{
		{"m5.xlarge: 4 vCPUs, 16 GiB", "m5.xlarge", true, 2, 0, true, ""},
		{"c1.xlarge: 8 vCPUs, exactly 7 GiB", "c1.xlarge", true, 2, 0, true, ""},
		{"m5.large: 2 vCPUs", "m5.large", true, 64, 64 * gib, false, "m5.large (the instance table): 2 vCPUs and 8.0 GiB of memory, below the SOCI snapshotter's 4 vCPUs and 7 GiB"},
		{"gate off", "m5.xlarge", false, 2, 0, false, ""},
		{"unknown type, the node's 4 CPUs and 7 GiB", "zz9.large", true, 4, 7 * gib, true, ""},
		{"unknown type, the node's 7 GiB less a byte", "zz9.large", true, 4, 7*gib - 1, false, "the node: 4 vCPUs and 7.0 GiB of memory, below"},
		{"unknown type, the node's 3 CPUs", "zz9.large", true, 3, 64 * gib, false, "the node: 3 vCPUs and 64.0 GiB of memory, below"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, n := planFastImagePull(t, tc.instanceType, tc.on, tc.cpus, tc.mem)
			if f.SOCI != tc.want {
				t.Fatalf("SOCI %v, want %v (warnings %q)", f.SOCI, tc.want, f.Warnings)
			}
			warned := slices.ContainsFunc(f.Warnings, func(w string) bool { return strings.Contains(w, "FastImagePull") })
			if tc.warning != "" && !slices.ContainsFunc(f.Warnings, func(w string) bool { return strings.Contains(w, tc.warning) }) {
				t.Errorf("warnings %q lack %q", f.Warnings, tc.warning)
			} else if tc.warning == "" && warned {
				t.Errorf("unexpected warning %q", f.Warnings)
			}
			containerd := string(file(n, containerdconf.ConfigPath))
			kubelet := string(file(n, kubeletconf.ConfigPath))
			if !tc.want {
				if strings.Contains(containerd, "soci") || strings.Contains(kubelet, "imageServiceEndpoint") || file(n, containerdconf.SOCIConfigPath) != nil {
					t.Errorf("the default snapshotter's node has SOCI settings:\n%s", containerd)
				}
				if !slices.Contains(n.Remove, containerdconf.SOCIContainerdDropInPath) {
					t.Errorf("the drop-in %s is not removed: %v", containerdconf.SOCIContainerdDropInPath, n.Remove)
				}
				return
			}
			for _, w := range []string{"snapshotter = 'soci'", "[proxy_plugins.soci]", "type = 'snapshot'", "address = '" + containerdconf.SOCISocket + "'"} {
				if !strings.Contains(containerd, w) {
					t.Errorf("config.toml lacks %q:\n%s", w, containerd)
				}
			}
			if !strings.Contains(kubelet, `"imageServiceEndpoint": "`+containerdconf.SOCIImageServiceEndpoint+`"`) {
				t.Errorf("kubelet-config.json has no SOCI imageServiceEndpoint:\n%s", kubelet)
			}
			if d := string(file(n, containerdconf.SOCIContainerdDropInPath)); d != "[Unit]\nRequires=soci-snapshotter.service\nAfter=soci-snapshotter.service\n" {
				t.Errorf("drop-in %q", d)
			}
			if s := string(file(n, containerdconf.SOCIConfigPath)); !strings.Contains(s, "max_concurrent_downloads_per_image = 20") || strings.Contains(s, "unpigz") {
				t.Errorf("snapshotter config without the image's unpigz:\n%s", s)
			}
		})
	}
}

// TestFastImagePullOnAnAL2023Image: the image's unpigz decompresses, and its cached
// pause image is imported into the snapshotter after containerd's restart, before
// the kubelet's.
func TestFastImagePullOnAnAL2023Image(t *testing.T) {
	f, n := planFastImagePull(t, "m5.xlarge", true, 4, 16<<30, containerdconf.SOCIGzipHelper, pathPauseTar)
	if !f.SOCI || n.SOCIPauseTar != pathPauseTar {
		t.Fatalf("SOCI %v, pause tar %q", f.SOCI, n.SOCIPauseTar)
	}
	if s := string(file(n, containerdconf.SOCIConfigPath)); !strings.Contains(s, "[pull_modes.parallel_pull_unpack.decompress_streams.gzip]\npath = \"/usr/bin/unpigz\"\n") {
		t.Errorf("snapshotter config:\n%s", s)
	}
	var changes []rootfs.Change
	for _, f := range n.Files {
		changes = append(changes, rootfs.Change{Path: f.Path, New: f.Data})
	}
	var got []string
	for _, a := range Actions(n, changes) {
		got = append(got, a.String())
	}
	want := []string{
		"daemon-reload", "enable sys-fs-bpf.mount", "start sys-fs-bpf.mount", "restart soci-snapshotter.service", "enable containerd.service", "restart containerd.service",
		"ctr --namespace k8s.io images import --snapshotter soci /etc/eks/pause.tar", "enable kubelet.service", "restart kubelet.service",
	}
	if !slices.Equal(got, want) {
		t.Errorf("actions %q\nwant    %q", got, want)
	}
	if a := SOCIImportArgs(pathPauseTar, 1); strings.Join(a, " ") != "--namespace k8s.io images import --snapshotter soci /etc/eks/pause.tar" {
		t.Errorf("containerd 1: ctr %q", a)
	}
	if a := SOCIImportArgs(pathPauseTar, 2); strings.Join(a, " ") != "--namespace k8s.io images import --snapshotter soci --local /etc/eks/pause.tar" {
		t.Errorf("containerd 2: ctr %q", a)
	}
}

func TestParseMeminfo(t *testing.T) {
	for in, want := range map[string]int64{
		"MemTotal:       16069116 kB\nMemFree: 1 kB\n": 16069116 << 10,
		"MemFree: 1 kB\nMemTotal: 8 kB\n":              8 << 10,
		"MemTotal: 8 MB\n":                             0,
		"MemTotal: -8 kB\n":                            0,
		"":                                             0,
	} {
		got, err := parseMeminfo([]byte(in))
		if got != want || (want == 0) != (err != nil) {
			t.Errorf("parseMeminfo(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
