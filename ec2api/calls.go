package ec2api

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
	"github.com/eksboot/eksboot/maxpods"
)

// PrivateDNSName returns the PrivateDnsName that DescribeInstances reports for
// instanceID. An empty name, or an answer without the instance, is an error wrapping
// ErrEmptyDNSName; an answer for another instance, or for more than one, is an
// error wrapping ErrBadAnswer (asked for one instance by its ID, EC2 gives that one
// or none). An EC2 error is wrapped as is, so its code (e.g.
// "UnauthorizedOperation", "InvalidInstanceID.NotFound") shows in the message and
// errors.As finds the smithy.APIError. Errors are scrubbed of secrets (scrub.Err).
func (c *Client) PrivateDNSName(ctx context.Context, instanceID string) (string, error) {
	name, err := c.describeInstanceName(ctx, instanceID)
	return name, scrub.Err(err)
}

func (c *Client) describeInstanceName(ctx context.Context, instanceID string) (string, error) {
	if instanceID == "" {
		return "", errors.New("describe instance: empty instance ID")
	}
	root, err := c.call(ctx, "DescribeInstances", url.Values{"InstanceId.1": {instanceID}})
	if err != nil {
		return "", fmt.Errorf("describe instance %s: %w", instanceID, err)
	}
	name, found, err := privateDNSName(root, instanceID)
	switch {
	case errors.Is(err, ErrBadAnswer):
		return "", fmt.Errorf("describe instance %s: %w", instanceID, err)
	case err != nil:
		return "", fmt.Errorf("describe instance %s: reading the answer: %w", instanceID, err)
	case !found:
		return "", fmt.Errorf("describe instance %s: instance not in the answer: %w", instanceID, ErrEmptyDNSName)
	case name == "":
		return "", fmt.Errorf("describe instance %s: %w", instanceID, ErrEmptyDNSName)
	}
	return name, nil
}

// privateDNSName reads the one instance of a DescribeInstancesResponse
// (reservationSet/item/instancesSet/item with instanceId and privateDnsName), which
// must be instanceID: another instance, or more than one, is ErrBadAnswer.
func privateDNSName(root *element, instanceID string) (name string, found bool, err error) {
	reservations, err := root.items("reservationSet")
	if err != nil {
		return "", false, err
	}
	var ids []string
	for _, r := range reservations {
		instances, err := r.items("instancesSet")
		if err != nil {
			return "", false, err
		}
		for _, in := range instances {
			id, err := in.str("instanceId")
			if err != nil {
				return "", false, err
			}
			if ids = append(ids, id); len(ids) > 1 {
				return "", false, fmt.Errorf("%w: more than one instance (%s, %s), want %s alone", ErrBadAnswer, quote.Name(ids[0]), quote.Name(ids[1]), instanceID)
			}
			if id != instanceID {
				return "", false, fmt.Errorf("%w: instance %s, want %s", ErrBadAnswer, quote.Name(id), instanceID)
			}
			if name, err = in.str("privateDnsName"); err != nil {
				return "", false, err
			}
		}
	}
	return name, len(ids) == 1, nil
}

// InstanceTypeInfo returns the facts DescribeInstanceTypes reports for instanceType:
// hypervisor, default vCPUs, IPv4 addresses per interface, and the maximum number of
// interfaces on the default network card (or of the instance, when EC2 lists no
// cards). An unknown type (InvalidInstanceType, or an empty answer) is an error
// wrapping ErrUnknownInstanceType; other EC2 errors are wrapped as is. Errors are
// scrubbed of secrets (scrub.Err).
func (c *Client) InstanceTypeInfo(ctx context.Context, instanceType string) (maxpods.TypeInfo, error) {
	info, err := c.instanceTypeInfo(ctx, instanceType)
	return info, scrub.Err(err)
}

