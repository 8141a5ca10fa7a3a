// Package awsendpoint resolves the endpoint of an AWS service the way the SDK's
// generated endpoint rules do for EC2 and EKS, the two services eksboot calls
// without the SDK's service clients (ec2api and eksapi say why). The rules of both
// are the same shape: a configured endpoint (AWS_ENDPOINT_URL_<SERVICE>, else
// AWS_ENDPOINT_URL), else https://<host>.<region>.<partition's DNS suffix>, with
// FIPS and dual-stack variants. The tests of both packages hold Resolve to the
// SDK's resolvers, which they import (tests only).
package awsendpoint

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/eksboot/eksboot/internal/quote"
)

// Service names what the endpoint rules of one service need.
type Service struct {
	// SDKID is the service's ID in the AWS SDKs ("EC2", "EKS"), the suffix of
	// AWS_ENDPOINT_URL_<SERVICE>.
	SDKID string
	// Host is the first label of its hosts ("ec2", "eks").
	Host string
	// FIPSHostAWS, when set, is the FIPS host of the "aws" partition in place of
	// <Host>-fips ("fips.eks" for EKS; EC2 has none).
	FIPSHostAWS string
}

// partition is what the endpoint rules need to know of an AWS partition.
type partition struct {
	name               string
	dnsSuffix          string
	dualStackDNSSuffix string
	regionPrefix       string // its regions are <regionPrefix><word>-<digits>
}

// partitions are the AWS partitions other than "aws" (the SDKs' partitions.json);
// every one supports FIPS and dual-stack endpoints. A region none of them claims is
// in "aws", as in the SDKs.
var partitions = []partition{
	{name: "aws-cn", dnsSuffix: "amazonaws.com.cn", dualStackDNSSuffix: "api.amazonwebservices.com.cn", regionPrefix: "cn-"},
	{name: "aws-eusc", dnsSuffix: "amazonaws.eu", dualStackDNSSuffix: "api.amazonwebservices.eu", regionPrefix: "eusc-de-"},
	{name: "aws-iso", dnsSuffix: "c2s.ic.gov", dualStackDNSSuffix: "api.aws.ic.gov", regionPrefix: "us-iso-"},
	{name: "aws-iso-b", dnsSuffix: "sc2s.sgov.gov", dualStackDNSSuffix: "api.aws.scloud", regionPrefix: "us-isob-"},
	{name: "aws-iso-e", dnsSuffix: "cloud.adc-e.uk", dualStackDNSSuffix: "api.cloud-aws.adc-e.uk", regionPrefix: "eu-isoe-"},
	{name: "aws-iso-f", dnsSuffix: "csp.hci.ic.gov", dualStackDNSSuffix: "api.aws.hci.ic.gov", regionPrefix: "us-isof-"},
	{name: "aws-us-gov", dnsSuffix: "amazonaws.com", dualStackDNSSuffix: "api.aws", regionPrefix: "us-gov-"},
}

var partitionAWS = partition{name: "aws", dnsSuffix: "amazonaws.com", dualStackDNSSuffix: "api.aws"}

// partitionOf returns the partition of region.
func partitionOf(region string) partition {
	for _, p := range partitions {
		if rest, ok := strings.CutPrefix(region, p.regionPrefix); ok && isWordDashDigits(rest) {
			return p
		}
	}
	return partitionAWS
}

// isWordDashDigits reports whether s is <word characters>-<digits> (the regular
// expression \w+-\d+ of the partitions' region patterns).
func isWordDashDigits(s string) bool {
	word, digits, ok := strings.Cut(s, "-")
	if !ok || word == "" || digits == "" {
		return false
	}
	for _, c := range []byte(word) {
		if c != '_' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Resolve returns the endpoint of svc for cfg: the endpoint configured for the
// service (a config source's AWS_ENDPOINT_URL_<SERVICE>, else cfg.BaseEndpoint) if
// any, else the regional endpoint of cfg.Region, with the FIPS and dual-stack
// variants when cfg's sources ask for them.
func Resolve(cfg aws.Config, svc Service) (string, error) {
	ctx := context.Background()
	var fips, dualStack bool
	custom := aws.ToString(cfg.BaseEndpoint)
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(interface {
			GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
		}); ok {
			if v, found, err := p.GetServiceBaseEndpoint(ctx, svc.SDKID); err != nil {
				return "", err
			} else if found {
				custom = v
			}
		}
		if p, ok := src.(interface {
			GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error)
		}); ok {
			if v, found, err := p.GetUseFIPSEndpoint(ctx); err != nil {
				return "", err
			} else if found {
				fips = v == aws.FIPSEndpointStateEnabled
			}
		}
		if p, ok := src.(interface {
			GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error)
		}); ok {
			if v, found, err := p.GetUseDualStackEndpoint(ctx); err != nil {
				return "", err
			} else if found {
				dualStack = v == aws.DualStackEndpointStateEnabled
			}
		}
	}
	return resolve(svc, cfg.Region, custom, fips, dualStack)
}

// resolve is the rule set (the SDK's EndpointResolverV2 of EC2 and of EKS).
func resolve(svc Service, region, custom string, fips, dualStack bool) (string, error) {
	name := strings.ToLower(svc.SDKID)
	if custom != "" {
		switch {
		case fips:
			return "", fmt.Errorf("%s endpoint: FIPS and a custom endpoint (AWS_ENDPOINT_URL_%s or AWS_ENDPOINT_URL) cannot be used together", name, svc.SDKID)
		case dualStack:
			return "", fmt.Errorf("%s endpoint: dual-stack and a custom endpoint (AWS_ENDPOINT_URL_%s or AWS_ENDPOINT_URL) cannot be used together", name, svc.SDKID)
		}
		u, err := url.Parse(custom)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("%s endpoint %s: want an http or https URL", name, quote.Value(custom))
		}
		return custom, nil
	}
	if region == "" {
		return "", errors.New(name + " endpoint: no region")
	}
	p := partitionOf(region)
	switch {
	case fips && dualStack:
		return "https://" + svc.Host + "-fips." + region + "." + p.dualStackDNSSuffix, nil
	case fips && p.name == "aws" && svc.FIPSHostAWS != "":
		return "https://" + svc.FIPSHostAWS + "." + region + ".amazonaws.com", nil
	case fips && p.name == "aws-us-gov":
		return "https://" + svc.Host + "." + region + ".amazonaws.com", nil
	case fips:
		return "https://" + svc.Host + "-fips." + region + "." + p.dnsSuffix, nil
	case dualStack:
		return "https://" + svc.Host + "." + region + "." + p.dualStackDNSSuffix, nil
	default:
		return "https://" + svc.Host + "." + region + "." + p.dnsSuffix, nil
	}
}
