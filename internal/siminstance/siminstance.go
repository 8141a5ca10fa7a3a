// Package siminstance is a simulated EC2 instance: its data and the paths its
// metadata service serves (Paths). The fake IMDS (imds/imdstest) serves them over
// HTTP for tests, the demo and the node in a box; render answers a script's metadata
// reads from them in-process, without the server.
package siminstance

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

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

// orderedTree is a path -> body map that remembers the order paths were
// first added in, which decides the order of folder listings.
type orderedTree struct {
	keys []string
	vals map[string]string
}

func (t *orderedTree) set(k, v string) {
	if _, ok := t.vals[k]; !ok {
		t.keys = append(t.keys, k)
	}
	t.vals[k] = v
}

// Paths returns every path the instance's metadata service serves (no leading "/",
// such as "latest/meta-data/mac") and its body: the values, a listing for every
// folder, the identity document, the user data when there is some, then the
// Overrides.
func Paths(in Instance) (map[string]string, error) {
	if len(in.VPCIPv4CIDRBlocks) == 0 {
		return nil, fmt.Errorf("siminstance: instance has no vpc-ipv4-cidr-blocks")
	}
	t := &orderedTree{vals: map[string]string{}}
	const md = "latest/meta-data/"
	t.set(md+"ami-id", in.AMIID)
	t.set(md+"instance-id", in.InstanceID)
	t.set(md+"instance-type", in.InstanceType)
	t.set(md+"local-ipv4", in.LocalIPv4)
	t.set(md+"local-hostname", in.LocalHostname)
	t.set(md+"hostname", in.LocalHostname)
	t.set(md+"mac", in.MAC)
	t.set(md+"placement/region", in.Region)
	t.set(md+"placement/availability-zone", in.AvailabilityZone)
	t.set(md+"placement/availability-zone-id", in.AvailabilityZoneID)
	t.set(md+"services/domain", in.Domain)
	t.set(md+"services/partition", in.Partition)
	ifp := md + "network/interfaces/macs/" + in.MAC + "/"
	t.set(md+"network/interfaces/macs/", in.MAC+"/")
	t.set(ifp+"device-number", "0")
	t.set(ifp+"interface-id", in.InterfaceID)
	t.set(ifp+"local-ipv4s", in.LocalIPv4)
	t.set(ifp+"local-hostname", in.LocalHostname)
	t.set(ifp+"mac", in.MAC)
	t.set(ifp+"owner-id", in.AccountID)
	t.set(ifp+"subnet-id", in.SubnetID)
	t.set(ifp+"subnet-ipv4-cidr-block", in.SubnetIPv4CIDRBlock)
	t.set(ifp+"vpc-id", in.VPCID)
	t.set(ifp+"vpc-ipv4-cidr-block", in.VPCIPv4CIDRBlocks[0])
	t.set(ifp+"vpc-ipv4-cidr-blocks", strings.Join(in.VPCIPv4CIDRBlocks, "\n"))
	if len(in.IPv6s) > 0 {
		t.set(ifp+"ipv6s", strings.Join(in.IPv6s, "\n"))
		if len(in.VPCIPv6CIDRBlocks) > 0 {
			t.set(ifp+"vpc-ipv6-cidr-blocks", strings.Join(in.VPCIPv6CIDRBlocks, "\n"))
		}
		if len(in.SubnetIPv6CIDRBlocks) > 0 {
			t.set(ifp+"subnet-ipv6-cidr-blocks", strings.Join(in.SubnetIPv6CIDRBlocks, "\n"))
		}
	}
	t.set("latest/dynamic/instance-identity/document", IdentityDocument(in))
	if in.UserData != "" {
		t.set("latest/user-data", in.UserData)
	}
	addListings(t)

	tree := t.vals
	keys := make([]string, 0, len(in.Overrides))
	for k := range in.Overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ApplyOverride(tree, k, in.Overrides[k])
	}
	return tree, nil
}

// ApplyOverride replaces the body of path in tree (a Paths map; path with or without
// a leading "/"), or removes the path when body is nil.
func ApplyOverride(tree map[string]string, path string, body *string) {
	k := strings.TrimLeft(path, "/")
	if body == nil {
		delete(tree, k)
		return
	}
	tree[k] = *body
}

// addListings adds a body for every folder that has no body yet: its children
// one per line, in the order they were first added, sub-folders ending in "/".
func addListings(t *orderedTree) {
	var folders []string
	children := map[string][]string{}
	for _, k := range t.keys {
		parts := strings.Split(k, "/")
		for i := 1; i < len(parts); i++ {
			parent := strings.Join(parts[:i], "/") + "/"
			child := parts[i]
			if i < len(parts)-1 {
				child += "/"
			}
			if child == "" || child == "/" {
				continue
			}
			list, seen := children[parent]
			if !seen {
				folders = append(folders, parent)
			}
			if !contains(list, child) {
				children[parent] = append(list, child)
			}
		}
	}
	for _, f := range folders {
		if _, ok := t.vals[f]; !ok {
			t.set(f, strings.Join(children[f], "\n"))
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// IdentityDocument returns the body of latest/dynamic/instance-identity/document
// for in, in the layout the golden fake used: two-space indent, keys in this
// order, non-ASCII characters escaped. The keys in absent (e.g. "privateIp")
// are left out, for a document that lacks them (with Instance.Overrides or
// Server.SetOverride).
func IdentityDocument(in Instance, absent ...string) string {
	str := func(s string) *string { return &s }
	type field struct {
		key string
		val *string // nil: JSON null
	}
	fields := []field{
		{"accountId", str(in.AccountID)},
		{"architecture", str("x86_64")},
		{"availabilityZone", str(in.AvailabilityZone)},
		{"billingProducts", nil},
		{"devpayProductCodes", nil},
		{"marketplaceProductCodes", nil},
		{"imageId", str(in.AMIID)},
		{"instanceId", str(in.InstanceID)},
		{"instanceType", str(in.InstanceType)},
		{"kernelId", nil},
		{"pendingTime", str("2026-01-01T00:00:00Z")},
		{"privateIp", str(in.LocalIPv4)},
		{"ramdiskId", nil},
		{"region", str(in.Region)},
		{"version", str("2017-09-30")},
	}
	fields = slices.DeleteFunc(fields, func(f field) bool { return slices.Contains(absent, f.key) })
	var b strings.Builder
	b.WriteString("{\n")
	for i, f := range fields {
		b.WriteString("  ")
		b.WriteString(quoteASCII(f.key))
		b.WriteString(": ")
		if f.val == nil {
			b.WriteString("null")
		} else {
			b.WriteString(quoteASCII(*f.val))
		}
		if i < len(fields)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}")
	return b.String()
}

// quoteASCII returns s as a JSON string that uses only printable ASCII:
// everything outside " ".."~" is escaped, as \uXXXX (UTF-16) where JSON has
// no shorter escape.
func quoteASCII(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= ' ' && r <= '~':
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default: // invalid UTF-8 arrives here as U+FFFD
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
