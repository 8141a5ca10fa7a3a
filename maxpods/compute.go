package maxpods

import (
	"errors"
	"fmt"
)

// The caps of max-pods-calculator.sh, which EKS managed node groups also apply: at
// most CapLowCPU pods on types with up to CapCPUThreshold vCPUs, CapHighCPU above.
const (
	CapLowCPU       = 110
	CapHighCPU      = 250
	CapCPUThreshold = 30
)

// ipsPerPrefix is the number of IPv4 addresses in the /28 prefix that prefix
// delegation puts in each secondary-IP slot.
const ipsPerPrefix = 16

// Options say how the VPC CNI is set up on the node, as max-pods-calculator.sh's
// options do. The zero value is the classic secondary-IP mode with the cap.
type Options struct {
	// PrefixDelegation: the VPC CNI hands out /28 prefixes (ENABLE_PREFIX_DELEGATION).
	// It applies only on nitro types with VPC CNI 1.9 or later, as in the calculator.
	PrefixDelegation bool
	// CNIVersion is the VPC CNI version; the zero value means recent enough for
	// prefix delegation.
	CNIVersion CNIVersion
	// CustomNetworking: pods take addresses from ENIConfig subnets, not from the
	// primary ENI (AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG): one ENI fewer.
	CustomNetworking bool
	// SecurityGroupsForPods: the trunk ENI of ENABLE_POD_ENI takes no pod addresses:
	// one ENI fewer.
	SecurityGroupsForPods bool
	// MaxENI is the VPC CNI's MAX_ENI (the calculator's --cni-max-eni); 0 means no
	// limit.
	MaxENI int
	// IPv6: an IPv6 cluster, where pods are bounded by the cap alone.
	IPv6 bool
	// Uncapped skips the 110/250 cap (the calculator's --show-max-allowed).
	Uncapped bool
}

// Result is a computed max pods and how it was reached.
type Result struct {
	// MaxPods is the answer.
	MaxPods int
	// Formula is the ENI formula with its numbers, e.g. "3 * (10 - 1) + 2 = 29"; for
	// IPv6 it says there is none.
	Formula string
	// Cap is the cap that was applied (CapLowCPU or CapHighCPU), 0 with Uncapped.
	Cap int
	// ENIs are the ENIs whose addresses go to pods.
	ENIs int
	// PrefixDelegation is set when prefix delegation was applied.
	PrefixDelegation bool
	// Steps explain, in order, how the options and the cap changed the number.
	Steps []string
}

// Compute works out max pods for an instance type with facts t, as
// max-pods-calculator.sh does: the ENIs are limited to MaxENI, lowered by one for
// custom networking and one for security groups for pods (never below 0); then
// ENIs*(IPv4PerENI-1)+2, or ENIs*((IPv4PerENI-1)*16)+2 with prefix delegation on a
// nitro type; then, unless Uncapped, at most 110 for types with up to 30 vCPUs and
// 250 above. With IPv6 the cap alone is the answer. The first address of each ENI is
// not given to pods; the +2 are the host-network aws-node and kube-proxy pods.
func Compute(t TypeInfo, o Options) (Result, error) {
	var r Result
	if o.MaxENI < 0 {
		return r, fmt.Errorf("max ENIs %d: want 0 (no limit) or more", o.MaxENI)
	}
	if o.IPv6 {
		if o.Uncapped {
			return r, errors.New("ipv6: pods are not limited by ENIs, so there is no uncapped value")
		}
		if o.CustomNetworking {
			return r, errors.New("ipv6: custom networking is not available on IPv6 clusters")
		}
		r.Formula = "IPv6: a /80 prefix per ENI, no ENI limit"
		return r, r.capAt(t.VCPUs, 1<<31-1)
	}
	if t.ENIs <= 0 || t.IPv4PerENI <= 0 {
		return r, fmt.Errorf("max pods: want positive ENIs and IPv4 addresses per ENI, got %d and %d", t.ENIs, t.IPv4PerENI)
	}
	r.ENIs = t.ENIs
	if o.MaxENI > 0 && o.MaxENI < r.ENIs {
		r.ENIs = o.MaxENI
		r.Steps = append(r.Steps, fmt.Sprintf("MAX_ENI %d: %d of the %d ENIs", o.MaxENI, r.ENIs, t.ENIs))
	}
	if o.CustomNetworking {
		r.ENIs--
		r.Steps = append(r.Steps, "custom networking: one ENI fewer (the primary ENI gives pods no addresses)")
	}
	if o.SecurityGroupsForPods {
		r.ENIs--
		r.Steps = append(r.Steps, "security groups for pods: one ENI fewer (the trunk ENI gives pods no addresses)")
	}
	if r.ENIs < 0 {
		r.ENIs = 0
	}
	if o.PrefixDelegation {
		switch {
		case !o.CNIVersion.supportsPrefixDelegation():
			r.Steps = append(r.Steps, fmt.Sprintf("prefix delegation not applied: VPC CNI %s is older than 1.9", o.CNIVersion))
		case t.Hypervisor != "nitro":
			r.Steps = append(r.Steps, fmt.Sprintf("prefix delegation not applied: hypervisor %q is not nitro", t.Hypervisor))
		default:
			r.PrefixDelegation = true
		}
	}
	n := r.ENIs*(t.IPv4PerENI-1) + 2
	r.Formula = fmt.Sprintf("%d * (%d - 1) + 2 = %d", r.ENIs, t.IPv4PerENI, n)
	if r.PrefixDelegation {
		n = r.ENIs*(t.IPv4PerENI-1)*ipsPerPrefix + 2
		r.Formula = fmt.Sprintf("%d * ((%d - 1) * %d) + 2 = %d", r.ENIs, t.IPv4PerENI, ipsPerPrefix, n)
	}
	if o.Uncapped {
		r.MaxPods = n
		r.Steps = append(r.Steps, "no cap (the maximum was asked for)")
		return r, nil
	}
	return r, r.capAt(t.VCPUs, n)
}

// capAt sets MaxPods to n, capped by the vCPU count.
func (r *Result) capAt(vcpus, n int) error {
	if vcpus <= 0 {
		return errors.New("cap: the 110/250 cap depends on the vCPU count, which is not known")
	}
	r.Cap, r.MaxPods = CapLowCPU, min(n, CapLowCPU)
	rel := "<="
	if vcpus > CapCPUThreshold {
		r.Cap, r.MaxPods, rel = CapHighCPU, min(n, CapHighCPU), ">"
	}
	what := "not reached"
	if r.MaxPods < n {
		what = fmt.Sprintf("gives %d", r.MaxPods)
	}
	r.Steps = append(r.Steps, fmt.Sprintf("cap %d (%d vCPUs %s %d): %s", r.Cap, vcpus, rel, CapCPUThreshold, what))
	return nil
}
