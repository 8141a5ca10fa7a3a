package kubeletconf

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/eksboot/eksboot/internal/quote"
)

// Input is everything per-node that goes into kubelet-config.json.
type Input struct {
	// Base is the kubelet-config.json that bootstrap.sh's edits apply to: the
	// node's own file as the image and the user data before bootstrap.sh left it
	// (CheckConfigFile), whose fields bootstrap.sh does not set stay as they are.
	// Empty: the AMI template (assets.KubeletConfig).
	// +optional
	Base CheckedOverlay

	// ClusterDNS is the list of cluster DNS server IP addresses, written to
	// .clusterDNS in this order (bootstrap.sh: --dns-cluster-ip split on ',', or the
	// address derived from the service CIDR). At least one is required.
	ClusterDNS []string

	// MaxPods is the node's max pods (from the ENI table or the calculator). It is
	// always used for the kubeReserved memory (11*MaxPods+255 Mi), even when
	// SetMaxPods is false, as bootstrap.sh does. It must be at least 1.
	MaxPods int32

	// SetMaxPods writes MaxPods to .maxPods (bootstrap.sh --use-max-pods true, the
	// default). When false .maxPods keeps the template's value.
	SetMaxPods bool

	// CPUs is the number of CPUs available to the process (bootstrap.sh's nproc),
	// used for the kubeReserved CPU. It must be at least 1.
	CPUs int

	// ProviderID is the node's provider ID, aws:///<availability-zone>/<instance-id>,
	// written to .providerID. It must not be empty.
	ProviderID string

	// KubeletVersion is the kubelet's version; it must be set. For 1.22.0 <=
	// version < 1.27.0 Build sets kubeAPIQPS 10 and kubeAPIBurst 20 unless the
	// template already sets them.
	KubeletVersion Version

	// ReservedCgroups sets .systemReservedCgroup to "/system" and
	// .kubeReservedCgroup to "/runtime". bootstrap.sh does so unless --reserved-cpus
	// appears in the kubelet extra arguments.
	ReservedCgroups bool

	// ShutdownGracePeriod, when positive, is .shutdownGracePeriod: how long the
	// kubelet delays the node's shutdown to terminate its pods (graceful node
	// shutdown). bootstrap.sh never set it; zero leaves it unset (off).
	ShutdownGracePeriod time.Duration

	// ShutdownGracePeriodCriticalPods is .shutdownGracePeriodCriticalPods: the part
	// of ShutdownGracePeriod kept for critical pods. It must not exceed
	// ShutdownGracePeriod.
	ShutdownGracePeriodCriticalPods time.Duration

	// FeatureGates are set in .featureGates, each unless the base sets it (the
	// kubelet table's gates for the version, KubeletRow.FeatureGates, and the
	// image's): bootstrap.sh never touched .featureGates, so a gate the image or the
	// user data set stays as they set it.
	// +optional
	FeatureGates map[string]bool
}

// Values that Build writes, as bootstrap.sh does on the containerd path.
const (
	// CgroupDriver is the kubelet's cgroup driver (.cgroupDriver).
	CgroupDriver = "systemd"
	// SystemReservedCgroup is .systemReservedCgroup when Input.ReservedCgroups is set.
	SystemReservedCgroup = "/system"
	// KubeReservedCgroup is .kubeReservedCgroup when Input.ReservedCgroups is set.
	KubeReservedCgroup = "/runtime"
	// ReservedEphemeralStorage is .kubeReserved["ephemeral-storage"].
	ReservedEphemeralStorage = "1Gi"
	// DefaultKubeAPIQPS is .kubeAPIQPS for kubelets 1.22.0 <= v < 1.27.0.
	DefaultKubeAPIQPS = 10
	// DefaultKubeAPIBurst is .kubeAPIBurst for kubelets 1.22.0 <= v < 1.27.0.
	DefaultKubeAPIBurst = 20
)

// EvictionHard returns bootstrap.sh's hard eviction thresholds, which replace the
// template's .evictionHard as a whole.
func EvictionHard() map[string]string {
	return map[string]string{
		"memory.available":  "100Mi",
		"nodefs.available":  "10%",
		"nodefs.inodesFree": "5%",
	}
}

// Build returns the kubelet configuration for in: in.Base, or the AMI template
// (assets.KubeletConfig), with bootstrap.sh's edits applied (applyEdits). The
// template is not decoded at each call: zz_generated_template.go has it decoded
// (kubelet_test.go's buildFromTemplate decodes it and must agree).
func Build(in Input) (*KubeletConfiguration, error) {
	version, err := in.validate()
	if err != nil {
		return nil, err
	}
	base := templateConfig()
	if in.Base.Len() > 0 {
		if base, err = in.Base.decode(); err != nil {
			return nil, fmt.Errorf("base: %w", err)
		}
	}
	return applyEdits(base, in, version), nil
}

