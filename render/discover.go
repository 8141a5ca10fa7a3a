package render

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/processcreds"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/eksapi"
)

// CallerEKS is render --discover's EKS client, with the caller's own AWS
// credentials rather than a node's instance profile: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN) when set, as CI jobs have them;
// otherwise what the AWS CLI resolves for the caller's profile (callerCredentials).
// The endpoint, FIPS, dual-stack and CA-bundle variables are read as on a node
// (awsconf). The region is render's --region.
func CallerEKS(_ context.Context, region string) (eksapi.API, error) {
	cfg, err := awsconf.Load(awsconf.Options{Region: region, Credentials: callerCredentials()})
	if err != nil {
		return nil, fmt.Errorf("loading your AWS configuration: %w", err)
	}
	return eksapi.New(cfg)
}

// exportCredentials is the AWS CLI command that prints the caller's credentials in
// the credential_process format: the CLI resolves the whole chain (AWS_PROFILE,
// shared config and credentials files, SSO, assume-role, web identity).
var exportCredentials = []string{"aws", "configure", "export-credentials", "--format", "process"}

// callerCredentials returns the credentials of the person or job running render
// --discover when the environment has no keys: `aws configure export-credentials`.
// The SDK's own full chain (its config package) is not linked into eksboot: its
// SSO, SSO-OIDC, STS and sign-in clients cost every start of the node's binary
// about 1.9 ms and 1.8 MB (docs/performance.md), for a command run on laptops.
func callerCredentials() aws.CredentialsProvider {
	return finalCredentials{processcreds.NewProviderCommand(processcreds.NewCommandBuilderFunc(func(ctx context.Context) (*exec.Cmd, error) {
		path, err := exec.LookPath(exportCredentials[0])
		if err != nil {
			return nil, fmt.Errorf("no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and the AWS CLI, which would export your profile's (%s), is not installed: %w",
				strings.Join(exportCredentials, " "), err)
		}
		cmd := exec.CommandContext(ctx, path, exportCredentials[1:]...)
		cmd.Stderr = os.Stderr // the CLI's own prompts and errors (SSO login needed, MFA)
		return cmd, nil
	}), func(o *processcreds.Options) { o.Timeout = 2 * time.Minute })}
}

// finalCredentials marks its provider's failures final: a missing AWS CLI or a
// profile it cannot export (an SSO session to log in again) does not mend by
// asking again, so discovery stops at once instead of retrying until its deadline.
type finalCredentials struct{ aws.CredentialsProvider }

func (f finalCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := f.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return c, finalError{err}
	}
	return c, nil
}

// finalError is an error that says it is not retryable (the SDK's convention).
type finalError struct{ error }

func (e finalError) Unwrap() error        { return e.error }
func (e finalError) RetryableError() bool { return false }
