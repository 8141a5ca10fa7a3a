package imds

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkimds "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// FetchWithSDK is Fetch reading every path through aws-sdk-go-v2's
// feature/ec2/imds client, as Fetch did before the client of its own: the
// oracle the own client is held to (oracle_test.go). The SDK's retries and
// timeouts are off, as they were; read retries.
func FetchWithSDK(ctx context.Context, opts Options) (*Facts, error) {
	return fetch(ctx, opts, fetchMode{via: sdkVia})
}

// sdkVia returns c's reads through one SDK client over c's HTTP client, each
// exchange noted by recorder.
func sdkVia(c *client) func(ctx context.Context, path string) (string, error) {
	fallback := aws.FalseTernary
	if c.opts.AllowIMDSv1 {
		fallback = aws.TrueTernary
	}
	sdk := sdkimds.New(sdkimds.Options{
		Endpoint:                 c.opts.Endpoint,
		ClientEnableState:        sdkimds.ClientEnabled,
		EnableFallback:           fallback,
		HTTPClient:               &recorder{hc: c.hc},
		Retryer:                  aws.NopRetryer{},
		DisableDefaultTimeout:    true,
		DisableDefaultMaxBackoff: true,
	})
	return func(ctx context.Context, path string) (string, error) {
		var content io.ReadCloser
		var err error
		switch {
		case path == PathUserData:
			var out *sdkimds.GetUserDataOutput
			if out, err = sdk.GetUserData(ctx, &sdkimds.GetUserDataInput{}); err == nil {
				content = out.Content
			}
		case strings.HasPrefix(path, "latest/dynamic/"):
			var out *sdkimds.GetDynamicDataOutput
			if out, err = sdk.GetDynamicData(ctx, &sdkimds.GetDynamicDataInput{Path: strings.TrimPrefix(path, "latest/dynamic/")}); err == nil {
				content = out.Content
			}
		default:
			var out *sdkimds.GetMetadataOutput
			if out, err = sdk.GetMetadata(ctx, &sdkimds.GetMetadataInput{Path: strings.TrimPrefix(path, "latest/meta-data/")}); err == nil {
				content = out.Content
			}
		}
		if err != nil {
			return "", err
		}
		defer content.Close()
		b, err := io.ReadAll(content) // read by the SDK already, through limitedBody
		if err != nil {
			return "", fmt.Errorf("read answer: %w", err)
		}
		return string(b), nil
	}
}