// applyEdits applies bootstrap.sh's containerd-path edits to cfg, in bootstrap.sh's
// order, and returns it:
//   - clusterDNS = in.ClusterDNS;
//   - for kubelets 1.22.0 <= v < 1.27.0, kubeAPIQPS 10 and kubeAPIBurst 20 unless
//     the template sets them;
//   - evictionHard replaced by EvictionHard();
//   - kubeReserved replaced by {cpu: ReservedCPU(CPUs)m, ephemeral-storage: 1Gi,
//     memory: ReservedMemoryMiB(MaxPods)Mi};
//   - maxPods = in.MaxPods if in.SetMaxPods;
//   - providerID = in.ProviderID;
//   - cgroupDriver = systemd, and the reserved cgroups if in.ReservedCgroups.
func applyEdits(cfg *KubeletConfiguration, in Input, version Version) *KubeletConfiguration {
	row, _ := Kubelet(version)
	cfg.ClusterDNS = append([]string(nil), in.ClusterDNS...)
	if row.KubeAPIQPS {
		if cfg.KubeAPIQPS == nil {
			qps := int32(DefaultKubeAPIQPS)
			cfg.KubeAPIQPS = &qps
		}
		// kubeAPIBurst is not a pointer: 0 is "unset" for the kubelet as for jq's //.
		if cfg.KubeAPIBurst == 0 {
			cfg.KubeAPIBurst = DefaultKubeAPIBurst
		}
	}
	cfg.EvictionHard = EvictionHard()
	cfg.KubeReserved = map[string]string{
		"cpu":               strconv.Itoa(ReservedCPU(in.CPUs)) + "m",
		"ephemeral-storage": ReservedEphemeralStorage,
		"memory":            strconv.Itoa(ReservedMemoryMiB(int(in.MaxPods))) + "Mi",
	}
	if in.SetMaxPods {
		cfg.MaxPods = in.MaxPods
	}
	cfg.ProviderID = in.ProviderID
	cfg.CgroupDriver = CgroupDriver
	if in.ReservedCgroups {
		cfg.SystemReservedCgroup = SystemReservedCgroup
		cfg.KubeReservedCgroup = KubeReservedCgroup
	}
	for gate, on := range in.FeatureGates {
		if cfg.FeatureGates == nil {
			cfg.FeatureGates = map[string]bool{}
		}
		if _, set := cfg.FeatureGates[gate]; !set {
			cfg.FeatureGates[gate] = on
		}
	}
	if in.ShutdownGracePeriod > 0 {
		cfg.ShutdownGracePeriod = Duration{Duration: in.ShutdownGracePeriod}
		cfg.ShutdownGracePeriodCriticalPods = Duration{Duration: in.ShutdownGracePeriodCriticalPods}
	}
	return cfg
}

// validate checks every field of in and returns the parsed kubelet version.
func (in Input) validate() (Version, error) {
	var errs []error
	if len(in.ClusterDNS) == 0 {
		errs = append(errs, errors.New("clusterDNS: at least one address is required"))
	}
	for i, ip := range in.ClusterDNS {
		if _, err := netip.ParseAddr(ip); err != nil {
			errs = append(errs, fmt.Errorf("clusterDNS[%d]: %s is not an IP address", i, quote.Value(ip)))
		}
	}
	if in.MaxPods < 1 {
		errs = append(errs, fmt.Errorf("maxPods: must be at least 1, got %d", in.MaxPods))
	}
	if in.CPUs < 1 {
		errs = append(errs, fmt.Errorf("cpus: must be at least 1, got %d", in.CPUs))
	}
	if in.ProviderID == "" {
		errs = append(errs, errors.New("providerID: must not be empty"))
	}
	if in.ShutdownGracePeriod < 0 || in.ShutdownGracePeriodCriticalPods < 0 {
		errs = append(errs, errors.New("shutdownGracePeriod: must not be negative"))
	} else if in.ShutdownGracePeriodCriticalPods > in.ShutdownGracePeriod {
		errs = append(errs, fmt.Errorf("shutdownGracePeriodCriticalPods: %v exceeds shutdownGracePeriod %v", in.ShutdownGracePeriodCriticalPods, in.ShutdownGracePeriod))
	}
	if in.KubeletVersion.IsZero() {
		errs = append(errs, errors.New("kubeletVersion: must be set"))
	}
	return in.KubeletVersion, errors.Join(errs...)
}

// ReservedCPU returns the CPU, in millicores, that bootstrap.sh reserves for
// Kubernetes system daemons on a node with cpus CPUs: 6% of the first core, 1% of
// the second, 0.5% each of the third and fourth and 0.25% of every further core.
// Each range is truncated to whole millicores separately, as bootstrap.sh's shell
// arithmetic does (5 CPUs: 82, not 82.5). It returns 0 for cpus < 1.
func ReservedCPU(cpus int) int {
	total := cpus * 1000
	// Ranges in millicores and the share reserved in each, in hundredths of a percent.
	ranges := []struct{ start, end, basisPoints int }{
		{0, 1000, 600},
		{1000, 2000, 100},
		{2000, 4000, 50},
		{4000, total, 25},
	}
	reserved := 0
	for _, r := range ranges {
		if total > r.start {
			reserved += (min(total, r.end) - r.start) * r.basisPoints / 100 / 100
		}
	}
	return reserved
}

// ReservedMemoryMiB returns the memory, in MiB, that bootstrap.sh reserves for
// Kubernetes system daemons on a node running up to maxPods pods: 11*maxPods + 255.
func ReservedMemoryMiB(maxPods int) int {
	return 11*maxPods + 255
}
