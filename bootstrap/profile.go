package bootstrap

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/eksboot/eksboot/kubeletconf"
)

// Image profile names (--image-profile).
const (
	ProfileAL2    = "al2"
	ProfileAL2023 = "al2023"
)

// Profile is one kind of node image: what its kubelet and containerd need that
// another image's do not. It is the one place that holds each image's defaults; the
// kubelet version's own rules are kubeletconf.Kubelet's.
type Profile struct {
	// Name is ProfileAL2 or ProfileAL2023.
	Name string
	// Reason says how the profile was chosen (logged).
	Reason string

	// ContainerdMajor is the containerd major version assumed when the image says
	// nothing (no containerd-version.txt, no containerd to ask): 1 (containerd 1.7,
	// config version 2) on AL2, 2 (config version 3) on AL2023.
	ContainerdMajor int
	// SandboxImage is the pause image containerd runs pods with when no pause flag
	// or PAUSE_CONTAINER_IMAGE is given. "" (AL2): the region's private ECR
	// eks/pause, which the AL2 image's sandbox-image.service pulls with the node's
	// ECR credentials at boot. AL2023 caches and pins the pause image at build time
	// (/etc/eks/pause.tar) and has no such unit: containerd pulls a sandbox image
	// without credentials, so the private ECR image would never start a pod.
	SandboxImage string
	// KubeconfigAuth is the kubeconfig's exec credential plugin (kubeletconf.Auth*).
	KubeconfigAuth string
	// RuntimeCgroups is the kubelet's --runtime-cgroups ("" for none): AL2023 runs
	// containerd in runtime.slice (containerd.service.d/00-runtime-slice.conf).
	RuntimeCgroups string
	// BaseRuntimeSpec: containerd's default runtime gets the base OCI spec of
	// /etc/containerd/base-runtime-spec.json (RLIMIT_NOFILE 65536/1048576).
	BaseRuntimeSpec bool
	// OwnsCredentialProviderConfig: eksboot writes
	// /etc/eks/image-credential-provider/config.json at every boot, for the
	// kubelet's version (AL2023 ships only the provider binary). On AL2 the image
	// ships the file; eksboot writes it only when the image has none.
	OwnsCredentialProviderConfig bool
	// PodInfraFlagAsNodeadm: --pod-infra-container-image only while it has an
	// effect (before 1.29), as nodeadm; else while the kubelet has the flag, as
	// bootstrap.sh (it passed it on every version).
	PodInfraFlagAsNodeadm bool
	// CredentialProvidersGate: the KubeletCredentialProviders gate is set on the
	// kubelets that need it (before 1.28), as nodeadm does.
	CredentialProvidersGate bool
	// RuncBinary is the image's runc, named in containerd's config when the image
	// has it ("": containerd runs the runc of its PATH).
	RuncBinary string
	// BPFMountUnit: the image's systemd does not mount the BPF file system itself,
	// so eksboot installs sys-fs-bpf.mount (--mount-bpf-fs), as bootstrap.sh's
	// mount-bpf-fs did on Amazon Linux 2 (systemd 219). Today's systemd (AL2023's
	// 252, Debian's, Ubuntu's) mounts bpffs at /sys/fs/bpf at boot as one of its API
	// file systems and refuses a mount unit for it ("Cannot create mount unit for
	// API file system /sys/fs/bpf. Refusing.").
	BPFMountUnit bool
	// KubeletConfigDir: the kubelet reads the image's drop-in configuration
	// directory (--config-dir kubeletconf.ConfigDropInDir) on a kubelet that has
	// one (KubeletRow.ConfigDir), and a NodeConfig's spec.kubelet.config goes to its
	// drop-in, as nodeadm runs it. AL2 images have no such directory and bootstrap.sh
	// never passed the flag: the AL2 kubelet reads kubelet-config.json alone.
	KubeletConfigDir bool
}

// ConfigDir reports whether the kubelet of row runs with a drop-in configuration
// directory on this image.
func (p Profile) ConfigDir(row kubeletconf.KubeletRow) bool {
	return p.KubeletConfigDir && row.ConfigDir
}

// WantsBPFMountUnit reports whether the run installs sys-fs-bpf.mount: on an image
// whose systemd needs it (BPFMountUnit), when --mount-bpf-fs asks for it (mount) and
// no bpf file system is mounted nor the unit there (mounted). It is pure.
func (p Profile) WantsBPFMountUnit(mount, mounted bool) bool {
	return p.BPFMountUnit && mount && !mounted
}

// profiles holds each image profile's defaults.
var profiles = map[string]Profile{
	ProfileAL2: {
		Name:            ProfileAL2,
		ContainerdMajor: 1,
		KubeconfigAuth:  kubeletconf.AuthIAMAuthenticator,
		BPFMountUnit:    true,
	},
	ProfileAL2023: {
		Name:                         ProfileAL2023,
		ContainerdMajor:              2,
		SandboxImage:                 "localhost/kubernetes/pause:latest",
		KubeconfigAuth:               kubeletconf.AuthAWSCLI,
		RuntimeCgroups:               "/runtime.slice/containerd.service",
		BaseRuntimeSpec:              true,
		OwnsCredentialProviderConfig: true,
		PodInfraFlagAsNodeadm:        true,
		CredentialProvidersGate:      true,
		RuncBinary:                   "/usr/sbin/runc",
		KubeletConfigDir:             true,
	},
}

// ProfileNames lists the values of --image-profile.
func ProfileNames() []string { return []string{ProfileAL2, ProfileAL2023} }

// lookupProfile returns the named profile.
func lookupProfile(name, reason string) (Profile, bool) {
	p, ok := profiles[name]
	p.Reason = reason
	return p, ok
}

// detectProfile chooses the profile from the root's /etc/os-release (nil: the
// root has none). It is pure.
//   - Amazon Linux 2 (ID=amzn, VERSION_ID=2): al2.
//   - Amazon Linux 2023 (ID=amzn, VERSION_ID=2023): al2023.
//   - Any other OS (a custom image, Debian, Ubuntu, Bottlerocket-like): al2023,
//     the layout of today's EKS images, which such images follow.
//   - No os-release at all: a bare root (a test or staging folder, not an image):
//     al2, bootstrap.sh's layout, as eksboot always wrote.
func detectProfile(osRelease []byte) Profile {
	if osRelease == nil {
		p, _ := lookupProfile(ProfileAL2, "no /etc/os-release under the root: a bare root, bootstrap.sh's AL2 layout")
		return p
	}
	id, version := osReleaseField(osRelease, "ID"), osReleaseField(osRelease, "VERSION_ID")
	switch {
	case id == "amzn" && version == "2":
		p, _ := lookupProfile(ProfileAL2, "os-release: Amazon Linux 2")
		return p
	case id == "amzn" && version == "2023":
		p, _ := lookupProfile(ProfileAL2023, "os-release: Amazon Linux 2023")
		return p
	}
	p, _ := lookupProfile(ProfileAL2023, fmt.Sprintf("os-release ID=%q VERSION_ID=%q is no EKS image: the AL2023 layout", id, version))
	return p
}

// osReleaseField returns the unquoted value of key in an os-release file.
func osReleaseField(b []byte, key string) string {
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(s.Text()), "=")
		if !ok || k != key {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		return v
	}
	return ""
}