func (c *Client) instanceTypeInfo(ctx context.Context, instanceType string) (maxpods.TypeInfo, error) {
	if instanceType == "" {
		return maxpods.TypeInfo{}, fmt.Errorf("describe instance type: empty name: %w", ErrUnknownInstanceType)
	}
	root, err := c.call(ctx, "DescribeInstanceTypes", url.Values{"InstanceType.1": {instanceType}})
	if err != nil {
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidInstanceType" {
			return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: %w: %w", instanceType, ErrUnknownInstanceType, err)
		}
		return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: %w", instanceType, err)
	}
	types, err := root.items("instanceTypeSet")
	if err != nil {
		return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: reading the answer: %w", instanceType, err)
	}
	for _, it := range types {
		name, err := it.str("instanceType")
		if err != nil {
			return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: reading the answer: %w", instanceType, err)
		}
		if name != instanceType {
			continue
		}
		info, err := typeInfo(it)
		if err != nil {
			return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: %w", instanceType, err)
		}
		return info, nil
	}
	return maxpods.TypeInfo{}, fmt.Errorf("describe instance type %s: not in the answer: %w", instanceType, ErrUnknownInstanceType)
}

// The ranges of the counts an instance type's facts hold: the largest types have
// 1,920 vCPUs, 50 addresses per interface and tens of interfaces on a card.
const (
	maxVCPUs = 1 << 14
	maxCount = 1 << 10
)

// isWord reports whether s is empty or a short word of lower-case letters, digits
// and '-', as EC2's enumerations are.
func isWord(s string) bool {
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// typeInfo picks the calculator's facts out of one DescribeInstanceTypes item. Facts
// EC2 leaves out are zero (maxpods.Classic rejects missing ENI or IPv4 counts).
func typeInfo(it *element) (maxpods.TypeInfo, error) {
	var info maxpods.TypeInfo
	var err error
	if info.Hypervisor, err = it.str("hypervisor"); err != nil {
		return maxpods.TypeInfo{}, err
	}
	if !isWord(info.Hypervisor) {
		return maxpods.TypeInfo{}, fmt.Errorf("hypervisor %q is not a word of EC2's (nitro, xen)", quoteShort(info.Hypervisor))
	}
	vcpu, err := it.child("vCpuInfo")
	if err != nil {
		return maxpods.TypeInfo{}, err
	}
	if vcpu != nil {
		n, err := vcpu.count("defaultVCpus", maxVCPUs)
		if err != nil {
			return maxpods.TypeInfo{}, err
		}
		info.VCPUs = int(n)
	}
	ni, err := it.child("networkInfo")
	if err != nil {
		return maxpods.TypeInfo{}, err
	}
	if ni == nil {
		return maxpods.TypeInfo{}, errors.New("no network info in the answer")
	}
	ipv4, err := ni.count("ipv4AddressesPerInterface", maxCount)
	if err != nil {
		return maxpods.TypeInfo{}, err
	}
	info.IPv4PerENI = int(ipv4)
	cards, err := ni.items("networkCards")
	if err != nil {
		return maxpods.TypeInfo{}, err
	}
	if len(cards) == 0 {
		n, err := ni.count("maximumNetworkInterfaces", maxCount)
		if err != nil {
			return maxpods.TypeInfo{}, err
		}
		info.ENIs = int(n)
		return info, nil
	}
	def, err := ni.count("defaultNetworkCardIndex", maxCount)
	if err != nil {
		return maxpods.TypeInfo{}, err
	}
	for _, card := range cards {
		index, err := card.count("networkCardIndex", maxCount)
		if err != nil {
			return maxpods.TypeInfo{}, err
		}
		if index != def {
			continue
		}
		n, err := card.count("maximumNetworkInterfaces", maxCount)
		if err != nil {
			return maxpods.TypeInfo{}, err
		}
		info.ENIs = int(n)
		return info, nil
	}
	return maxpods.TypeInfo{}, fmt.Errorf("default network card %d not among the %d cards in the answer", def, len(cards))
}
