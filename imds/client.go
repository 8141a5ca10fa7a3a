package imds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkimds "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/eksboot/eksboot/internal/scrub"
)

// Limits of one answer, in bytes, applied on the wire as the body is read (for
// MetadataClient, by the SDK's HTTP client, since the SDK reads every body whole
// before it returns it): an answer larger than its limit is cut off there and
// fails its path, costing no more memory than the limit. Real answers are far smaller: facts are tens of bytes,
// the identity document about 500, the user data at most 16 KiB on EC2 (more
// reaches no instance).
const (
	// MaxUserData bounds latest/user-data: twice the user-data parser's own cap
	// (userdata.MaxUserData, 64 KiB), so that for user data near that cap the
	// parser's error, which gives the size, is the one a user sees; beyond it the
	// read stops. EC2 itself accepts at most 16 KiB.
	MaxUserData = 128 << 10
	// MaxIdentityDocument bounds the identity document.
	MaxIdentityDocument = 32 << 10
	// MaxAnswer bounds every other answer: a fact, a token, an error page, the
	// instance profile's credentials.
	MaxAnswer = 16 << 10
)

// maxToken caps the length of a session token; real ones are about 60 bytes.
const maxToken = 4096

// errTooLarge is the cause of every *tooLargeError, for errors.Is.
var errTooLarge = errors.New("answer too large")

// tooLargeError is an answer cut off at its limit.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("answer is larger than the %d-byte limit (%d KiB); no real one is", e.limit, e.limit>>10)
}

func (e *tooLargeError) Is(target error) bool { return target == errTooLarge }

// RetryableError tells the SDK's retryers not to ask again.
func (e *tooLargeError) RetryableError() bool { return false }

// limitOf returns the limit of the answer to a request for urlPath.
func limitOf(urlPath string) int64 {
	switch strings.TrimLeft(urlPath, "/") {
	case PathUserData:
		return MaxUserData
	case PathIdentityDocument:
		return MaxIdentityDocument
	}
	return MaxAnswer
}

// limitedBody reads a body up to its limit and fails when there is more.
type limitedBody struct {
	rc    io.ReadCloser
	left  int64 // bytes still allowed
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &tooLargeError{b.limit}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the limit tells an answer that is too large
	}
	n, err := b.rc.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n - 1, &tooLargeError{b.limit}
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// errRedirect is the cause of every *redirectError, for errors.Is.
var errRedirect = errors.New("redirect refused")

// redirectError is a redirect the client refused to follow.
type redirectError struct {
	status int
	host   string // the host it pointed to
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("answered %d, a redirect to host %s: not followed (IMDS answers directly; a redirect comes from something in between, and following it would send the session token there)", e.status, excerpt(e.host))
}

func (e *redirectError) Is(target error) bool { return target == errRedirect }

// RetryableError tells the SDK's retryers not to ask again.
func (e *redirectError) RetryableError() bool { return false }

// refuseRedirect is the CheckRedirect of every IMDS client: IMDS never redirects.
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	return &redirectError{status: status, host: req.URL.Host}
}

// client reads paths for one Fetch over one HTTP client, keeping the session
// token the paths share. It speaks IMDSv2 as aws-sdk-go-v2's feature/ec2/imds
// client does (oracle_test.go holds it to that client, the same requests and the
// same outcomes for every fault of the fake), without the SDK's middleware stack,
// which cost every boot more instructions than the whole of a minimal bootstrap:
//
//   - one token (PUT latest/api/token, a TTL of tokenTTL) for every path, fetched
//     by the first path that needs one while the others wait, and fetched again
//     once its TTL has run out or a GET answered 401;
//   - a token answer that is not a token, or that gives no TTL, fails the attempt;
//   - with AllowIMDSv1, a refused token (403, 404, 405) or an unreachable token
//     path turns IMDSv1 on for the later paths, and any other token failure but
//     400 lets this one GET go without a token; a 401 turns IMDSv2 back on.
//
// No retries or timeouts of its own: read retries, so it can count attempts and
// name the last status.
type client struct {
	base       string // "scheme://host[:port]"
	hc         *http.Client
	tr         *http.Transport
	opts       Options
	sequential bool // read one path at a time (the benchmark's baseline)
	// via, when set (by tests), reads a path in place of the client's own get.
	via func(ctx context.Context, path string) (string, error)

	mu      sync.Mutex // held while the token is checked or fetched
	token   string     // the session token; "" when there is none yet
	expires time.Time
	v1      atomic.Bool // IMDSv1 is on (see above): GETs go without a token
}

// DefaultEndpoint is the service's address when Options.Endpoint is "".
const DefaultEndpoint = "http://169.254.169.254"

// tokenTTL is the lifetime asked for each session token, the SDK's: a Fetch
// ends well within it.
const tokenTTL = 300

// userAgent is the User-Agent of every request.
const userAgent = "eksboot"

func newClient(opts Options) *client {
	tr := newTransport()
	base := opts.Endpoint
	if base == "" {
		base = DefaultEndpoint
	}
	return &client{
		base: strings.TrimSuffix(base, "/"), opts: opts, tr: tr,
		hc: &http.Client{Transport: tr, CheckRedirect: refuseRedirect},
	}
}

