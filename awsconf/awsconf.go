// Package awsconf builds the aws.Config that eksboot's EC2 and EKS clients share.
//
// It exists instead of the SDK's config.LoadDefaultConfig, for start-up time: the
// config package links the SSO, SSO-OIDC, STS and sign-in clients for its credential
// providers, and their package initialisation alone cost about 2.5 ms of every
// eksboot start, `eksboot version` included (docs/performance.md). LoadDefaultConfig
// also reads the shared config and credentials files at every boot. A node needs
// none of that: its credentials are its instance profile, served by IMDS. So Load
// assembles the config from the SDK's own parts (ec2rolecreds over the same IMDS
// endpoint as the rest of eksboot, the credentials cache, the buildable HTTP client)
// and reads the handful of AWS environment variables that matter on a node; the
// service clients resolve endpoints, FIPS and dual-stack through the SDK's usual
// configuration-source interfaces. docs/compat.md lists what is not read.
//
// The instance-profile read keeps the rules of the rest of eksboot's IMDS reads
// (imds.MetadataClient): IMDSv2 only unless Options.IMDSv1Fallback, no proxy,
// no redirect, bounded answers; and it waits, bounded, while IMDS says no role
// is attached yet. No client of the config follows a redirect (NoRedirects).
package awsconf

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	sdkimds "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
	"github.com/eksboot/eksboot/internal/strictjson"
)

// The environment variables Load reads (the AWS SDKs' names).
const (
	EnvRegion             = "AWS_REGION"
	EnvDefaultRegion      = "AWS_DEFAULT_REGION"
	EnvAccessKeyID        = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey    = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken       = "AWS_SESSION_TOKEN"
	EnvEndpointURL        = "AWS_ENDPOINT_URL" // every service; AWS_ENDPOINT_URL_<SERVICE> for one
	EnvIgnoreEndpointURLs = "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"
	EnvUseFIPS            = "AWS_USE_FIPS_ENDPOINT"
	EnvUseDualStack       = "AWS_USE_DUALSTACK_ENDPOINT"
	EnvCABundle           = "AWS_CA_BUNDLE"
	EnvIMDSDisabled       = "AWS_EC2_METADATA_DISABLED"
)

// Options are the inputs of Load.
type Options struct {
	// Region is the AWS region; when empty, AWS_REGION, then AWS_DEFAULT_REGION.
	Region string
	// IMDSEndpoint is the IMDS base URL for the instance-profile credentials; empty
	// means the SDK's default.
	IMDSEndpoint string
	// IMDSv1Fallback lets the instance-profile read go without a session token
	// when IMDS refuses one (--imds-v1-fallback), unless AWS_EC2_METADATA_V1_DISABLED
	// is true. Off, the read is IMDSv2 only, like the rest of eksboot (the SDK's
	// own default falls back).
	IMDSv1Fallback bool
	// CredentialsWait bounds how long the instance-profile read asks again while
	// IMDS answers 404 for iam/security-credentials/ (the role is not attached
	// yet, early in boot). Zero means DefaultCredentialsWait; below zero, no wait.
	CredentialsWait time.Duration
	// MaxAttempts bounds the attempts of each call (the first included) with the
	// SDK's standard retryer; 0 leaves the SDK's default.
	MaxAttempts int
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// ReadFile reads the CA bundle; nil means os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// Credentials, when set, is used when AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
	// are not both set, instead of the instance profile (render --discover: the
	// caller's own credentials, off a node).
	Credentials aws.CredentialsProvider
}

