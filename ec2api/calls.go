package ec2api

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/maxpods"
)

// PrivateDNSName returns the PrivateDnsName that DescribeInstances reports for
// instanceID. An empty name, or an answer without the instance, is an error wrapping
// ErrEmptyDNSName. An EC2 error is wrapped as is, so its code (e.g.
// "UnauthorizedOperation", "InvalidInstanceID.NotFound") shows in the message and
// errors.As finds the smithy.APIError.
func (c *Client) PrivateDNSName(ctx context.Context, instanceID string) (string, error) {
	if instanceID == "" {
		return "", errors.New("describe instance: empty instance ID")
	}
	out, err := c.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{instanceID}})
	if err != nil {
		return "", fmt.Errorf("describe instance %s: %w", instanceID, err)
	}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if aws.ToString(in.InstanceId) != instanceID {
				continue
			}
			name := aws.ToString(in.PrivateDnsName)
			if name == "" {
				return "", fmt.Errorf("describe instance %s: %w", instanceID, ErrEmptyDNSName)
			}
			return name, nil
		}
	}
	return "", fmt.Errorf("describe instance %s: instance not in the answer: %w", instanceID, ErrEmptyDNSName)
}

// InstanceTypeInfo returns the facts DescribeInstanceTypes reports for instanceType:
// hypervisor, default vCPUs, IPv4 addresses per interface, and the maximum number of
// interfaces on the default network card (or of the instance, when EC2 lists no
// cards). An unknown type (InvalidInstanceType, or an empty answer) is an error
// wrapping ErrUnknownInstanceType; other EC2 errors are wrapped as is.
func (c *Client) InstanceTypeInfo(ctx context.Context, instanceType string) (maxpods.TypeInfo, error) {
	if instanceType == "" {
		return maxpods.TypeInfo{}, fmt.Errorf("describe instance type: empty name: %w", ErrUnknownInstanceType)
	}
	out, err := c.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{
		InstanceTypes: []types.InstanceType{types.InstanceType(instanceType)},
	})
	if err != nil {
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidInstanceType" {
			return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: %w: %w", instanceType, ErrUnknownInstanceType, err)
		}
		return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: %w", instanceType, err)
	}
	for _, it := range out.InstanceTypes {
		if string(it.InstanceType) == instanceType {
			info, err := typeInfo(it)
			if err != nil {
				return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: %w", instanceType, err)
			}
			return info, nil
		}
	}
	return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: not in the answer: %w", instanceType, ErrUnknownInstanceType)
}

// typeInfo picks the calculator's facts out of one DescribeInstanceTypes entry. Facts
// EC2 leaves out are zero (maxpods.Classic rejects missing ENI or IPv4 counts).
func typeInfo(it types.InstanceTypeInfo) (maxpods.TypeInfo, error) {
	info := maxpods.TypeInfo{Hypervisor: string(it.Hypervisor)}
	if it.VCpuInfo != nil {
		info.VCPUs = int(aws.ToInt32(it.VCpuInfo.DefaultVCpus))
	}
	ni := it.NetworkInfo
	if ni == nil {
		return maxpods.TypeInfo{}, errors.New("no network info in the answer")
	}
	info.IPv4PerENI = int(aws.ToInt32(ni.Ipv4AddressesPerInterface))
	if len(ni.NetworkCards) == 0 {
		info.ENIs = int(aws.ToInt32(ni.MaximumNetworkInterfaces))
		return info, nil
	}
	def := aws.ToInt32(ni.DefaultNetworkCardIndex)
	for _, card := range ni.NetworkCards {
		if aws.ToInt32(card.NetworkCardIndex) == def {
			info.ENIs = int(aws.ToInt32(card.MaximumNetworkInterfaces))
			return info, nil
		}
	}
	return maxpods.TypeInfo{}, fmt.Errorf("default network card %d not among the %d cards in the answer", def, len(ni.NetworkCards))
}