// newTransport returns the transport of an IMDS client.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil, // IMDS is link-local: never through a proxy from the environment
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16, // the parallel paths reuse their connections
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
}

// MetadataClient reads meta-data paths for readers other than Fetch (the
// instance profile's credentials, read by the SDK's ec2rolecreds, whose
// GetMetadataAPIClient it implements), under Fetch's rules: IMDSv2 only unless
// allowed, no proxy, no redirect followed, every answer through its limit
// (MaxAnswer), a token answer checked and never quoted. The SDK's own retries
// and timeouts apply. Its errors are *PathError, with the GET's status.
type MetadataClient struct {
	sdk     *sdkimds.Client
	allowV1 bool
}

// NewMetadataClient returns a MetadataClient for endpoint, a base URL as
// Options.Endpoint ("" the SDK's default address); allowIMDSv1 is as
// Options.AllowIMDSv1.
func NewMetadataClient(endpoint string, allowIMDSv1 bool) *MetadataClient {
	fallback := aws.FalseTernary
	if allowIMDSv1 {
		fallback = aws.TrueTernary
	}
	return &MetadataClient{allowV1: allowIMDSv1, sdk: sdkimds.New(sdkimds.Options{
		Endpoint:          endpoint,
		ClientEnableState: sdkimds.ClientEnabled,
		EnableFallback:    fallback,
		HTTPClient:        &recorder{hc: &http.Client{Transport: newTransport(), CheckRedirect: refuseRedirect}},
	})}
}

// GetMetadata reads latest/meta-data/<in.Path>.
func (c *MetadataClient) GetMetadata(ctx context.Context, in *sdkimds.GetMetadataInput, optFns ...func(*sdkimds.Options)) (*sdkimds.GetMetadataOutput, error) {
	ex := &exchange{}
	out, err := c.sdk.GetMetadata(context.WithValue(ctx, exchangeKey{}, ex), in, optFns...)
	if err == nil {
		return out, nil
	}
	path := "latest/meta-data/" + strings.TrimLeft(in.Path, "/")
	var tl *tooLargeError
	var re *redirectError
	switch ts := ex.tokenStatus; {
	case errors.As(ex.err, &re) || errors.As(ex.tokenErr, &re):
		err = re
	case errors.As(err, &tl):
		err = tl
	case ex.tokenErr != nil:
		err = fmt.Errorf("session token (PUT %s): %w", PathToken, ex.tokenErr)
	case !c.allowV1 && (ts == http.StatusForbidden || ts == http.StatusNotFound || ts == http.StatusMethodNotAllowed):
		err = fmt.Errorf("the service refused an IMDSv2 session token (PUT %s: %w) and IMDSv1 fallback is off", PathToken, statusError(ts))
	case ts != 0 && ts != http.StatusOK:
		err = fmt.Errorf("session token (PUT %s): %w", PathToken, statusError(ts))
	case ex.status != 0 && ex.status != http.StatusOK:
		err = statusError(ex.status)
	}
	return nil, scrub.Err(&PathError{Path: path, Attempts: 1, Status: ex.status, Err: err})
}

// EnvV1Disabled is the AWS SDKs' variable that turns IMDSv1 off ("true").
const EnvV1Disabled = "AWS_EC2_METADATA_V1_DISABLED"

// V1Allowed reports whether IMDSv1 may be used: only when asked for (flag,
// --imds-v1-fallback) and AWS_EC2_METADATA_V1_DISABLED is not true. A value of
// the variable other than true or false (any case) is an error naming it.
// getenv nil means os.Getenv.
func V1Allowed(flag bool, getenv func(string) string) (bool, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch v := getenv(EnvV1Disabled); {
	case v == "", strings.EqualFold(v, "false"):
		return flag, nil
	case strings.EqualFold(v, "true"):
		return false, nil
	default:
		return false, fmt.Errorf("%s=%s: want true or false", EnvV1Disabled, excerpt(v))
	}
}

// close releases the client's idle connections.
func (c *client) close() { c.tr.CloseIdleConnections() }

// exchange is what one attempt saw on the wire, noted by get (or, under the
// SDK's client, by recorder: its errors do not always carry the status, a
// failed token PUT's never does); read's verdicts are made from it.
type exchange struct {
	tokenAsked  bool  // this attempt PUT for a token
	tokenStatus int   // status of a token PUT made by this attempt; 0 if none
	tokenErr    error // the token PUT failed without a status, or answered no token
	status      int   // status of the GET; 0 if none
	err         error // the GET failed without a status
}

// exchangeKey is the context key of an attempt's *exchange.
type exchangeKey struct{}

// recorder is the HTTP client of the SDK's clients (MetadataClient's, and the
// oracle's in the tests): it notes each exchange of an attempt and checks a
// token before the SDK uses it.
type recorder struct{ hc *http.Client }