// Load returns the config for opts. Credentials come from AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN) when both are set, else from the
// instance profile over IMDS (unless AWS_EC2_METADATA_DISABLED is true), cached
// until they expire. AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> (unless
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true), AWS_USE_FIPS_ENDPOINT,
// AWS_USE_DUALSTACK_ENDPOINT and AWS_CA_BUNDLE are honoured. A bad value is an
// error naming the variable. Nothing is sent until a call is made.
func Load(opts Options) (aws.Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	readFile := opts.ReadFile
	if readFile == nil {
		readFile = os.ReadFile
	}
	src, err := readEnv(getenv)
	allowV1, errV1 := imds.V1Allowed(opts.IMDSv1Fallback, getenv)
	if err := errors.Join(err, errV1); err != nil {
		return aws.Config{}, err
	}
	cfg := aws.Config{
		Region:        cmp.Or(opts.Region, getenv(EnvRegion), getenv(EnvDefaultRegion)),
		ConfigSources: []any{src},
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("no AWS region: the instance's region was not given and %s is not set", EnvRegion)
	}
	if !src.ignoreEndpoints {
		if v := getenv(EnvEndpointURL); v != "" {
			cfg.BaseEndpoint = aws.String(v)
		}
	}
	if opts.MaxAttempts > 0 {
		cfg.Retryer = func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = opts.MaxAttempts })
		}
	}

	client := awshttp.NewBuildableClient()
	if path := getenv(EnvCABundle); path != "" {
		pool, err := loadCABundle(readFile, path)
		if err != nil {
			return aws.Config{}, err
		}
		client = client.WithTransportOptions(func(tr *http.Transport) {
			if tr.TLSClientConfig == nil {
				tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			tr.TLSClientConfig.RootCAs = pool
		})
	}
	cfg.HTTPClient = NoRedirects(client.GetTransport())

	// The environment's keys are this process's secrets whether or not they sign
	// (scrub.Process): an answer that quotes them shows none of them.
	scrub.Process.Add(getenv(EnvAccessKeyID), getenv(EnvSecretAccessKey), getenv(EnvSessionToken))
	switch id, secret := getenv(EnvAccessKeyID), getenv(EnvSecretAccessKey); {
	case id != "" && secret != "":
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, getenv(EnvSessionToken)))
	case opts.Credentials != nil:
		cfg.Credentials = aws.NewCredentialsCache(secretsOf{opts.Credentials})
	case strings.EqualFold(getenv(EnvIMDSDisabled), "true"):
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, fmt.Errorf("no AWS credentials: %s and %s are not both set, and %s=true turns off the instance profile", EnvAccessKeyID, EnvSecretAccessKey, EnvIMDSDisabled)
		})
	default:
		reader := &roleWait{
			c:    imds.NewMetadataClient(opts.IMDSEndpoint, allowV1),
			wait: cmp.Or(opts.CredentialsWait, DefaultCredentialsWait),
			min:  credentialsMinBackoff,
		}
		cfg.Credentials = aws.NewCredentialsCache(secretsOf{ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = reader })})
	}
	return cfg, nil
}

// secretsOf is a credentials provider that adds every credential it retrieves to
// the process's secrets (scrub.Process) before anything signs with it, and
// scrubs its errors (scrub.Err).
type secretsOf struct{ p aws.CredentialsProvider }

// Retrieve implements aws.CredentialsProvider.
func (s secretsOf) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := s.p.Retrieve(ctx)
	if err != nil {
		return c, scrub.Err(err)
	}
	scrub.Process.Add(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
	return c, nil
}

// DefaultCredentialsWait is how long the instance-profile read waits, by default,
// for a role that is not attached yet (Options.CredentialsWait).
const DefaultCredentialsWait = 30 * time.Second

// credentialsMinBackoff is the first backoff of roleWait; it doubles up to 2 s.
const credentialsMinBackoff = 200 * time.Millisecond

// roleWait is the instance-profile read's IMDS client: a 404 of
// iam/security-credentials/ (the role is not attached yet) is asked again with a
// jittered exponential backoff for up to wait, within the caller's context.
type roleWait struct {
	c    *imds.MetadataClient
	wait time.Duration
	min  time.Duration
}

