package nodesys

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFilesNameTheirUnits: every system file, written or removed, names the units
// that read it (the manager's environment both units it reaches; /etc/hosts none,
// read at each lookup), and the files systemd itself reads ask for a daemon-reload;
// together a full node and a bare one cover every path.
func TestFilesNameTheirUnits(t *testing.T) {
	env, err := InstanceEnvironment(map[string]map[string]string{"default": {"A": "1"}, "kubelet": {"B": "2"}, "containerd": {"C": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := ResolvedConfig([]string{"10.0.0.2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := Node{Environment: env, Resolved: resolved, Hosts: []byte("10.0.0.1 api\n"), BPFMount: true, ShutdownDelay: time.Minute}
	want := map[string][]string{
		ManagerEnvironmentPath:    {"containerd.service", "kubelet.service"},
		KubeletEnvironmentPath:    {"kubelet.service"},
		ContainerdEnvironmentPath: {"containerd.service"},
		HostsPath:                 nil,
		ResolvedDropInPath:        {ResolvedUnit},
		BPFMountPath:              {BPFMountUnit},
		LogindDropIn:              {LogindUnit},
	}
	seen := map[string]bool{}
	for name, n := range map[string]Node{"full": full, "bare": {}} {
		files, err := Files(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			seen[f.Path] = true
			if !slices.Equal(f.Units, want[f.Path]) {
				t.Errorf("%s: %s names %q, want %q", name, f.Path, f.Units, want[f.Path])
			}
			if r := strings.HasPrefix(f.Path, "/etc/systemd/system/") || f.Path == ManagerEnvironmentPath; f.Reload != r {
				t.Errorf("%s: %s Reload %v, want %v", name, f.Path, f.Reload, r)
			}
			if f.Remove != (f.Data == nil) {
				t.Errorf("%s: %s Remove %v with %d bytes", name, f.Path, f.Remove, len(f.Data))
			}
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("no %s", p)
		}
	}
}
