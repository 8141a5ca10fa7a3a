// Package eksapi learns what a node needs to know about its cluster (API server
// endpoint, CA, service CIDRs, IP family) from eks:DescribeCluster, for the many
// launch templates that call bootstrap.sh with only a cluster name. bootstrap.sh ran
// `aws eks wait cluster-active` and `aws eks describe-cluster` for this; eksboot makes
// the one REST call itself, signed with aws-sdk-go-v2's SigV4 signer (client.go says
// why not with the SDK's EKS client), under its own retry policy (see Discover), built
// so that thousands of nodes booting at once do not overrun the API.
//
// Callers depend on the API interface so that they can fake it; eksapitest is a fake
// EKS endpoint on 127.0.0.1 for tests and simulations.
package eksapi

import (
	"context"
)

// Cluster statuses that matter to a joining node (eks:DescribeCluster's status).
const (
	StatusActive   = "ACTIVE"
	StatusCreating = "CREATING"
	StatusUpdating = "UPDATING"
	StatusPending  = "PENDING"
	StatusDeleting = "DELETING"
	StatusFailed   = "FAILED"
)

// Cluster is the part of eks:DescribeCluster's answer that bootstrap.sh used. Fields
// the API leaves out (JSON null) are empty.
type Cluster struct {
	// Name is the cluster's name.
	Name string `json:"name"`
	// Status is the cluster's status, e.g. ACTIVE or CREATING.
	Status string `json:"status"`
	// Endpoint is the API server URL (certificateAuthority is empty until ACTIVE).
	Endpoint string `json:"endpoint"`
	// CAData is certificateAuthority.data: the base64 of the cluster CA's PEM.
	CAData string `json:"certificateAuthorityData"`
	// ServiceIPv4CIDR and ServiceIPv6CIDR are kubernetesNetworkConfig's service CIDRs.
	ServiceIPv4CIDR string `json:"serviceIpv4Cidr,omitempty"`
	ServiceIPv6CIDR string `json:"serviceIpv6Cidr,omitempty"`
	// IPFamily is kubernetesNetworkConfig.ipFamily: ipv4 or ipv6.
	IPFamily string `json:"ipFamily,omitempty"`
	// ID is the cluster ID (set for local clusters on AWS Outposts).
	ID string `json:"id,omitempty"`
	// OutpostARN is outpostConfig.outpostArns[0], set only for local clusters on
	// AWS Outposts.
	OutpostARN string `json:"outpostArn,omitempty"`
}

// API is what eksboot needs from EKS (an interface so callers can fake it).
type API interface {
	// DescribeCluster makes one eks:DescribeCluster call for the cluster name. It
	// does not retry; Discover does.
	DescribeCluster(ctx context.Context, name string) (*Cluster, error)
}