// GetMetadata implements ec2rolecreds.GetMetadataAPIClient.
func (r *roleWait) GetMetadata(ctx context.Context, in *sdkimds.GetMetadataInput, optFns ...func(*sdkimds.Options)) (*sdkimds.GetMetadataOutput, error) {
	start := time.Now()
	backoff := r.min
	for attempt := 1; ; attempt++ {
		out, err := r.c.GetMetadata(ctx, in, optFns...)
		if err == nil && isRoleCredentials(in.Path) {
			return checkCredentials(in.Path, out)
		}
		var pe *imds.PathError
		if err == nil || !strings.HasPrefix(strings.TrimLeft(in.Path, "/"), "iam/security-credentials") ||
			!errors.As(err, &pe) || pe.Status != http.StatusNotFound {
			return out, err
		}
		d := backoff/2 + rand.N(backoff/2+1)
		if r.wait <= 0 || time.Since(start)+d > r.wait {
			return nil, fmt.Errorf("IMDS latest/meta-data/%s answered 404 (not found) %d times in %v (the wait is %v): no instance profile role is attached to the instance", strings.TrimLeft(in.Path, "/"), attempt, time.Since(start).Round(time.Millisecond), r.wait)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("IMDS latest/meta-data/%s answered 404 (not found) %d times: no instance profile role is attached yet: %w", strings.TrimLeft(in.Path, "/"), attempt, context.Cause(ctx))
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// isRoleCredentials reports whether path is a role's credentials
// (iam/security-credentials/<role>), not the list of roles.
func isRoleCredentials(path string) bool {
	role, ok := strings.CutPrefix(strings.Trim(path, "/"), "iam/security-credentials/")
	return ok && role != ""
}

// credentialsLimits bound the instance profile's credentials: seven keys.
var credentialsLimits = strictjson.Limits{Bytes: imds.MaxAnswer, Values: 100}

// checkCredentials reads a role's credentials, refuses JSON with a key twice
// (the SDK's decoder would keep the last of two tokens or expiry times silently)
// and an answer whose Code is not Success (the SDK's error quotes its message
// whole), and hands the SDK the same bytes. Its errors never quote the secrets.
func checkCredentials(path string, out *sdkimds.GetMetadataOutput) (*sdkimds.GetMetadataOutput, error) {
	b, err := io.ReadAll(out.Content)
	_ = out.Content.Close()
	var answer struct{ Code, Message string }
	if err == nil {
		err = strictjson.Unmarshal(b, &answer, credentialsLimits)
	}
	if err != nil {
		return nil, &credentialsError{path: strings.Trim(path, "/"), err: err}
	}
	if !strings.EqualFold(answer.Code, "Success") {
		return nil, &credentialsError{path: strings.Trim(path, "/"), code: answer.Code, msg: answer.Message}
	}
	out.Content = io.NopCloser(bytes.NewReader(b))
	return out, nil
}

// credentialsError is a role's credentials refused by checkCredentials: err, or
// code and msg when IMDS says they are not there.
type credentialsError struct {
	path      string
	err       error
	code, msg string
}

func (e *credentialsError) Error() string {
	var se *strictjson.Error
	switch {
	case e.err == nil:
		return fmt.Sprintf("IMDS latest/meta-data/%s: no credentials: %s: %s", e.path, quote.Name(scrub.Text(e.code)), quote.Value(scrub.Text(e.msg)))
	case errors.As(e.err, &se):
		return fmt.Sprintf("IMDS latest/meta-data/%s: the credentials: %s", e.path, scrub.Text(se.Error()))
	}
	return fmt.Sprintf("IMDS latest/meta-data/%s: the credentials are not JSON", e.path) // never the answer's text
}

func (e *credentialsError) Unwrap() error { return e.err }

// RetryableError tells the SDK's retryers not to ask again.
func (e *credentialsError) RetryableError() bool { return false }

// NoRedirects returns an HTTP client over tr that follows no redirect: a 3xx
// answer is a *RedirectError naming the request and where it pointed, which the
// SDK's retryers do not retry. AWS's EC2 and EKS APIs answer directly; a
// redirect comes from something in between and, followed, would send the
// request's session token (X-Amz-Security-Token) to another host.
func NoRedirects(tr http.RoundTripper) aws.HTTPClient {
	return &noRedirects{hc: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // Do turns it into an error
	}}}
}

// noRedirects is NoRedirects' client.
type noRedirects struct{ hc *http.Client }

// Do sends req; a 3xx answer is an error.
func (c *noRedirects) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return resp, err
	}
	resp.Body.Close()
	host := ""
	if loc, err := resp.Location(); err == nil {
		host = loc.Host
	}
	return nil, &RedirectError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Host: host}
}