// Do sends req, puts the answer's body behind its limit and notes the result
// in the attempt's exchange.
func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	isToken := req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/"+PathToken)
	if ex != nil && isToken {
		ex.tokenAsked = true
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		resp = nil // a refused redirect's answer, its body closed
	} else {
		limit := limitOf(req.URL.Path)
		resp.Body = &limitedBody{rc: resp.Body, left: limit, limit: limit}
	}
	var terr error
	if err == nil && isToken && resp.StatusCode == http.StatusOK {
		terr = checkToken(resp)
	}
	if ex != nil {
		switch {
		case err != nil && isToken:
			ex.tokenErr = unwrapURL(err)
		case err != nil:
			ex.err = unwrapURL(err)
		case isToken:
			ex.tokenStatus = resp.StatusCode
			ex.tokenErr = terr
		default:
			ex.status = resp.StatusCode
		}
	}
	if terr != nil {
		return nil, terr
	}
	return resp, err
}

// checkToken reads a token answer, checks it looks like a token and puts the
// body back for the SDK. Its errors never quote the answer: it may be a real
// token with one stray byte.
func checkToken(resp *http.Response) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxToken+1))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read token: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	tok := strings.TrimSpace(string(b))
	switch {
	case len(b) > maxToken:
		return fmt.Errorf("not a token: longer than %d bytes", maxToken)
	case tok == "":
		return errors.New("not a token: empty answer")
	case strings.HasPrefix(tok, "<"):
		return errors.New("not a token: an HTML page (not quoted)")
	case strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return fmt.Errorf("not a token: %d bytes with white space, control or non-ASCII characters (not quoted)", len(tok))
	}
	scrub.Process.Add(tok) // a secret from now on, wherever an answer quotes it
	return nil
}

// unwrapURL drops net/http's "Get URL:" prefix; errors name the path anyway.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// get returns the body of path (no leading "/"): a GET with the session token,
// its answer read through its limit. Each exchange is noted in the attempt's
// exchange (the context's), which read's verdicts are made from.
func (c *client) get(ctx context.Context, path string) (string, error) {
	if c.via != nil {
		return c.via(ctx, path)
	}
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	if ex == nil {
		ex = &exchange{}
	}
	tok, err := c.sessionToken(ctx, ex)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/"+path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", userAgent)
	if tok != "" {
		req.Header.Set(tokenHeader, tok)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		ex.err = unwrapURL(err)
		return "", ex.err
	}
	ex.status = resp.StatusCode
	if resp.StatusCode == http.StatusUnauthorized {
		c.dropToken()
	}
	limit := limitOf(path)
	b, err := io.ReadAll(&limitedBody{rc: resp.Body, left: limit, limit: limit})
	resp.Body.Close()
	switch {
	case err != nil:
		return "", fmt.Errorf("read answer: %w", err)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return "", statusError(resp.StatusCode)
	}
	return string(b), nil
}

// Headers of the session token.
const (
	tokenHeader    = "X-Aws-Ec2-Metadata-Token"
	tokenTTLHeader = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
)

// sessionToken returns the token for a GET: the one kept, else a new one, else
// "" for a GET without one where IMDSv1 is allowed.
func (c *client) sessionToken(ctx context.Context, ex *exchange) (string, error) {
	if c.opts.AllowIMDSv1 && c.v1.Load() {
		return "", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && !time.Now().After(c.expires) {
		return c.token, nil
	}
	tok, ttl, err := c.putToken(ctx, ex)
	if err != nil {
		if c.opts.AllowIMDSv1 && ex.tokenStatus != http.StatusBadRequest {
			return "", nil // this GET without a token
		}
		return "", err
	}
	c.token, c.expires = tok, time.Now().Add(ttl)
	return tok, nil
}

// putToken asks for a session token, noting the exchange in ex.
func (c *client) putToken(ctx context.Context, ex *exchange) (string, time.Duration, error) {
	ex.tokenAsked = true
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.base+"/"+PathToken, nil)
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(tokenTTLHeader, strconv.Itoa(tokenTTL))
	resp, err := c.hc.Do(req)
	if err != nil {
		ex.tokenErr = unwrapURL(err)
		c.v1.Store(true) // an unreachable token path: IMDSv1, where allowed
		return "", 0, ex.tokenErr
	}
	ex.tokenStatus = resp.StatusCode
	resp.Body = &limitedBody{rc: resp.Body, left: MaxAnswer, limit: MaxAnswer}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed:
			c.v1.Store(true) // tokens refused: IMDSv1, where allowed
		}
		return "", 0, statusError(resp.StatusCode)
	}
	if err := checkToken(resp); err != nil {
		ex.tokenErr = err
		c.v1.Store(true)
		return "", 0, err
	}
	b, _ := io.ReadAll(resp.Body) // checkToken's copy (and the token kept in scrub.Process)
	ttl, err := strconv.ParseInt(resp.Header.Get(tokenTTLHeader), 10, 64)
	if err != nil {
		ex.tokenErr = fmt.Errorf("not a token: no TTL in %s", tokenTTLHeader)
		return "", 0, ex.tokenErr
	}
	return string(b), time.Duration(ttl) * time.Second, nil
}

// dropToken forgets the token after a 401, so the next GET asks for a new one,
// and turns IMDSv2 back on.
func (c *client) dropToken() {
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
	c.v1.Store(false)
}
