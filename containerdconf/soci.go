package containerdconf

import (
	"fmt"
	"io"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

// FastImagePull's node paths and endpoints.
const (
	// SOCISocket is the SOCI snapshotter's gRPC socket (its default address).
	SOCISocket = "/run/soci-snapshotter-grpc/soci-snapshotter-grpc.sock"
	// SOCIImageServiceEndpoint is the kubelet's imageServiceEndpoint with FastImagePull.
	SOCIImageServiceEndpoint = "unix://" + SOCISocket
	// SOCIContainerdDropInPath orders containerd after the SOCI snapshotter.
	SOCIContainerdDropInPath = "/etc/systemd/system/containerd.service.d/10-soci-snapshotter.conf"
	// SOCIConfigPath is the SOCI snapshotter's own configuration file.
	SOCIConfigPath = "/etc/soci-snapshotter-grpc/config.toml"
	// SOCIUnit is the SOCI snapshotter's service, which the node image ships.
	SOCIUnit = "soci-snapshotter.service"
	// SOCIGzipHelper is the parallel gzip the snapshotter decompresses layers with
	// when the image has it (else its own, in Go).
	SOCIGzipHelper = "/usr/bin/unpigz"
)

// The parallel pull/unpack settings nodeadm gives the SOCI snapshotter (its
// snapshotter/soci-snapshotter.config.toml): layers downloaded in 16 MB chunks, at
// most 20 at once per image and 12 unpacked at once per image, no limit across
// images, and the compressed layers dropped once unpacked.
const (
	SOCIChunkSize                = "16mb"
	SOCIDownloadsPerImage        = 20
	SOCIUnpacksPerImage          = 12
	SOCIUnlimited                = -1
	SOCIDiscardUnpackedLayers    = true
	SOCIContainerdImageService   = "/run/containerd/containerd.sock"
	SOCIContentStoreContainerd   = "containerd"
	sociGzipArgsDecompressStdout = "'-d', '-c'"
)

// SOCIConfig renders SOCIConfigPath: the content store is containerd's (the
// snapshotter and containerd share the pulled blobs), the CRI keychain takes the
// kubelet's registry credentials on its way to containerd's image service (the
// kubelet's imageServiceEndpoint is the snapshotter's socket), and images are pulled
// in parallel pull/unpack mode with nodeadm's settings. gzipHelper, when not "", is
// the program layers are decompressed with (SOCIGzipHelper, `-d -c`).
func SOCIConfig(gzipHelper string) []byte {
	var b strings.Builder
	b.WriteString("# The SOCI snapshotter's configuration, written by eksboot at every boot (FastImagePull).\n")
	b.WriteString("debug = false\n\n")
	fmt.Fprintf(&b, "[content_store]\ntype = %q\n\n", SOCIContentStoreContainerd)
	fmt.Fprintf(&b, "[cri_keychain]\nenable_keychain = true\nimage_service_path = %q\n\n", SOCIContainerdImageService)
	b.WriteString("[pull_modes.parallel_pull_unpack]\nenable = true\n")
	fmt.Fprintf(&b, "max_concurrent_downloads = %d\nmax_concurrent_downloads_per_image = %d\nconcurrent_download_chunk_size = %q\n",
		SOCIUnlimited, SOCIDownloadsPerImage, SOCIChunkSize)
	fmt.Fprintf(&b, "max_concurrent_unpacks = %d\nmax_concurrent_unpacks_per_image = %d\ndiscard_unpacked_layers = %t\n",
		SOCIUnlimited, SOCIUnpacksPerImage, SOCIDiscardUnpackedLayers)
	if gzipHelper != "" {
		fmt.Fprintf(&b, "\n[pull_modes.parallel_pull_unpack.decompress_streams.gzip]\npath = %q\nargs = [%s]\n", gzipHelper, sociGzipArgsDecompressStdout)
	}
	return []byte(b.String())
}

// FastImagePullOverlay returns the containerd configuration that FastImagePull adds,
// for the config version the node's config.toml has (2 for containerd 1 and for a
// containerd 2 node whose overlays say version = 2, else 3: the version Containerd
// picks):
//
//   - version 2: plugins."io.containerd.grpc.v1.cri".containerd.snapshotter = "soci";
//   - version 3: plugins."io.containerd.cri.v1.images".snapshotter = "soci";
//   - both: [proxy_plugins.soci] type = "snapshot", address = SOCISocket.
//
// The overlay has no version key. Put it before the user's spec.containerd.config
// overlays, so the user's settings win, as they do over nodeadm's template.
func FastImagePullOverlay(configVersion int) (ContainerdOverlay, error) {
	var snapshotter string
	switch configVersion {
	case 2:
		snapshotter = "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nsnapshotter = \"soci\"\n"
	case 3:
		snapshotter = "[plugins.\"io.containerd.cri.v1.images\"]\nsnapshotter = \"soci\"\n"
	default:
		return ContainerdOverlay{}, fmt.Errorf("FastImagePull: containerd config version %d: want 2 or 3", configVersion)
	}
	return ContainerdOverlay{
		Name: "spec.featureGates.FastImagePull",
		TOML: snapshotter + "\n[proxy_plugins.soci]\ntype = \"snapshot\"\naddress = \"" + SOCISocket + "\"\n",
	}, nil
}

// FastImagePullContainerdDropIn renders SOCIContainerdDropInPath: containerd
// requires soci-snapshotter.service and starts after it, so that the proxy plugin's
// socket exists when containerd loads it.
func FastImagePullContainerdDropIn() ([]byte, error) {
	return io.ReadAll(unit.Serialize([]*unit.UnitOption{
		unit.NewUnitOption("Unit", "Requires", "soci-snapshotter.service"),
		unit.NewUnitOption("Unit", "After", "soci-snapshotter.service"),
	}))
}
