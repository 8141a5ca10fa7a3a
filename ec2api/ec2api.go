// Package ec2api makes the two EC2 calls bootstrap.sh makes: DescribeInstances, for
// the node's private DNS name (the kubelet's node name), and DescribeInstanceTypes,
// for the facts behind the max-pods calculator when the embedded table does not know
// the instance type. Callers depend on the API interface so that they can fake it;
// ec2test is a fake EC2 endpoint on 127.0.0.1.
//
// Why not aws-sdk-go-v2's EC2 client: its package is the largest in the SDK (the
// types of every EC2 shape, its serializers, endpoint tables built at package
// initialisation) and it brought encoding/xml and smithy's XML decoder. Linked, it
// cost every start, `eksboot version` included, about 0.15 ms of package init and
// 1 MB of binary (docs/performance.md), for two calls most boots never make. Each
// call is one form-encoded POST of the EC2 Query API with an XML answer, so query.go
// makes it with the SDK's own parts: the aws.Config (credentials, HTTP client,
// endpoint settings, retryer) and the SigV4 signer; xmlread.go reads the answer,
// bounded. The tests keep the SDK's EC2 client as the oracle: the same answers
// from the fake, the same signature, the same endpoints for every partition.
package ec2api

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/maxpods"
)

// MaxAttempts bounds the attempts of each EC2 call (the first try included) in a
// config made by LoadConfig.
const MaxAttempts = 3

// ErrEmptyDNSName means EC2 reported no private DNS name for the instance (yet).
// bootstrap.sh retries in that case; callers may too.
var ErrEmptyDNSName = errors.New("empty private DNS name")

// ErrBadAnswer means EC2's answer is not one EC2 gives to the request: another
// instance than the one asked for, or several. Callers do not retry it.
var ErrBadAnswer = errors.New("an answer EC2 does not give")

// ErrUnknownInstanceType means EC2 does not know the instance type
// (InvalidInstanceType, or an empty answer).
var ErrUnknownInstanceType = errors.New("unknown instance type")

// API is what eksboot needs from EC2 (an interface so callers can fake it).
type API interface {
	// PrivateDNSName returns the private DNS name of instanceID.
	PrivateDNSName(ctx context.Context, instanceID string) (string, error)
	// InstanceTypeInfo returns the EC2 facts about instanceType that the max-pods
	// calculator needs.
	InstanceTypeInfo(ctx context.Context, instanceType string) (maxpods.TypeInfo, error)
}

var _ API = (*Client)(nil)

// LoadConfig returns the AWS config for EC2 calls in region: awsconf.Load (the
// environment's keys or the instance profile over imdsEndpoint, the AWS endpoint
// variables) with the SDK's standard retryer bounded to MaxAttempts attempts per
// call. An empty region falls back to AWS_REGION. Nothing is sent until a call is
// made; give each call a ctx with a deadline.
func LoadConfig(region, imdsEndpoint string) (aws.Config, error) {
	return LoadConfigFor(region, imdsEndpoint, false)
}

// LoadConfigFor is LoadConfig whose instance-profile read may fall back to IMDSv1
// when imdsV1Fallback (--imds-v1-fallback; awsconf.Options.IMDSv1Fallback) says so
// and AWS_EC2_METADATA_V1_DISABLED does not forbid it. LoadConfig is IMDSv2 only.
func LoadConfigFor(region, imdsEndpoint string, imdsV1Fallback bool) (aws.Config, error) {
	cfg, err := awsconf.Load(awsconf.Options{Region: region, IMDSEndpoint: imdsEndpoint, IMDSv1Fallback: imdsV1Fallback, MaxAttempts: MaxAttempts})
	if err != nil {
		return aws.Config{}, fmt.Errorf("aws config for region %q: %w", region, err)
	}
	return cfg, nil
}
