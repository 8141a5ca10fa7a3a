// Package siminstance is the data of a simulated EC2 instance: what its metadata
// service serves. The fake IMDS (imds/imdstest) serves it over HTTP for tests, the
// demo and the node in a box; render answers a script's metadata reads from it
// in-process. It is data only, so render has it without the fake server.
package siminstance

// Instance is the data of one simulated instance. The JSON tags equal the keys
// of the "imds" object of a golden case.json, so that object can be decoded
// straight into an Instance.
type Instance struct {
	// InstanceType is served at latest/meta-data/instance-type.
	InstanceType string `json:"instance-type"`
	// Region is served at latest/meta-data/placement/region and in the identity document.
	Region string `json:"region"`
	// AvailabilityZone is served at latest/meta-data/placement/availability-zone.
	AvailabilityZone string `json:"availability-zone"`
	// AvailabilityZoneID is served at latest/meta-data/placement/availability-zone-id.
	AvailabilityZoneID string `json:"availability-zone-id"`
	// LocalIPv4 is served at latest/meta-data/local-ipv4 and the interface's local-ipv4s.
	LocalIPv4 string `json:"local-ipv4"`
	// LocalHostname is served at latest/meta-data/local-hostname and hostname.
	LocalHostname string `json:"local-hostname"`
	// MAC is the primary interface's MAC address, served at latest/meta-data/mac.
	MAC string `json:"mac"`
	// VPCIPv4CIDRBlocks are the VPC's IPv4 CIDR blocks; at least one is required.
	VPCIPv4CIDRBlocks []string `json:"vpc-ipv4-cidr-blocks"`
	// SubnetIPv4CIDRBlock is the subnet's IPv4 CIDR block.
	SubnetIPv4CIDRBlock string `json:"subnet-ipv4-cidr-block"`
	// InstanceID is served at latest/meta-data/instance-id.
	InstanceID string `json:"instance-id"`
	// AMIID is served at latest/meta-data/ami-id.
	AMIID string `json:"ami-id"`
	// AccountID is the owner account, in the identity document and the interface's owner-id.
	AccountID string `json:"account-id"`
	// InterfaceID is the primary interface's ENI ID.
	InterfaceID string `json:"interface-id"`
	// SubnetID is the primary interface's subnet.
	SubnetID string `json:"subnet-id"`
	// VPCID is the primary interface's VPC.
	VPCID string `json:"vpc-id"`
	// Domain is served at latest/meta-data/services/domain.
	Domain string `json:"domain"`
	// Partition is served at latest/meta-data/services/partition.
	Partition string `json:"partition"`
	// IPv6s are the interface's IPv6 addresses; when empty, no IPv6 paths are served.
	IPv6s []string `json:"ipv6s"`
	// VPCIPv6CIDRBlocks are the VPC's IPv6 CIDR blocks (served only with IPv6s).
	VPCIPv6CIDRBlocks []string `json:"vpc-ipv6-cidr-blocks"`
	// SubnetIPv6CIDRBlocks are the subnet's IPv6 CIDR blocks (served only with IPv6s).
	SubnetIPv6CIDRBlocks []string `json:"subnet-ipv6-cidr-blocks"`
	// UserData is served at latest/user-data; when empty, that path answers 404.
	UserData string `json:"user-data"`
	// Overrides replace the body of a path (key with or without a leading
	// "/", e.g. "latest/meta-data/local-ipv4"); a nil value makes the path
	// answer 404. Folder listings are not changed by overrides.
	Overrides map[string]*string `json:"overrides"`
}

// Default returns the m5.large in us-west-2 of the golden case
// 01-m5large-usw2-vpc192.
func Default() Instance {
	return Instance{
		InstanceType:        "m5.large",
		Region:              "us-west-2",
		AvailabilityZone:    "us-west-2a",
		AvailabilityZoneID:  "uswest-az1",
		LocalIPv4:           "192.168.45.67",
		LocalHostname:       "ip-192-168-45-67.us-west-2.compute.internal",
		MAC:                 "0a:1b:2c:3d:4e:5f",
		VPCIPv4CIDRBlocks:   []string{"192.168.0.0/16"},
		SubnetIPv4CIDRBlock: "192.168.32.0/19",
		InstanceID:          "i-0123456789abcdef0",
		AMIID:               "ami-0b67ce88915e3b7fd",
		AccountID:           "111122223333",
		InterfaceID:         "eni-0123456789abcdef0",
		SubnetID:            "subnet-0123456789abcdef0",
		VPCID:               "vpc-0123456789abcdef0",
		Domain:              "amazonaws.com",
		Partition:           "aws",
	}
}
