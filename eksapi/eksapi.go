// Package eksapi learns what a node needs to know about its cluster (API server
// endpoint, CA, service CIDRs, IP family) from eks:DescribeCluster, for the many
// launch templates that call bootstrap.sh with only a cluster name. bootstrap.sh ran
// `aws eks wait cluster-active` and `aws eks describe-cluster` for this; eksboot does
// it with aws-sdk-go-v2's EKS client and its own retry policy (see Discover), built so
// that thousands of nodes booting at once do not overrun the API.
//
// Callers depend on the API interface so that they can fake it; eksapitest is a fake
// EKS endpoint on 127.0.0.1 for tests and simulations.
package eksapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
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

// Client implements API with an aws-sdk-go-v2 EKS client.
type Client struct {
	eks *eks.Client
}

var _ API = (*Client)(nil)

// New returns a Client that calls EKS with cfg (region, credentials, and the SDK's
// endpoint settings such as AWS_ENDPOINT_URL_EKS). The SDK's own retries are turned
// off: every call is one request, so that Discover's retry budget and backoff are the
// only ones in play.
func New(cfg aws.Config) *Client {
	return &Client{eks: eks.NewFromConfig(cfg, func(o *eks.Options) { o.Retryer = aws.NopRetryer{} })}
}

// DescribeCluster implements API. An EKS error is wrapped as is, so errors.As finds
// the smithy.APIError (and its code, e.g. AccessDeniedException).
func (c *Client) DescribeCluster(ctx context.Context, name string) (*Cluster, error) {
	if name == "" {
		return nil, errors.New("describe cluster: empty cluster name")
	}
	out, err := c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		return nil, err
	}
	if out.Cluster == nil {
		return nil, fmt.Errorf("describe cluster %s: the answer has no cluster", name)
	}
	return fromSDK(out.Cluster), nil
}

// fromSDK picks bootstrap.sh's fields out of the SDK's cluster.
func fromSDK(in *types.Cluster) *Cluster {
	c := &Cluster{
		Name:     aws.ToString(in.Name),
		Status:   string(in.Status),
		Endpoint: aws.ToString(in.Endpoint),
		ID:       aws.ToString(in.Id),
	}
	if in.CertificateAuthority != nil {
		c.CAData = aws.ToString(in.CertificateAuthority.Data)
	}
	if n := in.KubernetesNetworkConfig; n != nil {
		c.ServiceIPv4CIDR = aws.ToString(n.ServiceIpv4Cidr)
		c.ServiceIPv6CIDR = aws.ToString(n.ServiceIpv6Cidr)
		c.IPFamily = string(n.IpFamily)
	}
	if o := in.OutpostConfig; o != nil && len(o.OutpostArns) > 0 {
		c.OutpostARN = o.OutpostArns[0]
	}
	return c
}
