package kubeletconf

import (
	"slices"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/nodefile"
)

// TestFilesNameTheirUnits: every file the kubelet's renderer returns, written or
// removed, names kubelet.service, and the unit and its drop-ins, which systemd reads,
// ask for a daemon-reload; together a full node and a bare one cover every path.
func TestFilesNameTheirUnits(t *testing.T) {
	cfg, err := Build(benchInput)
	if err != nil {
		t.Fatal(err)
	}
	row, _ := Kubelet(benchInput.KubeletVersion)
	overlay, err := CheckOverlay(map[string]any{"maxPods": 110.0})
	if err != nil {
		t.Fatal(err)
	}
	full := Node{
		ConfigDir: true, NodeConfig: overlay,
		CA: []byte("ca"), Kubeconfig: Kubeconfig{Server: "https://example.com", ClusterName: "c", Region: "us-west-2"},
		ClientCert: "/var/lib/kubelet/pki/kubelet-client-current.pem", BootstrapClusterName: "cluster-id",
		Config: cfg, Args: "--v=2", ExtraArgs: "--max-pods=3", CredentialProvider: &row,
	}
	bare := Node{CA: []byte("ca"), Kubeconfig: full.Kubeconfig, Config: cfg, Args: "--v=2"}
	paths := map[string]bool{}
	for name, n := range map[string]Node{"full": full, "bare": bare} {
		files, err := Files(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			paths[f.Path] = true
			if !slices.Equal(f.Units, []string{Unit}) {
				t.Errorf("%s: %s names %q, want kubelet.service", name, f.Path, f.Units)
			}
			if want := strings.HasPrefix(f.Path, "/etc/systemd/system/"); f.Reload != want {
				t.Errorf("%s: %s Reload %v, want %v", name, f.Path, f.Reload, want)
			}
			if f.Remove != (f.Data == nil) {
				t.Errorf("%s: %s Remove %v with %d bytes", name, f.Path, f.Remove, len(f.Data))
			}
		}
		if name == "full" {
			kubeconfig, bootstrap := file(t, files, KubeconfigPath), file(t, files, BootstrapKubeconfigPath)
			if !strings.Contains(string(kubeconfig.Data), "client-certificate: "+full.ClientCert) || !strings.Contains(string(bootstrap.Data), "cluster-id") {
				t.Errorf("local cluster: kubeconfig\n%s\nbootstrap kubeconfig\n%s", kubeconfig.Data, bootstrap.Data)
			}
			if ca := file(t, files, DefaultCAFile); !ca.Secret {
				t.Error("the CA is not marked secret")
			}
			if d := file(t, files, NodeConfigDropInPath); !strings.Contains(string(d.Data), `"maxPods": 110`) || !strings.Contains(string(d.Data), `"kind": "KubeletConfiguration"`) {
				t.Errorf("the NodeConfig's drop-in:\n%s", d.Data)
			}
		}
	}
	want := []string{DefaultCAFile, KubeconfigPath, ConfigPath, UnitPath, ArgsDropInPath, BootstrapKubeconfigPath, CredentialProviderConfig, ExtraArgsDropInPath, NodeConfigDropInPath}
	for _, p := range want {
		if !paths[p] {
			t.Errorf("no %s", p)
		}
	}
	if len(paths) != len(want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
}

func file(t *testing.T, files []nodefile.File, path string) nodefile.File {
	t.Helper()
	for _, f := range files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("no %s", path)
	return nodefile.File{}
}
