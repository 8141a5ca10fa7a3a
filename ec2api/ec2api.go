// Package ec2api makes the two EC2 calls bootstrap.sh makes: DescribeInstances, for
// the node's private DNS name (the kubelet's node name), and DescribeInstanceTypes,
// for the facts behind the max-pods calculator when the embedded table does not know
// the instance type. It uses aws-sdk-go-v2; callers depend on the API interface so
// that they can fake it.
package ec2api

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/maxpods"
)

// MaxAttempts bounds the attempts of each EC2 call (the first try included) in a
// config made by LoadConfig.
const MaxAttempts = 3

// ErrEmptyDNSName means EC2 reported no private DNS name for the instance (yet).
// bootstrap.sh retries in that case; callers may too.
var ErrEmptyDNSName = errors.New("empty private DNS name")

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

// Client implements API with an aws-sdk-go-v2 EC2 client.
type Client struct {
	ec2 *ec2.Client
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

// New returns a Client that makes its calls with cfg (usually from LoadConfig),
// spacing the retries of throttled calls with WithThrottleBackoff(ThrottleWindow),
// then applying optFns.
func New(cfg aws.Config, optFns ...func(*ec2.Options)) *Client {
	fns := append([]func(*ec2.Options){WithThrottleBackoff(ThrottleWindow)}, optFns...)
	return &Client{ec2: ec2.NewFromConfig(cfg, fns...)}
}
