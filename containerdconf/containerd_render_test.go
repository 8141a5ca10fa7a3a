package containerdconf

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/eksboot/eksboot/assets"
)

const (
	al2023Pause = "localhost/kubernetes/pause:latest"
	al2023Runc  = "/usr/sbin/runc"
	al2023Spec  = "/etc/containerd/base-runtime-spec.json"
	nvidiaBin   = "/usr/bin/nvidia-container-runtime"
	nodeConfig  = "spec.containerd.config"
)

// TestContainerdKeepsTheVersion2Bytes: on containerd 1 the new entry point writes
// what ContainerdConfig and MergeContainerdConfig wrote, byte for byte, so the
// bootstrap.sh golden parity cannot move.
func TestContainerdKeepsTheVersion2Bytes(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Containerd(ContainerdInput{Major: 1, SandboxImage: c.pauseImage})
			if err != nil {
				t.Fatal(err)
			}
			want := readTestdata(t, filepath.Join(bootstrapDir, c.name, containerdPath))
			if !bytes.Equal(got, want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	overlay := "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\ndiscard_unpacked_layers = false\n"
	base := string(ContainerdConfig(assets.ContainerdConfig, pauseUSW2))
	want, err := MergeContainerdConfig(base, overlay)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   ContainerdInput
	}{
		{"embedded template", ContainerdInput{Major: 1, SandboxImage: pauseUSW2, Overlays: []ContainerdOverlay{{nodeConfig, overlay}}}},
		{"the same template given", ContainerdInput{Major: 1, Template: []byte(assets.ContainerdConfig), TemplateName: "/etc/eks/containerd/containerd-config.toml", SandboxImage: pauseUSW2, Overlays: []ContainerdOverlay{{nodeConfig, overlay}}}},
		{"empty overlays skipped", ContainerdInput{Major: 1, SandboxImage: pauseUSW2, Overlays: []ContainerdOverlay{{"part 1", ""}, {nodeConfig, overlay}, {"part 3", ""}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Containerd(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got:\n%s\nwant MergeContainerdConfig's:\n%s", got, want)
			}
		})
	}
	t.Run("user template kept verbatim", func(t *testing.T) {
		tmpl := "# mine\nversion = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\nsandbox_image = \"SANDBOX_IMAGE\" # pinned\n"
		got, err := Containerd(ContainerdInput{Major: 1, Template: []byte(tmpl), TemplateName: "/etc/mine.toml", SandboxImage: "img:1"})
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(tmpl, "SANDBOX_IMAGE", "img:1"); string(got) != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

// TestContainerd checks each rule on the decoded output: the values at the keys of
// the schema the node's containerd reads.
func TestContainerd(t *testing.T) {
	v2 := func(path ...string) []string { return append([]string{"plugins", criV2Plugin}, path...) }
	images := func(path ...string) []string {
		return append([]string{"plugins", "io.containerd.cri.v1.images"}, path...)
	}
	runtime := func(path ...string) []string { return append([]string{"plugins", criV3Runtime}, path...) }
	const (
		v2Overlay = "version = 2\n[grpc]\naddress = \"/run/foo/foo.sock\"\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\ndiscard_unpacked_layers = false\n[plugins.'io.containerd.grpc.v1.cri']\nsandbox_image = \"registry.k8s.io/pause:3.10\"\n"
		v3Overlay = "version = 3\n[grpc]\naddress = \"/run/foo/foo.sock\"\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\nsandbox = 'registry.k8s.io/pause:3.10'\n"
	)
	type check struct {
		path []string
		want any // absent: the key must not be there
	}
	absent := struct{}{}
	tests := []struct {
		name   string
		in     ContainerdInput
		checks []check
	}{
		{"containerd 1: version 2, sandbox_image", ContainerdInput{Major: 1, SandboxImage: pauseUSW2}, []check{
			{[]string{"version"}, int64(2)},
			{v2("sandbox_image"), pauseUSW2},
			{v2("containerd", "runtimes", "runc", "options", "BinaryName"), absent},
			{v2("containerd", "runtimes", "runc", "base_runtime_spec"), absent},
			{[]string{"plugins", "io.containerd.cri.v1.images"}, absent},
		}},
		{"containerd 2: version 3, pinned sandbox image", ContainerdInput{Major: 2, SandboxImage: al2023Pause}, []check{
			{[]string{"version"}, int64(3)},
			{images("pinned_images", "sandbox"), al2023Pause},
			{images("discard_unpacked_layers"), true},
			{images("registry", "config_path"), "/etc/containerd/certs.d:/etc/docker/certs.d"},
			{runtime("enable_cdi"), true},
			{runtime("containerd", "default_runtime_name"), "runc"},
			{runtime("containerd", "runtimes", "runc", "runtime_type"), runcShim},
			{runtime("containerd", "runtimes", "runc", "options", "SystemdCgroup"), true},
			{runtime("containerd", "runtimes", "runc", "options", "BinaryName"), absent},
			{runtime("cni", "bin_dir"), "/opt/cni/bin"}, // Minor 0: containerd 2.0
			{runtime("cni", "conf_dir"), "/etc/cni/net.d"},
			{[]string{"imports"}, []any{"/etc/containerd/config.d/*.toml"}},
			{[]string{"plugins", criV2Plugin}, absent},
		}},
		{"containerd 3 reads version 3 too", ContainerdInput{Major: 3, SandboxImage: al2023Pause}, []check{
			{[]string{"version"}, int64(3)},
		}},
		{"containerd 2: runc binary and base runtime spec", ContainerdInput{Major: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec}, []check{
			{runtime("containerd", "runtimes", "runc", "options", "BinaryName"), al2023Runc},
			{runtime("containerd", "runtimes", "runc", "options", "SystemdCgroup"), true},
			{runtime("containerd", "runtimes", "runc", "base_runtime_spec"), al2023Spec},
			{runtime("containerd", "runtimes", "nvidia"), absent},
		}},
		{"containerd 1: runc binary and base runtime spec", ContainerdInput{Major: 1, SandboxImage: pauseUSW2, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec}, []check{
			{v2("containerd", "runtimes", "runc", "options", "BinaryName"), al2023Runc},
			{v2("containerd", "runtimes", "runc", "base_runtime_spec"), al2023Spec},
			{v2("sandbox_image"), pauseUSW2},
		}},
		{"containerd 2: nvidia is the default runtime", ContainerdInput{Major: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec, NvidiaRuntime: nvidiaBin}, []check{
			{runtime("containerd", "default_runtime_name"), "nvidia"},
			{runtime("containerd", "runtimes", "nvidia", "runtime_type"), runcShim},
			{runtime("containerd", "runtimes", "nvidia", "options", "BinaryName"), nvidiaBin},
			{runtime("containerd", "runtimes", "nvidia", "options", "SystemdCgroup"), true},
			{runtime("containerd", "runtimes", "nvidia", "base_runtime_spec"), al2023Spec},
			{runtime("containerd", "runtimes", "runc", "options", "BinaryName"), al2023Runc},
		}},
		{"containerd 1: nvidia is the default runtime", ContainerdInput{Major: 1, SandboxImage: pauseUSW2, NvidiaRuntime: nvidiaBin}, []check{
			{v2("containerd", "default_runtime_name"), "nvidia"},
			{v2("containerd", "runtimes", "nvidia", "runtime_type"), runcShim},
			{v2("containerd", "runtimes", "nvidia", "options", "BinaryName"), nvidiaBin},
			{v2("containerd", "runtimes", "nvidia", "options", "SystemdCgroup"), true},
			{v2("containerd", "runtimes", "nvidia", "base_runtime_spec"), absent},
			{v2("containerd", "runtimes", "runc", "runtime_type"), runcShim},
		}},
		{"nvidia before the overlays: an overlay can choose runc again", ContainerdInput{Major: 2, SandboxImage: al2023Pause, NvidiaRuntime: nvidiaBin, Overlays: []ContainerdOverlay{{nodeConfig, "[plugins.'io.containerd.cri.v1.runtime'.containerd]\ndefault_runtime_name = 'runc'\n"}}}, []check{
			{runtime("containerd", "default_runtime_name"), "runc"},
			{runtime("containerd", "runtimes", "nvidia", "options", "BinaryName"), nvidiaBin},
		}},
		{"containerd 2, version 3 overlay (nodeadm containerdv2-config-v3)", ContainerdInput{Major: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec, Overlays: []ContainerdOverlay{{nodeConfig, v3Overlay}}}, []check{
			{[]string{"version"}, int64(3)},
			{[]string{"grpc", "address"}, "/run/foo/foo.sock"},
			{images("pinned_images", "sandbox"), "registry.k8s.io/pause:3.10"},
			{images("discard_unpacked_layers"), true},
			{runtime("containerd", "runtimes", "runc", "base_runtime_spec"), al2023Spec},
		}},
		{"containerd 2, version 2 overlay: the version 2 template (nodeadm containerdv2-config-v2)", ContainerdInput{Major: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec, Overlays: []ContainerdOverlay{{nodeConfig, v2Overlay}}}, []check{
			{[]string{"version"}, int64(2)},
			{[]string{"grpc", "address"}, "/run/foo/foo.sock"},
			{v2("sandbox_image"), "registry.k8s.io/pause:3.10"},
			{v2("containerd", "discard_unpacked_layers"), false},
			{v2("containerd", "runtimes", "runc", "options", "BinaryName"), al2023Runc},
			{v2("containerd", "runtimes", "runc", "options", "SystemdCgroup"), true},
			{v2("containerd", "runtimes", "runc", "base_runtime_spec"), al2023Spec},
			{v2("registry", "config_path"), "/etc/containerd/certs.d:/etc/docker/certs.d"},
			{[]string{"plugins", criV3Runtime}, absent},
		}},
		{"an overlay without a version follows the template", ContainerdInput{Major: 2, SandboxImage: al2023Pause, Overlays: []ContainerdOverlay{{nodeConfig, "[grpc]\naddress = '/run/x.sock'\n"}}}, []check{
			{[]string{"version"}, int64(3)},
			{[]string{"grpc", "address"}, "/run/x.sock"},
		}},
		{"two overlays merge in order", ContainerdInput{Major: 2, SandboxImage: al2023Pause, Overlays: []ContainerdOverlay{
			{"part 1 " + nodeConfig, "[plugins.'io.containerd.cri.v1.runtime']\nenable_cdi = true\nenable_unprivileged_ports = false\n[plugins.'io.containerd.cri.v1.images']\ndiscard_unpacked_layers = false\n"},
			{"part 2 " + nodeConfig, "version = 3\n[plugins.'io.containerd.cri.v1.runtime']\ncdi_spec_dirs = ['/etc/cdi']\n[plugins.'io.containerd.cri.v1.images']\ndiscard_unpacked_layers = true\nmax_concurrent_downloads = 10\n"},
		}}, []check{
			{runtime("enable_cdi"), true},
			{runtime("enable_unprivileged_ports"), false},
			{runtime("cdi_spec_dirs"), []any{"/etc/cdi"}},
			{images("discard_unpacked_layers"), true},
			{images("max_concurrent_downloads"), int64(10)},
			{images("pinned_images", "sandbox"), al2023Pause},
			{runtime("containerd", "runtimes", "runc", "options", "SystemdCgroup"), true},
		}},
		{"containerd 2 with a version 2 template file", ContainerdInput{Major: 2, Template: []byte(assets.ContainerdConfig), TemplateName: "/etc/eks/containerd/containerd-config.toml", SandboxImage: al2023Pause, RuncBinary: al2023Runc}, []check{
			{[]string{"version"}, int64(2)},
			{v2("sandbox_image"), al2023Pause},
			{v2("containerd", "runtimes", "runc", "options", "BinaryName"), al2023Runc},
		}},
		{"a template without a runc runtime gets one", ContainerdInput{Major: 2, Template: []byte("version = 3\n"), TemplateName: "/t.toml", BaseRuntimeSpec: al2023Spec}, []check{
			{runtime("containerd", "runtimes", "runc", "runtime_type"), runcShim},
			{runtime("containerd", "runtimes", "runc", "base_runtime_spec"), al2023Spec},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Containerd(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := toml.Unmarshal(out, &got); err != nil {
				t.Fatalf("output is not TOML: %v\n%s", err, out)
			}
			for _, c := range tc.checks {
				v, ok := dig(got, c.path...)
				switch {
				case c.want == absent && ok:
					t.Errorf("%s = %v, want it absent", strings.Join(c.path, "."), v)
				case c.want != absent && !reflect.DeepEqual(v, c.want):
					t.Errorf("%s = %#v, want %#v", strings.Join(c.path, "."), v, c.want)
				}
			}
			again, err := Containerd(tc.in)
			if err != nil || !bytes.Equal(again, out) {
				t.Errorf("a second render differs")
			}
		})
	}
}

func TestContainerdErrors(t *testing.T) {
	tests := []struct {
		name string
		in   ContainerdInput
		want []string // each must be in the error
	}{
		{"major unset", ContainerdInput{}, []string{"containerd major version 0: want 1 or more"}},
		{"template not TOML, never copied", ContainerdInput{Major: 1, Template: []byte("version = 2\n[plugins\n"), TemplateName: "/etc/eks/containerd/mine.toml"}, []string{"containerd config template /etc/eks/containerd/mine.toml: not valid TOML"}},
		{"sandbox image breaks the TOML", ContainerdInput{Major: 1, SandboxImage: `a"b`}, []string{`containerd config template embedded: sandbox image "a\"b" makes it invalid TOML`}},
		{"overlay not TOML", ContainerdInput{Major: 2, Overlays: []ContainerdOverlay{{nodeConfig, "[grpc\naddress = 1"}}}, []string{"spec.containerd.config: not valid TOML"}},
		{"every bad overlay and a bad template at once", ContainerdInput{Major: 1, Template: []byte("x = "), TemplateName: "/t.toml", Overlays: []ContainerdOverlay{{"part 1", "= 1"}, {"part 2", "ok = 1"}, {"part 3", "[["}}}, []string{"part 1: not valid TOML", "part 3: not valid TOML", "containerd config template /t.toml: not valid TOML"}},
		{"version 3 overlay on containerd 1", ContainerdInput{Major: 1, Overlays: []ContainerdOverlay{{nodeConfig, "version = 3\n"}}}, []string{"spec.containerd.config: version 3 does not match the node's containerd config version 2 (template embedded)"}},
		{"overlays of two versions", ContainerdInput{Major: 2, Overlays: []ContainerdOverlay{{"part 1", "version = 2\n"}, {"part 2", "version = 3\n"}}}, []string{"part 2: version 3 does not match the node's containerd config version 2"}},
		{"overlay version against a template file", ContainerdInput{Major: 2, Template: []byte("version = 3\n"), TemplateName: "/t.toml", Overlays: []ContainerdOverlay{{nodeConfig, "version = 2\n"}}}, []string{"spec.containerd.config: version 2 does not match the node's containerd config version 3 (template /t.toml)"}},
		{"version 3 template on containerd 1", ContainerdInput{Major: 1, Template: []byte(assets.ContainerdConfigV3), TemplateName: "/t.toml"}, []string{"containerd config template /t.toml: version 3 needs containerd 2.x"}},
		{"version-less template on containerd 2", ContainerdInput{Major: 2, Template: []byte("root = '/x'\n"), TemplateName: "/t.toml"}, []string{"containerd config template /t.toml: version (none): containerd 2.x loads versions 2 and 3"}},
		{"runtimes in a version 1 template", ContainerdInput{Major: 1, Template: []byte("root = '/x'\n"), TemplateName: "/t.toml", NvidiaRuntime: nvidiaBin}, []string{"containerd config template /t.toml: version (none): eksboot sets the runc binary"}},
		{"CRI table that is not a table", ContainerdInput{Major: 2, Template: []byte("version = 3\n[plugins]\n'io.containerd.cri.v1.runtime' = 1\n"), TemplateName: "/t.toml", RuncBinary: al2023Runc}, []string{"containerd config template /t.toml: its plugins' CRI tables are not tables"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Containerd(tc.in)
			if err == nil {
				t.Fatalf("no error; wrote:\n%s", out)
			}
			if out != nil {
				t.Errorf("wrote %q with the error", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// containerdV3 is the part of containerd 2's config (version 3) that eksboot writes,
// with the key names of containerd 2's CRI plugins (containerd docs/cri/config.md,
// "In containerd 2.x"). Decoding strictly into it proves that the rendered file has
// no key containerd 2 would not read there.
type containerdV3 struct {
	Version int      `toml:"version"`
	Root    string   `toml:"root"`
	State   string   `toml:"state"`
	Imports []string `toml:"imports"`
	GRPC    struct {
		Address string `toml:"address"`
	} `toml:"grpc"`
	Plugins struct {
		Images struct {
			DiscardUnpackedLayers bool `toml:"discard_unpacked_layers"`
			PinnedImages          struct {
				Sandbox string `toml:"sandbox"`
			} `toml:"pinned_images"`
			Registry struct {
				ConfigPath string `toml:"config_path"`
			} `toml:"registry"`
		} `toml:"io.containerd.cri.v1.images"`
		Runtime struct {
			EnableCDI  bool `toml:"enable_cdi"`
			Containerd struct {
				DefaultRuntimeName string `toml:"default_runtime_name"`
				Runtimes           map[string]struct {
					RuntimeType     string `toml:"runtime_type"`
					BaseRuntimeSpec string `toml:"base_runtime_spec"`
					Options         struct {
						BinaryName    string `toml:"BinaryName"`
						SystemdCgroup bool   `toml:"SystemdCgroup"`
					} `toml:"options"`
				} `toml:"runtimes"`
			} `toml:"containerd"`
			CNI struct {
				BinDirs []string `toml:"bin_dirs"`
				ConfDir string   `toml:"conf_dir"`
			} `toml:"cni"`
		} `toml:"io.containerd.cri.v1.runtime"`
	} `toml:"plugins"`
}

// TestContainerdCNIBinDirs: a version 3 file names the CNI plugins' folder with the
// key the image's containerd reads (containerd 2.0: bin_dir; 2.1 on, and a
// containerd 2 of unknown minor: bin_dirs), whether the folder comes from the
// embedded template, the image's template or a NodeConfig overlay.
func TestContainerdCNIBinDirs(t *testing.T) {
	const (
		dirTemplate  = "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\nbin_dir = '/opt/cni/bin'\n"
		dirsTemplate = "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\nbin_dirs = ['/opt/cni/bin']\n"
		dirOverlay   = "[plugins.'io.containerd.cri.v1.runtime'.cni]\nbin_dir = '/opt/mine'\n"
		dirsOverlay  = "[plugins.'io.containerd.cri.v1.runtime'.cni]\nbin_dirs = ['/opt/mine']\n"
	)
	tests := []struct {
		name         string
		in           ContainerdInput
		key          string // the key the output has ("" for an error)
		want         any
		wantErr      string
		wantVerbatim bool // the template's bytes, untouched
	}{
		{"2.0, embedded", ContainerdInput{Major: 2, Minor: 0}, "bin_dir", "/opt/cni/bin", "", false},
		{"2.1, embedded", ContainerdInput{Major: 2, Minor: 1}, "bin_dirs", []any{"/opt/cni/bin"}, "", true},
		{"2.2, embedded", ContainerdInput{Major: 2, Minor: 2}, "bin_dirs", []any{"/opt/cni/bin"}, "", true},
		{"2.x of unknown minor, embedded", ContainerdInput{Major: 2, Minor: -1}, "bin_dirs", []any{"/opt/cni/bin"}, "", true},
		{"3.0, embedded", ContainerdInput{Major: 3, Minor: 0}, "bin_dirs", []any{"/opt/cni/bin"}, "", true},
		{"2.2, image template with bin_dir", ContainerdInput{Major: 2, Minor: 2, Template: []byte(dirTemplate)}, "bin_dirs", []any{"/opt/cni/bin"}, "", false},
		{"2.0, image template with bin_dirs", ContainerdInput{Major: 2, Minor: 0, Template: []byte(dirsTemplate)}, "bin_dir", "/opt/cni/bin", "", false},
		{"2.0, image template with bin_dir", ContainerdInput{Major: 2, Minor: 0, Template: []byte(dirTemplate)}, "bin_dir", "/opt/cni/bin", "", true},
		{"2.2, overlay's bin_dir", ContainerdInput{Major: 2, Minor: 2, Overlays: []ContainerdOverlay{{nodeConfig, dirOverlay}}}, "bin_dirs", []any{"/opt/mine"}, "", false},
		{"2.0, overlay's bin_dirs", ContainerdInput{Major: 2, Minor: 0, Overlays: []ContainerdOverlay{{nodeConfig, dirsOverlay}}}, "bin_dir", "/opt/mine", "", false},
		{
			"2.0, overlay's two folders",
			ContainerdInput{Major: 2, Minor: 0, Overlays: []ContainerdOverlay{{nodeConfig, "[plugins.'io.containerd.cri.v1.runtime'.cni]\nbin_dirs = ['/a', '/b']\n"}}},
			"", nil,
			nodeConfig + `: plugins."io.containerd.cri.v1.runtime".cni.bin_dirs: this containerd (2.0) reads one folder`, false,
		},
		{
			"both keys in an overlay",
			ContainerdInput{Major: 2, Minor: 2, Overlays: []ContainerdOverlay{{nodeConfig, "[plugins.'io.containerd.cri.v1.runtime'.cni]\nbin_dir = '/a'\nbin_dirs = ['/b']\n"}}},
			"", nil,
			nodeConfig + `: plugins."io.containerd.cri.v1.runtime".cni: bin_dir and bin_dirs are both set`, false,
		},
		{
			"a bin_dir that is no string",
			ContainerdInput{Major: 2, Minor: 2, Template: []byte("version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\nbin_dir = 1\n"), TemplateName: "/t.toml"},
			"", nil,
			`containerd config template /t.toml: plugins."io.containerd.cri.v1.runtime".cni.bin_dir: want a string`, false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.SandboxImage = al2023Pause
			out, err := Containerd(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := toml.Unmarshal(out, &m); err != nil {
				t.Fatal(err)
			}
			other := map[string]string{"bin_dir": "bin_dirs", "bin_dirs": "bin_dir"}[tc.key]
			if v, _ := dig(m, "plugins", criV3Runtime, "cni", tc.key); !reflect.DeepEqual(v, tc.want) {
				t.Errorf("cni.%s = %#v, want %#v\n%s", tc.key, v, tc.want, out)
			}
			if v, ok := dig(m, "plugins", criV3Runtime, "cni", other); ok {
				t.Errorf("cni.%s = %v too; containerd %d.%d reads %s\n%s", other, v, tc.in.Major, tc.in.Minor, tc.key, out)
			}
			template := string(tc.in.Template)
			if tc.in.Template == nil {
				template = assets.ContainerdConfigV3
			}
			if verbatim := string(out) == strings.ReplaceAll(template, assets.SandboxImagePlaceholder, al2023Pause); verbatim != tc.wantVerbatim {
				t.Errorf("output is the template's bytes: %v, want %v\n%s", verbatim, tc.wantVerbatim, out)
			}
		})
	}
}

// TestContainerdV3Golden: the AL2023 node's containerd 2 config (with and without
// NVIDIA) decodes strictly into containerd 2's key names and matches its golden
// file under testdata/containerd/ (rewrite with -update and review the diff).
func TestContainerdV3Golden(t *testing.T) {
	for _, tc := range []struct {
		file   string
		nvidia string
	}{
		{"config-v3-al2023.toml", ""},
		{"config-v3-al2023-nvidia.toml", nvidiaBin},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := Containerd(ContainerdInput{Major: 2, Minor: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec, NvidiaRuntime: tc.nvidia})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "containerd", tc.file), out)
			var c containerdV3
			dec := toml.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("not containerd 2's keys: %v\n%s", err, out)
			}
			want := "runc"
			if tc.nvidia != "" {
				want = "nvidia"
			}
			def, ok := c.Plugins.Runtime.Containerd.Runtimes[c.Plugins.Runtime.Containerd.DefaultRuntimeName]
			if c.Plugins.Runtime.Containerd.DefaultRuntimeName != want || !ok {
				t.Fatalf("default runtime %q (configured: %v), want %q", c.Plugins.Runtime.Containerd.DefaultRuntimeName, ok, want)
			}
			if def.RuntimeType != runcShim || !def.Options.SystemdCgroup || def.BaseRuntimeSpec != al2023Spec || def.Options.BinaryName == "" {
				t.Errorf("default runtime %+v", def)
			}
		})
	}
	t.Run("embedded template alone", func(t *testing.T) {
		var c containerdV3
		dec := toml.NewDecoder(strings.NewReader(assets.ContainerdConfigV3))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(assets.ContainerdConfigV3, assets.SandboxImagePlaceholder); n != 1 {
			t.Errorf("the v3 template holds %s %d times, want once", assets.SandboxImagePlaceholder, n)
		}
	})
}

// FuzzContainerd: whatever the template and overlay, Containerd either fails or
// returns TOML that decodes, and returns the same bytes for the same input.
func FuzzContainerd(f *testing.F) {
	f.Add(2, []byte(assets.ContainerdConfigV3), "[grpc]\naddress = '/x'\n", "img:1")
	f.Add(1, []byte(assets.ContainerdConfig), "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\nenable_cdi = true\n", "img")
	f.Add(2, []byte("version = 3\n[plugins]\n"), "version = 3\n[[a]]\nb = 1\n", `a"b`)
	f.Add(1, []byte("x = 'SANDBOX_IMAGE'\n"), "", "'")
	f.Fuzz(func(t *testing.T, major int, template []byte, overlay, image string) {
		in := ContainerdInput{Major: major%3 + 1, Template: template, TemplateName: "/t.toml", SandboxImage: image, RuncBinary: al2023Runc, Overlays: []ContainerdOverlay{{nodeConfig, overlay}}}
		out, err := Containerd(in)
		if err != nil {
			return
		}
		var m map[string]any
		if err := toml.Unmarshal(out, &m); err != nil {
			t.Fatalf("output is not TOML: %v\n%s", err, out)
		}
		if again, err := Containerd(in); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("a second render differs")
		}
	})
}
