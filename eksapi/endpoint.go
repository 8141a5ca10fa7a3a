package eksapi

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/eksboot/eksboot/internal/awsendpoint"
)

// service is EKS for awsendpoint: its SDK ID (AWS_ENDPOINT_URL_EKS) and hosts; its
// FIPS host in the "aws" partition is fips.eks, not eks-fips.
var service = awsendpoint.Service{SDKID: "EKS", Host: "eks", FIPSHostAWS: "fips.eks"}

// Endpoint returns the EKS endpoint for cfg, by EKS's endpoint rules: the endpoint
// configured for EKS (a config source's AWS_ENDPOINT_URL_EKS, else cfg.BaseEndpoint)
// if any, else https://eks.<region>.<partition DNS suffix>, with the FIPS and
// dual-stack variants when cfg's sources ask for them.
func Endpoint(cfg aws.Config) (string, error) {
	return awsendpoint.Resolve(cfg, service)
}
