package eksapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/eksboot/eksboot/internal/quote"
)

// sdkID is EKS's service ID in the AWS SDKs (AWS_ENDPOINT_URL_EKS).
const sdkID = "EKS"

// partition is what EKS's endpoint rules need to know of an AWS partition.
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

// Endpoint returns the EKS endpoint for cfg, by EKS's endpoint rules: the endpoint
// configured for EKS (a config source's AWS_ENDPOINT_URL_EKS, else cfg.BaseEndpoint)
// if any, else https://eks.<region>.<partition DNS suffix>, with the FIPS and
// dual-stack variants when cfg's sources ask for them.
func Endpoint(cfg aws.Config) (string, error) {
	ctx := context.Background()
	var fips, dualStack bool
	custom := aws.ToString(cfg.BaseEndpoint)
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(interface {
			GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
		}); ok {
			if v, found, err := p.GetServiceBaseEndpoint(ctx, sdkID); err != nil {
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
	return resolveEndpoint(cfg.Region, custom, fips, dualStack)
}

// resolveEndpoint is EKS's endpoint rule set (the SDK's EndpointResolverV2 for EKS).
func resolveEndpoint(region, custom string, fips, dualStack bool) (string, error) {
	if custom != "" {
		switch {
		case fips:
			return "", errors.New("eks endpoint: FIPS and a custom endpoint (AWS_ENDPOINT_URL_EKS or AWS_ENDPOINT_URL) cannot be used together")
		case dualStack:
			return "", errors.New("eks endpoint: dual-stack and a custom endpoint (AWS_ENDPOINT_URL_EKS or AWS_ENDPOINT_URL) cannot be used together")
		}
		u, err := url.Parse(custom)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("eks endpoint %s: want an http or https URL", quote.Value(custom))
		}
		return custom, nil
	}
	if region == "" {
		return "", errors.New("eks endpoint: no region")
	}
	p := partitionOf(region)
	switch {
	case fips && dualStack:
		return "https://eks-fips." + region + "." + p.dualStackDNSSuffix, nil
	case fips && p.name == "aws":
		return "https://fips.eks." + region + ".amazonaws.com", nil
	case fips && p.name == "aws-us-gov":
		return "https://eks." + region + ".amazonaws.com", nil
	case fips:
		return "https://eks-fips." + region + "." + p.dnsSuffix, nil
	case dualStack:
		return "https://eks." + region + "." + p.dualStackDNSSuffix, nil
	default:
		return "https://eks." + region + "." + p.dnsSuffix, nil
	}
}
