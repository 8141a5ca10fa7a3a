package eksapi

// Why not aws-sdk-go-v2's EKS client: eksboot makes one EKS call, DescribeCluster, and
// only on nodes launched without the CA and endpoint. Linking the SDK's EKS package
// cost every node on every boot about 1.7 ms before main (its generated schemas of
// all EKS shapes are built at package initialisation, about 0.8 ms, and its code is
// paged in), a tenth of a whole bootstrap (docs/performance.md). The call itself is a
// signed GET with a JSON answer, so this file makes it with the SDK's own parts: the
// aws.Config (credentials, HTTP client, endpoint settings) and the SigV4 signer.
// What the SDK client would add is its endpoint rules; endpoint.go has EKS's, and the
// tests hold them to the SDK's resolver, which they import (tests only).

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/internal/apierror"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
	"github.com/eksboot/eksboot/internal/strictjson"
)

// signingName is EKS's SigV4 service name.
const signingName = "eks"

// maxAnswer bounds the answer read from EKS (a DescribeCluster answer is a few KiB).
const maxAnswer = 1 << 20

// answerLimits bound a JSON answer of EKS: a DescribeCluster answer holds a few
// hundred values (tags, logging, the network config).
var answerLimits = strictjson.Limits{Bytes: maxAnswer, Values: 10_000}

// emptyPayloadHash is the SHA-256 of an empty body, which SigV4 signs for a GET.
var emptyPayloadHash = func() string { h := sha256.Sum256(nil); return hex.EncodeToString(h[:]) }()

// Client implements API: eks:DescribeCluster over HTTPS, signed with SigV4.
type Client struct {
	http     aws.HTTPClient
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	region   string
	endpoint string // scheme://host[/base path], no trailing '/'
}

var _ API = (*Client)(nil)

// New returns a Client that calls EKS with cfg: its region, credentials and HTTP
// client (when nil, one that follows no redirect: awsconf.NoRedirects), and the endpoint that cfg's settings give (AWS_ENDPOINT_URL_EKS,
// AWS_ENDPOINT_URL, FIPS, dual-stack; see Endpoint). Every call is one request, with
// no retries of its own: Discover's retry budget and backoff are the only ones in play.
func New(cfg aws.Config) (*Client, error) {
	endpoint, err := Endpoint(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Credentials == nil {
		return nil, errors.New("eks: no AWS credentials in the config")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = awsconf.NoRedirects(awshttp.NewBuildableClient().GetTransport()) // the SDK's own follows 307 and 308 anywhere
	}
	return &Client{
		http:     hc,
		creds:    cfg.Credentials,
		signer:   v4.NewSigner(),
		region:   cfg.Region,
		endpoint: strings.TrimSuffix(endpoint, "/"),
	}, nil
}

// describeClusterAnswer is the part of DescribeCluster's JSON answer that Cluster
// holds.
type describeClusterAnswer struct {
	Cluster *struct {
		Name                 string `json:"name"`
		Status               string `json:"status"`
		Endpoint             string `json:"endpoint"`
		ID                   string `json:"id"`
		CertificateAuthority struct {
			Data string `json:"data"`
		} `json:"certificateAuthority"`
		KubernetesNetworkConfig struct {
			ServiceIPv4CIDR string `json:"serviceIpv4Cidr"`
			ServiceIPv6CIDR string `json:"serviceIpv6Cidr"`
			IPFamily        string `json:"ipFamily"`
		} `json:"kubernetesNetworkConfig"`
		OutpostConfig struct {
			OutpostArns []string `json:"outpostArns"`
		} `json:"outpostConfig"`
	} `json:"cluster"`
}

// DescribeCluster implements API. An error answer is returned as an *APIError, so
// that errors.As finds a smithy.APIError (and its code, e.g. AccessDeniedException)
// and the HTTP status. Errors are scrubbed of secrets (scrub.Err).
func (c *Client) DescribeCluster(ctx context.Context, name string) (*Cluster, error) {
	cl, err := c.describeCluster(ctx, name)
	return cl, scrub.Err(err)
}

func (c *Client) describeCluster(ctx context.Context, name string) (*Cluster, error) {
	if name == "" {
		return nil, errors.New("describe cluster: empty cluster name")
	}
	body, err := c.get(ctx, "/clusters/"+url.PathEscape(name))
	if err != nil {
		return nil, fmt.Errorf("describe cluster %s: %w", quote.Name(name), err)
	}
	var a describeClusterAnswer
	if err := strictjson.Unmarshal(body, &a, answerLimits); err != nil {
		return nil, fmt.Errorf("describe cluster %s: decoding the answer: %w", quote.Name(name), err)
	}
	if a.Cluster == nil {
		return nil, fmt.Errorf("describe cluster %s: the answer has no cluster", quote.Name(name))
	}
	in := a.Cluster
	out := &Cluster{
		Name:            in.Name,
		Status:          in.Status,
		Endpoint:        in.Endpoint,
		ID:              in.ID,
		CAData:          in.CertificateAuthority.Data,
		ServiceIPv4CIDR: in.KubernetesNetworkConfig.ServiceIPv4CIDR,
		ServiceIPv6CIDR: in.KubernetesNetworkConfig.ServiceIPv6CIDR,
		IPFamily:        in.KubernetesNetworkConfig.IPFamily,
	}
	if arns := in.OutpostConfig.OutpostArns; len(arns) > 0 {
		out.OutpostARN = arns[0]
	}
	return out, nil
}

// get makes one signed GET of path and returns the body of a 2xx answer.
func (c *Client) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("getting credentials: %w", err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, emptyPayloadHash, signingName, c.region, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("signing the request: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := apierror.ReadAnswer(resp.Body, resp.StatusCode, maxAnswer)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, answerError(resp, body)
	}
	return body, nil
}

// APIError is an EKS error answer: its status, code, message and request ID
// (internal/apierror, which ec2api and eksapi share).
type APIError = apierror.APIError

// StatusError is an answer with an error status that is not an EKS error (no error
// code: a proxy's or load balancer's page, for example; internal/apierror).
type StatusError = apierror.StatusError

// answerError decodes an error answer of the REST-JSON protocol: the code comes from
// the X-Amzn-ErrorType header, else the body's "__type" or "code"; either may carry
// a namespace ("aws.eks#...") or a suffix (":http://...") that is not part of it.
func answerError(resp *http.Response, body []byte) error {
	var b struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		MessageC string `json:"Message"`
	}
	_ = strictjson.Unmarshal(body, &b, answerLimits) // a body that is not JSON, or not strictly, has no code or message
	code := cmp.Or(resp.Header.Get("X-Amzn-ErrorType"), b.Type, b.Code)
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	if code == "" {
		return apierror.NewStatusError("EKS", resp.StatusCode, body)
	}
	return &APIError{Status: resp.StatusCode, Code: code, Message: cmp.Or(b.Message, b.MessageC)}
}
