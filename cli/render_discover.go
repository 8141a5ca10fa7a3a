package cli

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/eksboot/eksboot/eksapi"
)

// discoverEKS is render --discover's EKS client: the caller's own AWS credentials
// and settings by the SDK's full default chain (environment, shared config and
// credentials files, profiles, SSO, web identity), unlike a node, which uses its
// instance profile only (awsconf). The region is render's --region.
func discoverEKS(ctx context.Context, region string) (eksapi.API, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region))
	if err != nil {
		return nil, fmt.Errorf("loading your AWS configuration: %w", err)
	}
	return eksapi.New(cfg)
}
