package containerdconf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// containerd2 returns the path of a containerd 2.x binary and its minor version:
// $EKSBOOT_CONTAINERD, else containerd on PATH. The test is skipped, never failed, without one: Debian's
// containerd is 1.6/1.7, so CI has no containerd 2 unless it is given one.
func containerd2(t *testing.T) (string, int) {
	t.Helper()
	bin := os.Getenv("EKSBOOT_CONTAINERD")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("containerd"); err != nil {
			t.Skip("no containerd 2.x: set EKSBOOT_CONTAINERD to one")
		}
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	m := regexp.MustCompile(` v?(\d+)\.(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Skipf("%s --version: no version in %q", bin, out)
	}
	if major, _ := strconv.Atoi(string(m[1])); major < 2 {
		t.Skipf("%s is not containerd 2.x: %s", bin, bytes.TrimSpace(out))
	}
	minor, _ := strconv.Atoi(string(m[2]))
	return bin, minor
}

// TestContainerd2LoadsTheConfig gives each containerd 2 render to the real daemon's
// `config dump` (load, version 2 migration, plugin defaults) and checks the settings
// containerd will run with, in its own version 3 names.
func TestContainerd2LoadsTheConfig(t *testing.T) {
	bin, minor := containerd2(t)
	v2Overlay := "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\ndiscard_unpacked_layers = false\n"
	tests := []struct {
		name        string
		in          ContainerdInput
		runtime     string
		binary      string
		discard     bool
		wantVersion int64
	}{
		{"version 3", ContainerdInput{Major: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec}, "runc", al2023Runc, true, 3},
		{"version 3 nvidia", ContainerdInput{Major: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec, NvidiaRuntime: nvidiaBin}, "nvidia", nvidiaBin, true, 3},
		{"version 2 overlay, migrated", ContainerdInput{Major: 2, SandboxImage: al2023Pause, RuncBinary: al2023Runc, BaseRuntimeSpec: al2023Spec, Overlays: []ContainerdOverlay{{nodeConfig, v2Overlay}}}, "runc", al2023Runc, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Minor = minor // bin_dir or bin_dirs, for this containerd
			out, err := Containerd(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var mine map[string]any
			if err := toml.Unmarshal(out, &mine); err != nil {
				t.Fatal(err)
			}
			if mine["version"] != tc.wantVersion {
				t.Fatalf("rendered version %v, want %d", mine["version"], tc.wantVersion)
			}
			dir := t.TempDir()
			// Imports from the test's folder: the host's /etc/containerd/config.d
			// must not leak in.
			mine["imports"] = []any{filepath.Join(dir, "config.d", "*.toml")}
			cfg, err := toml.Marshal(mine)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "config.toml")
			if err := os.WriteFile(path, cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "--config", path, "config", "dump")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			dump, err := cmd.Output()
			if err != nil {
				t.Fatalf("containerd refused the config: %v\n%s\n%s", err, stderr.String(), cfg)
			}
			var got map[string]any
			if err := toml.Unmarshal(dump, &got); err != nil {
				t.Fatalf("config dump is not TOML: %v\n%s", err, dump)
			}
			at := func(path ...string) []string { return path } // a fresh slice each time
			images, rt := "io.containerd.cri.v1.images", criV3Runtime
			def := func(path ...string) []string {
				return append(at("plugins", rt, "containerd", "runtimes", tc.runtime), path...)
			}
			checks := []struct {
				path []string
				want any
			}{
				{at("version"), int64(3)},
				{at("plugins", images, "pinned_images", "sandbox"), al2023Pause},
				{at("plugins", images, "registry", "config_path"), "/etc/containerd/certs.d:/etc/docker/certs.d"},
				{at("plugins", images, "discard_unpacked_layers"), tc.discard},
				{at("plugins", rt, "enable_cdi"), true},
				{at("plugins", rt, "containerd", "default_runtime_name"), tc.runtime},
				{def("runtime_type"), runcShim},
				{def("base_runtime_spec"), al2023Spec},
				{def("options", "BinaryName"), tc.binary},
				{def("options", "SystemdCgroup"), true},
				{at("plugins", rt, "cni", "conf_dir"), "/etc/cni/net.d"},
				{at("grpc", "address"), "/run/containerd/containerd.sock"},
				{at("root"), "/var/lib/containerd"},
				{at("state"), "/run/containerd"},
			}
			// containerd 2.1 reads bin_dirs (and fills it from a bin_dir, with a
			// deprecation warning), 2.0 bin_dir. eksboot writes the key it reads.
			key := map[bool]string{true: "bin_dirs", false: "bin_dir"}[minor >= 1]
			if _, ok := dig(mine, "plugins", rt, "cni", key); !ok && tc.wantVersion == 3 {
				t.Errorf("containerd 2.%d: the rendered file has no cni.%s:\n%s", minor, key, cfg)
			}
			binDirs, ok := dig(got, "plugins", rt, "cni", "bin_dirs")
			if !ok {
				v, _ := dig(got, "plugins", rt, "cni", "bin_dir")
				binDirs = []any{v}
			}
			if !reflect.DeepEqual(binDirs, []any{"/opt/cni/bin"}) {
				t.Errorf("containerd runs with CNI binaries from %v, want [/opt/cni/bin]", binDirs)
			}
			for _, c := range checks {
				if v, _ := dig(got, c.path...); v != c.want {
					t.Errorf("containerd runs with %s = %v, want %v", strings.Join(c.path, "."), v, c.want)
				}
			}
			if t.Failed() {
				t.Logf("config:\n%s\ndump:\n%s", cfg, dump)
			}
		})
	}
}
