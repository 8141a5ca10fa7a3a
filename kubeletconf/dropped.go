package kubeletconf

// A droppedFlag is a kubelet flag that kubelets no longer have but whose job is done
// another way on an EKS node, so that eksboot leaves it out, with a warning, instead
// of refusing the user data that carries it (a kubelet exits on an unknown flag).
// It is dropped only for a kubelet that lacks it, or from minor since on when since
// is set; docs/compat.md lists them.
type droppedFlag struct {
	name  string
	why   string
	since int
	// when reports whether a value of the flag is dropped (nil: any value).
	when func(value string) bool
}

// Reasons, shared by flags of one kind.
const (
	whyDockershim = "a dockershim flag (removed with dockershim in 1.24): containerd is the runtime, and the pod network is the CNI plugin containerd runs"
	whyCAdvisor   = "a cAdvisor flag (removed in 1.37): the kubelet takes container stats from the runtime"
	whyKlog       = "a klog flag (removed in 1.26): the kubelet logs to standard error, which the journal keeps"
)

// droppedFlags are the removed flags eksboot drops. The cAdvisor and klog names are
// those kubeletflags records as removed in 1.37 and 1.26; the dockershim names went
// in 1.24, before kubeletflags' first minor.
var droppedFlags = []droppedFlag{
	{name: "container-runtime", why: "the only runtime is the one the unit's --container-runtime-endpoint names (removed in 1.27)"},
	{name: "pod-infra-container-image", why: "the sandbox image is containerd's (sandbox_image, which eksboot sets), and the runtime keeps it from garbage collection (removed in 1.35)"},
	{name: "cloud-config", why: "the in-tree cloud providers are gone: the kubelet runs with --cloud-provider=external (removed in 1.34)"},
	{name: "cloud-provider", why: "the in-tree AWS cloud provider was removed in 1.27: eksboot runs the kubelet with --cloud-provider=external", since: 27, when: func(v string) bool { return v != "" && v != "external" }},
	{name: "master-service-namespace", why: "it had no effect (removed in 1.27)"},
	{name: "azure-container-registry-config", why: "it configured Azure's registry credentials (removed in 1.30)"},
	{name: "iptables-drop-bit", why: "the kubelet no longer manages these iptables chains (removed in 1.31)"},
	{name: "iptables-masquerade-bit", why: "the kubelet no longer manages these iptables chains (removed in 1.31)"},
	{name: "keep-terminated-pod-volumes", why: "a debugging flag whose effect went with it (removed in 1.31)"},

	{name: "docker-endpoint", why: whyDockershim},
	{name: "image-pull-progress-deadline", why: whyDockershim},
	{name: "network-plugin", why: whyDockershim},
	{name: "network-plugin-mtu", why: whyDockershim},
	{name: "cni-bin-dir", why: whyDockershim},
	{name: "cni-conf-dir", why: whyDockershim},
	{name: "cni-cache-dir", why: whyDockershim},
	{name: "experimental-dockershim-root-directory", why: whyDockershim},
	{name: "non-masquerade-cidr", why: whyDockershim},
	{name: "docker", why: whyDockershim},
	{name: "docker-root", why: whyDockershim},
	{name: "docker-only", why: whyDockershim},
	{name: "docker-tls", why: whyDockershim},
	{name: "docker-tls-ca", why: whyDockershim},
	{name: "docker-tls-cert", why: whyDockershim},
	{name: "docker-tls-key", why: whyDockershim},
	{name: "docker-env-metadata-whitelist", why: whyDockershim},
	{name: "dynamic-config-dir", why: "dynamic kubelet configuration was removed in 1.24; the configuration is kubelet-config.json"},

	{name: "application-metrics-count-limit", why: whyCAdvisor},
	{name: "boot-id-file", why: whyCAdvisor},
	{name: "container-hints", why: whyCAdvisor},
	{name: "containerd", why: whyCAdvisor},
	{name: "containerd-namespace", why: whyCAdvisor},
	{name: "enable-load-reader", why: whyCAdvisor},
	{name: "event-storage-age-limit", why: whyCAdvisor},
	{name: "event-storage-event-limit", why: whyCAdvisor},
	{name: "global-housekeeping-interval", why: whyCAdvisor},
	{name: "log-cadvisor-usage", why: whyCAdvisor},
	{name: "machine-id-file", why: whyCAdvisor},
	{name: "storage-driver-buffer-duration", why: whyCAdvisor},
	{name: "storage-driver-db", why: whyCAdvisor},
	{name: "storage-driver-host", why: whyCAdvisor},
	{name: "storage-driver-password", why: whyCAdvisor},
	{name: "storage-driver-secure", why: whyCAdvisor},
	{name: "storage-driver-table", why: whyCAdvisor},
	{name: "storage-driver-user", why: whyCAdvisor},

	{name: "add-dir-header", why: whyKlog},
	{name: "alsologtostderr", why: whyKlog},
	{name: "log-backtrace-at", why: whyKlog},
	{name: "log-dir", why: whyKlog},
	{name: "log-file", why: whyKlog},
	{name: "log-file-max-size", why: whyKlog},
	{name: "logtostderr", why: whyKlog},
	{name: "one-output", why: whyKlog},
	{name: "skip-headers", why: whyKlog},
	{name: "skip-log-headers", why: whyKlog},
	{name: "stderrthreshold", why: whyKlog},
}

// removedHints say what to do instead for removed flags eksboot refuses (their job
// has no equivalent eksboot could assume).
var removedHints = map[string]string{
	"register-schedulable":                   "register the node with a taint instead (--register-with-taints) or cordon it",
	"experimental-kernel-memcg-notification": "set kernelMemcgNotification in the kubelet configuration (spec.kubelet.config) instead",
}

// dropped returns the entry for flag name with value, or nil.
func dropped(name, value string) *droppedFlag {
	for i := range droppedFlags {
		if d := &droppedFlags[i]; d.name == name && (d.when == nil || d.when(value)) {
			return d
		}
	}
	return nil
}
