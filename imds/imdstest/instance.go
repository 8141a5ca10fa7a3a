// Package imdstest is a fake EC2 instance metadata service (IMDSv2) for tests
// and for the in-process demo of eksboot.
//
// A Server is a real HTTP server on 127.0.0.1 that answers the same paths with
// the same bodies as the simulated metadata service the golden bootstrap.sh
// cases were recorded against (shared/golden/README.md, "Metadata paths served
// from imds"): a token from PUT /latest/api/token, every GET must carry it
// (else 401), unknown paths answer 404, folders list their children, and
// per-path overrides replace a body or turn a path into a 404.
//
// Faults are programmed per path (Server.SetFaults): a delay, a hang, a
// closed connection, an error status (401, 404, 429, 500, 503...), an HTML or
// empty body, an expired token, an answer far too large (streamed), a
// redirect, each for a number of requests or for good,
// so "N failures then success" is one call. Every request is logged with the
// fault it met (Server.Requests).
//
// The package does not import testing, so non-test code may use it.
package imdstest

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/eksboot/eksboot/internal/siminstance"
)

// Instance is the data of one simulated instance (internal/siminstance, which render
// uses without the server).
type Instance = siminstance.Instance

// DefaultInstance returns the m5.large in us-west-2 of the golden case
// 01-m5large-usw2-vpc192.
func DefaultInstance() Instance { return siminstance.Default() }

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

// buildTree returns every path the instance serves (no leading "/") and its body.
func buildTree(in Instance) (map[string]string, error) {
	if len(in.VPCIPv4CIDRBlocks) == 0 {
		return nil, fmt.Errorf("imdstest: instance has no vpc-ipv4-cidr-blocks")
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
		applyOverride(tree, k, in.Overrides[k])
	}
	return tree, nil
}

// applyOverride replaces the body of path, or removes the path when body is nil.
func applyOverride(tree map[string]string, path string, body *string) {
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
