package kubeletconf

import (
	"slices"
)

// FeatureGate is one gate of NodeConfig's spec.featureGates that nodeadm knows.
type FeatureGate struct {
	// Name is the key in spec.featureGates.
	Name string
	// Default is nodeadm's value when the gate is not set.
	Default bool
	// Doc says what nodeadm does when the gate is on.
	Doc string
	// Since is the nodeadm version that has the gate: "81fec2e8" for the commit
	// eksboot's peer cases come from, "later" for gates only newer nodeadm knows.
	Since string
}

// FeatureGates are the gates nodeadm knows (awslabs/amazon-eks-ami nodeadm
// internal/api/featuregates.go and the Feature constants of internal/api). nodeadm
// checks gate names only in its CRD schema: at run time an unknown name is
// silently off, so eksboot takes an unknown name for a typo.
var FeatureGates = []FeatureGate{
	{
		Name: "InstanceIdNodeName", Default: false, Since: "81fec2e8",
		Doc: "The node's name is its EC2 instance ID (kubelet --hostname-override=<instance id>) " +
			"instead of its private DNS name, and ec2:DescribeInstances is not called. " +
			"The node role's access entry or aws-auth mapping must then allow the instance-ID name.",
	},
	{
		Name: "FastImagePull", Default: false, Since: "81fec2e8",
		Doc: "Images are pulled by the SOCI snapshotter in parallel pull/unpack mode, on nodes with " +
			"at least 4 vCPUs and 7 GiB of memory (below that the gate is off: nodeadm says nothing, eksboot warns): containerd's " +
			"CRI snapshotter is soci with proxy plugin soci (FastImagePullOverlay), the kubelet's " +
			"imageServiceEndpoint is SOCIImageServiceEndpoint, containerd.service requires and follows " +
			"soci-snapshotter.service (FastImagePullContainerdDropIn), and " +
			"/etc/soci-snapshotter-grpc/config.toml is written.",
	},
	{
		Name: "OSManagedNoManageENIs", Default: false, Since: "later",
		Doc: "Secondary ENIs tagged node.k8s.amazonaws.com/no_manage=true are configured by " +
			"systemd-networkd instead of being left to the VPC CNI (needs ec2:DescribeNetworkInterfaces).",
	},
}

// KnownFeatureGate reports whether nodeadm knows the gate name (exact spelling).
func KnownFeatureGate(name string) bool {
	return slices.ContainsFunc(FeatureGates, func(g FeatureGate) bool { return g.Name == name })
}

// FastImagePullEffective reports whether nodeadm turns FastImagePull on for a node
// whose gate is enabled: at least 4000 millicores and at least 7 GiB of online
// memory (below that the gate is silently off, as in nodeadm).
func FastImagePullEffective(enabled bool, milliCPU, memoryBytes int64) bool {
	return enabled && milliCPU >= 4000 && memoryBytes >= 7<<30
}
