package ec2api

import (
	"bytes"
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
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/internal/apierror"
	"github.com/eksboot/eksboot/internal/awsendpoint"
	"github.com/eksboot/eksboot/internal/quote"
)

// service is EC2 for awsendpoint: AWS_ENDPOINT_URL_EC2 and the ec2 hosts.
var service = awsendpoint.Service{SDKID: "EC2", Host: "ec2"}

// apiVersion is the EC2 Query API version of the requests (the SDK's).
const apiVersion = "2016-11-15"

// signingName is EC2's SigV4 service name.
const signingName = "ec2"

// Endpoint returns the EC2 endpoint for cfg, by EC2's endpoint rules: the endpoint
// configured for EC2 (a config source's AWS_ENDPOINT_URL_EC2, else cfg.BaseEndpoint,
// AWS_ENDPOINT_URL) if any, else https://ec2.<region>.<partition DNS suffix>, with
// the FIPS and dual-stack variants when cfg's sources ask for them.
func Endpoint(cfg aws.Config) (string, error) { return awsendpoint.Resolve(cfg, service) }

// Client implements API: the two calls as signed EC2 Query API requests.
type Client struct {
	http        aws.HTTPClient
	creds       aws.CredentialsProvider
	signer      *v4.Signer
	region      string
	endpoint    string // scheme://host[/base path], no trailing '/'
	endpointErr error  // why there is no endpoint, returned by every call
	retryer     aws.Retryer
	window      time.Duration // the fixed windows after a throttle (ThrottleDelay)
	budget      bool          // after a throttle, ThrottleDelayWithin the call's deadline when it has one
}

// Option changes a Client made by New.
type Option func(*Client)

// New returns a Client that calls EC2 with cfg: its region, credentials, HTTP
// client (when nil, one that follows no redirect: awsconf.NoRedirects), endpoint
// (see Endpoint; a bad endpoint setting is the error of every call) and retryer
// (cfg.Retryer, MaxAttempts with LoadConfig; without one, the SDK's standard
// retryer), spacing the retries of throttled calls within the call's deadline
// (ThrottleDelayWithin) or, without one, ThrottleWindow's windows, then applying
// opts.
func New(cfg aws.Config, opts ...Option) *Client {
	c := &Client{
		http:   cfg.HTTPClient,
		creds:  cfg.Credentials,
		signer: v4.NewSigner(),
		region: cfg.Region,
	}
	if c.http == nil {
		c.http = awsconf.NoRedirects(awshttp.NewBuildableClient().GetTransport())
	}
	if cfg.Retryer != nil {
		c.retryer = cfg.Retryer()
	} else {
		c.retryer = retry.NewStandard()
	}
	endpoint, err := Endpoint(cfg)
	c.endpoint, c.endpointErr = strings.TrimSuffix(endpoint, "/"), err
	for _, o := range append([]Option{WithThrottleBackoff(ThrottleWindow), withDeadlineBudget}, opts...) {
		o(c)
	}
	if c.window > 0 {
		c.retryer = throttleRetryer{Retryer: c.retryer, window: c.window}
	}
	return c
}

// call makes one EC2 action with params, retrying what the retryer says is
// retryable up to its attempts, and returns the root element of the answer, which
// must be <action>Response.
func (c *Client) call(ctx context.Context, action string, params url.Values) (*element, error) {
	if c.endpointErr != nil {
		return nil, c.endpointErr
	}
	if c.creds == nil {
		return nil, errors.New("ec2: no AWS credentials in the config")
	}
	form := url.Values{"Action": {action}, "Version": {apiVersion}}
	for k, v := range params {
		form[k] = v
	}
	body := []byte(form.Encode())
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	release := func(error) error { return nil }
	for attempt := 1; ; attempt++ {
		root, err := c.attempt(ctx, action, body, hash)
		_ = release(err)
		if err == nil {
			return root, nil
		}
		if ctx.Err() != nil || attempt >= c.retryer.MaxAttempts() || !c.retryer.IsErrorRetryable(err) {
			return nil, err
		}
		rel, tokenErr := c.retryer.GetRetryToken(ctx, err)
		if tokenErr != nil {
			return nil, err // the retry quota is spent: the last answer is the error
		}
		release = rel
		delay, delayErr := c.retryer.RetryDelay(attempt, err)
		if delayErr != nil {
			return nil, err
		}
		if deadline, ok := ctx.Deadline(); ok && c.budget && isThrottle(err) {
			delay = ThrottleDelayWithin(attempt, c.retryer.MaxAttempts(), time.Until(deadline))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (waiting to retry after: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// attempt sends one signed request and reads its answer.
func (c *Client) attempt(ctx context.Context, action string, body []byte, hash string) (*element, error) {
	// The service and operation are in ctx as the SDK's clients put them, for an
	// aws.HTTPClient that looks (the boot storm's counts by operation).
	ctx = awsmiddleware.SetOperationName(awsmiddleware.SetServiceID(ctx, service.SDKID), action)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("getting credentials: %w", err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, hash, signingName, c.region, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("signing the request: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &smithyhttp.RequestSendError{Err: err} // a connection error, retryable unless it says otherwise
	}
	defer resp.Body.Close()
	answer, err := apierror.ReadAnswer(resp.Body, resp.StatusCode, maxAnswer)
	var tooLarge *apierror.TooLargeError
	if err != nil && !errors.As(err, &tooLarge) {
		return nil, &smithyhttp.RequestSendError{Err: err} // the connection broke: retryable
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, answerError(resp.StatusCode, answer)
	}
	root, err := readXML(answer)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if want := action + "Response"; root.name != want {
		return nil, fmt.Errorf("the answer is a %s, want a %s", quote.Name(root.name), want)
	}
	return root, nil
}

// APIError is an EC2 error answer (the Query protocol's Response/Errors/Error): its status, code, message and request ID
// (internal/apierror, which ec2api and eksapi share).
type APIError = apierror.APIError

// StatusError is an answer with an error status that is not an EC2 error (no error
// code: a proxy's or load balancer's page, for example; internal/apierror).
type StatusError = apierror.StatusError

// answerError decodes an error answer of the EC2 Query protocol:
// <Response><Errors><Error><Code>...</Code><Message>...</Message></Error></Errors><RequestID>...</RequestID></Response>.
func answerError(status int, body []byte) error {
	if root, err := readXML(body); err == nil && root.name == "Response" {
		if errs, err := root.child("Errors"); err == nil && errs != nil {
			if first := firstChild(errs, "Error"); first != nil {
				code, errCode := first.str("Code")
				msg, errMsg := first.str("Message")
				id, _ := root.str("RequestID")
				if errCode == nil && errMsg == nil && code != "" {
					return &APIError{Status: status, Code: strings.TrimSpace(code), Message: msg, RequestID: strings.TrimSpace(id)}
				}
			}
		}
	}
	return apierror.NewStatusError("EC2", status, body)
}

// firstChild returns e's first child named name, or nil.
func firstChild(e *element, name string) *element {
	for _, k := range e.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}
