package bootstrap

import "github.com/eksboot/eksboot/userdata"

// KubeletStart is when `eksboot init` has the kubelet start, and why. Early: its
// config phase queues the kubelet's start (containerd's with it: Requires=) without
// waiting for it, and the kubelet runs as soon as the units it is ordered after are
// up, before cloud-init's config and final stages; otherwise the run phase starts
// it, after cloud-final. The run phase checks in both cases that it stays up. The
// zero value is bootstrap's run (the bootstrap.sh shim, in cloud-final), which
// starts the kubelet itself.
type KubeletStart struct {
	Early bool
	Why   string
}

// String is the order and its reason ("" for the zero value), as the journal,
// the status and render say it.
func (k KubeletStart) String() string {
	switch {
	case k.Why == "":
		return ""
	case k.Early:
		return "before cloud-final: " + k.Why
	}
	return "after cloud-final: " + k.Why
}

// KubeletStartFor decides when init starts the kubelet for user data of these
// parts: before cloud-final when cloud-init acts on none of them
// (userdata.EarlyKubelet) unless afterCloudFinal (the image's or the user's
// EKSBOOT_KUBELET_START=after-cloud-final) asks for nodeadm's order, else after
// cloud-final.
func KubeletStartFor(parts []userdata.Part, afterCloudFinal bool) KubeletStart {
	early, why := userdata.EarlyKubelet(parts)
	if early && afterCloudFinal {
		return KubeletStart{Why: "asked for (--kubelet-start or EKSBOOT_KUBELET_START after-cloud-final), although " + why}
	}
	return KubeletStart{Early: early, Why: why}
}
