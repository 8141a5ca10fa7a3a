package containerdconf

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// What the nodeadm unit cases assert on the merged config: containerd 1 (version 2)
// with a user mirror (TestContainerdConfigWithUserConfigAndFastImagePullFeature) and
// containerd 2 (version 3, TestContainerdConfig Case7).
func TestFastImagePullOverlayMerged(t *testing.T) {
	get := func(t *testing.T, tree map[string]any, path ...string) any {
		t.Helper()
		var v any = tree
		for _, k := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: not a table at %q", strings.Join(path, "/"), k)
			}
			v = m[k]
		}
		return v
	}
	for _, c := range []struct {
		name        string
		major       int
		version     int
		user        string
		snapshotter []string
	}{
		{
			"containerd 1", 1, 2, "[plugins.'io.containerd.grpc.v1.cri'.registry.mirrors]\n\"docker.io\" = [\"https://my-custom-mirror.example.com\"]\n",
			[]string{"plugins", "io.containerd.grpc.v1.cri", "containerd", "snapshotter"},
		},
		{"containerd 2", 2, 3, "", []string{"plugins", "io.containerd.cri.v1.images", "snapshotter"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Containerd(ContainerdInput{
				Major: c.major, SandboxImage: "localhost/kubernetes/pause:latest", SOCI: true,
				Overlays: []ContainerdOverlay{{Name: "spec.containerd.config", TOML: c.user}},
			})
			if err != nil {
				t.Fatal(err)
			}
			var tree map[string]any
			if err := toml.Unmarshal(out, &tree); err != nil {
				t.Fatal(err)
			}
			if got := get(t, tree, c.snapshotter...); got != "soci" {
				t.Errorf("%s = %v, want soci", strings.Join(c.snapshotter, "/"), got)
			}
			if got := get(t, tree, "proxy_plugins", "soci", "type"); got != "snapshot" {
				t.Errorf("proxy_plugins.soci.type = %v", got)
			}
			if got := get(t, tree, "proxy_plugins", "soci", "address"); got != SOCISocket {
				t.Errorf("proxy_plugins.soci.address = %v", got)
			}
			if c.user != "" {
				m := get(t, tree, "plugins", "io.containerd.grpc.v1.cri", "registry", "mirrors", "docker.io")
				if l, ok := m.([]any); !ok || len(l) != 1 || l[0] != "https://my-custom-mirror.example.com" {
					t.Errorf("user mirror lost: %v", m)
				}
			}
		})
	}
	if _, err := FastImagePullOverlay(1); err == nil {
		t.Error("version 1: no error")
	}
	// The user's settings win over FastImagePull's, as over nodeadm's template.
	out, err := Containerd(ContainerdInput{Major: 2, SOCI: true, Overlays: []ContainerdOverlay{{
		Name: "spec.containerd.config",
		TOML: "[plugins.'io.containerd.cri.v1.images']\nsnapshotter = 'overlayfs'\n",
	}}})
	if err != nil || !strings.Contains(string(out), "snapshotter = 'overlayfs'") || !strings.Contains(string(out), "[proxy_plugins.soci]") {
		t.Errorf("user's snapshotter: %v\n%s", err, out)
	}
}

// TestSOCIConfig: the snapshotter's file is TOML with nodeadm's parallel-pull
// settings, the gzip helper only when given (the real snapshotter's config package
// loads it in e2e/soci_test.go).
func TestSOCIConfig(t *testing.T) {
	for _, helper := range []string{"", SOCIGzipHelper} {
		var c struct {
			Debug        bool
			ContentStore struct{ Type string } `toml:"content_store"`
			CRIKeychain  struct {
				EnableKeychain   bool   `toml:"enable_keychain"`
				ImageServicePath string `toml:"image_service_path"`
			} `toml:"cri_keychain"`
			PullModes struct {
				Parallel struct {
					Enable                    bool
					MaxConcurrentDownloads    int    `toml:"max_concurrent_downloads"`
					MaxConcurrentDownloadsPer int    `toml:"max_concurrent_downloads_per_image"`
					ChunkSize                 string `toml:"concurrent_download_chunk_size"`
					MaxConcurrentUnpacks      int    `toml:"max_concurrent_unpacks"`
					MaxConcurrentUnpacksPer   int    `toml:"max_concurrent_unpacks_per_image"`
					DiscardUnpackedLayers     bool   `toml:"discard_unpacked_layers"`
					DecompressStreams         map[string]struct {
						Path string
						Args []string
					} `toml:"decompress_streams"`
				} `toml:"parallel_pull_unpack"`
			} `toml:"pull_modes"`
		}
		dec := toml.NewDecoder(strings.NewReader(string(SOCIConfig(helper))))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%q: %v\n%s", helper, err, SOCIConfig(helper))
		}
		p := c.PullModes.Parallel
		if c.ContentStore.Type != "containerd" || !c.CRIKeychain.EnableKeychain || c.CRIKeychain.ImageServicePath != "/run/containerd/containerd.sock" ||
			!p.Enable || p.MaxConcurrentDownloads != -1 || p.MaxConcurrentDownloadsPer != 20 || p.ChunkSize != "16mb" ||
			p.MaxConcurrentUnpacks != -1 || p.MaxConcurrentUnpacksPer != 12 || !p.DiscardUnpackedLayers {
			t.Errorf("%q: %+v", helper, c)
		}
		if gz, ok := p.DecompressStreams["gzip"]; ok != (helper != "") || gz.Path != helper || (ok && strings.Join(gz.Args, " ") != "-d -c") {
			t.Errorf("%q: decompress streams %+v", helper, p.DecompressStreams)
		}
	}
}

func TestFastImagePullContainerdDropIn(t *testing.T) {
	got, err := FastImagePullContainerdDropIn()
	if want := "[Unit]\nRequires=soci-snapshotter.service\nAfter=soci-snapshotter.service\n"; err != nil || string(got) != want {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
	if SOCIImageServiceEndpoint != "unix:///run/soci-snapshotter-grpc/soci-snapshotter-grpc.sock" {
		t.Error(SOCIImageServiceEndpoint)
	}
}
