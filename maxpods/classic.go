package maxpods

import "fmt"

// TypeInfo are the EC2 facts the calculator needs, as DescribeInstanceTypes reports
// them for one instance type.
type TypeInfo struct {
	// Hypervisor is "nitro", "xen", or empty when EC2 reports none (bare metal).
	Hypervisor string `json:"hypervisor"`
	// VCPUs is the default number of vCPUs.
	VCPUs int `json:"vcpus"`
	// MemoryMiB is the memory in MiB (0: not known). The max pods calculator does not
	// use it; FastImagePull's threshold does.
	MemoryMiB int64 `json:"memoryMiB,omitempty"`
	// ENIs is the maximum number of network interfaces on the default network card.
	ENIs int `json:"enis"`
	// IPv4PerENI is the maximum number of private IPv4 addresses per interface.
	IPv4PerENI int `json:"ipv4PerENI"`
	// BareMetal is set for bare-metal types (informational: the calculator, and so
	// Compute, decides prefix delegation on Hypervisor alone).
	BareMetal bool `json:"bareMetal"`
}

// Classic is bootstrap.sh's fallback for types missing from the table
// (max-pods-calculator.sh --cni-version 1.10.0 --show-max-allowed): the secondary-IP
// formula ENIs*(IPv4PerENI-1)+2, without prefix delegation and without the 110/250
// cap. The first address of each ENI is not given to pods; the +2 are the
// host-network aws-node and kube-proxy pods. Only ENIs and IPv4PerENI are used; it
// returns an error when either is not positive.
func Classic(t TypeInfo) (int, error) {
	if t.ENIs <= 0 || t.IPv4PerENI <= 0 {
		return 0, fmt.Errorf("classic max pods: want positive ENIs and IPv4 addresses per ENI, got %d and %d", t.ENIs, t.IPv4PerENI)
	}
	return t.ENIs*(t.IPv4PerENI-1) + 2, nil
}
