package bootstrap

import (
	"fmt"
	"net/netip"
	"strings"
)

// ClusterDNS returns the cluster DNS addresses for the kubelet's clusterDNS, by
// bootstrap.sh's rules: the --dns-cluster-ip list as given (given); else for IPv6 and for an
// IPv4 service CIDR the CIDR's tenth address (the address EKS gives kube-dns); else
// 172.20.0.10 when any VPC IPv4 CIDR is in 10.0.0.0/8 (EKS then picks the service
// CIDR 172.20.0.0/16) and 10.100.0.10 otherwise.
//
// bootstrap.sh built the CIDR's address as text (first three octets + ".10", or the IPv6
// prefix + "a"); that differs only for CIDRs whose network address does not end in
// .0 or "::", where its result lay outside the CIDR. See docs/compat.md.
func ClusterDNS(given []string, c ClusterFacts, vpcCIDRs []string) ([]string, error) {
	if len(given) > 0 {
		return given, nil
	}
	if c.IPFamily == "ipv6" {
		if !c.ServiceIPv6CIDR.IsValid() {
			return nil, fmt.Errorf("--ip-family ipv6 needs --service-ipv6-cidr or --dns-cluster-ip")
		}
		ip, err := tenth(c.ServiceIPv6CIDR)
		if err != nil {
			return nil, fmt.Errorf("--service-ipv6-cidr %s: %w", c.ServiceIPv6CIDR, err)
		}
		return []string{ip}, nil
	}
	if c.ServiceIPv4CIDR.IsValid() {
		ip, err := tenth(c.ServiceIPv4CIDR)
		if err != nil {
			return nil, fmt.Errorf("--service-ipv4-cidr %s: %w", c.ServiceIPv4CIDR, err)
		}
		return []string{ip}, nil
	}
	for _, cidr := range vpcCIDRs {
		if strings.HasPrefix(cidr, "10.") {
			return []string{"172.20.0.10"}, nil
		}
	}
	return []string{"10.100.0.10"}, nil
}

// tenth returns the address 10 after the network address of p.
func tenth(p netip.Prefix) (string, error) {
	a := p.Masked().Addr()
	for range 10 {
		a = a.Next()
		if !a.IsValid() || !p.Contains(a) {
			return "", fmt.Errorf("too small to hold a DNS service address")
		}
	}
	return a.String(), nil
}