// RedirectError is a redirect that NoRedirects' client refused to follow.
type RedirectError struct {
	Method string // the request's method
	Path   string // the request's URL path
	Status int    // the 3xx status
	Host   string // the host the redirect pointed to
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s %s answered %d, a redirect to host %s: not followed (AWS APIs answer directly; a redirect comes from something in between)", e.Method, quote.Name(scrub.Text(e.Path)), e.Status, quote.Value(scrub.Text(e.Host)))
}

// RetryableError tells the SDK's retryers (and eksapi.Retryable) not to ask again.
func (e *RedirectError) RetryableError() bool { return false }

// loadCABundle reads the PEM certificates at path into a pool.
func loadCABundle(readFile func(string) ([]byte, error), path string) (*x509.CertPool, error) {
	pem, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvCABundle, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in the file", EnvCABundle, quote.Value(path))
	}
	return pool, nil
}

// envSource answers the SDK service clients' questions about endpoints from the
// environment. Its methods have the signatures of the SDK's configuration-source
// interfaces, which the clients look for in aws.Config.ConfigSources.
type envSource struct {
	getenv          func(string) string
	ignoreEndpoints bool
	fips            aws.FIPSEndpointState
	dualStack       aws.DualStackEndpointState
}

// readEnv reads and checks the endpoint variables; every bad value is reported.
func readEnv(getenv func(string) string) (*envSource, error) {
	s := &envSource{getenv: getenv}
	ignore, errIgnore := boolVar(getenv, EnvIgnoreEndpointURLs)
	s.ignoreEndpoints = ignore != nil && *ignore
	fips, errFIPS := boolVar(getenv, EnvUseFIPS)
	switch {
	case fips == nil:
	case *fips:
		s.fips = aws.FIPSEndpointStateEnabled
	default:
		s.fips = aws.FIPSEndpointStateDisabled
	}
	dual, errDual := boolVar(getenv, EnvUseDualStack)
	switch {
	case dual == nil:
	case *dual:
		s.dualStack = aws.DualStackEndpointStateEnabled
	default:
		s.dualStack = aws.DualStackEndpointStateDisabled
	}
	return s, errors.Join(errIgnore, errFIPS, errDual)
}

// boolVar reads a true/false variable (any case); nil when it is unset.
func boolVar(getenv func(string) string, name string) (*bool, error) {
	switch v := getenv(name); {
	case v == "":
		return nil, nil
	case strings.EqualFold(v, "true"):
		return aws.Bool(true), nil
	case strings.EqualFold(v, "false"):
		return aws.Bool(false), nil
	default:
		return nil, fmt.Errorf("%s=%s: want true or false", name, quote.Value(v))
	}
}

// GetServiceBaseEndpoint returns AWS_ENDPOINT_URL_<SERVICE> for the SDK's service
// ID ("EC2", "EKS"; spaces become '_').
func (s *envSource) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	if s.ignoreEndpoints {
		return "", false, nil
	}
	name := EnvEndpointURL + "_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_")
	if v := s.getenv(name); v != "" {
		return v, true, nil
	}
	return "", false, nil
}

// GetUseFIPSEndpoint returns AWS_USE_FIPS_ENDPOINT.
func (s *envSource) GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error) {
	return s.fips, s.fips != aws.FIPSEndpointStateUnset, nil
}

// GetUseDualStackEndpoint returns AWS_USE_DUALSTACK_ENDPOINT.
func (s *envSource) GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error) {
	return s.dualStack, s.dualStack != aws.DualStackEndpointStateUnset, nil
}
