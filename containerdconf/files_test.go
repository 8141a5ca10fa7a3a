package containerdconf

import (
	"slices"
	"strings"
	"testing"
)

// TestFilesNameTheirUnits: every file containerd's renderer returns, written or
// removed, names the units that read it (containerd.service; the snapshotter's
// config soci-snapshotter.service too; the AMI's sandbox-image.service the kubelet,
// as before the split), and the files under /etc/systemd/system ask for a
// daemon-reload; together a full node and a bare one cover every path.
func TestFilesNameTheirUnits(t *testing.T) {
	full := Node{
		Config:          ContainerdInput{Major: 2, Minor: 2, SandboxImage: al2023Pause, SOCI: true},
		BaseRuntimeSpec: true, SOCIGzip: SOCIGzipHelper, SandboxImageUnit: []byte("[Unit]\n"),
	}
	bare := Node{Config: ContainerdInput{Major: 1, SandboxImage: pauseUSW2}}
	want := map[string][]string{
		ConfigPath:               {Unit},
		BaseRuntimeSpecPath:      {Unit},
		SOCIConfigPath:           {SOCIUnit, Unit},
		SOCIContainerdDropInPath: {Unit},
		SandboxImageUnitPath:     {"kubelet.service"},
	}
	seen := map[string]bool{}
	for name, n := range map[string]Node{"full": full, "bare": bare} {
		files, err := Files(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			seen[f.Path] = true
			if !slices.Equal(f.Units, want[f.Path]) {
				t.Errorf("%s: %s names %q, want %q", name, f.Path, f.Units, want[f.Path])
			}
			if r := strings.HasPrefix(f.Path, "/etc/systemd/system/"); f.Reload != r {
				t.Errorf("%s: %s Reload %v, want %v", name, f.Path, f.Reload, r)
			}
			if f.Remove != (f.Data == nil) {
				t.Errorf("%s: %s Remove %v with %d bytes", name, f.Path, f.Remove, len(f.Data))
			}
		}
		if name == "full" {
			for _, f := range files {
				if f.Path == ConfigPath && !strings.Contains(string(f.Data), BaseRuntimeSpecPath) {
					t.Errorf("config.toml does not name the base runtime spec:\n%s", f.Data)
				}
			}
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("no %s", p)
		}
	}
}
