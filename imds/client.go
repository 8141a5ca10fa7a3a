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
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkimds "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// maxBody caps how much of one answer is read; real answers are far smaller.
const maxBody = 1 << 20

// errTooLarge is the answer of a path that is larger than maxBody.
var errTooLarge = fmt.Errorf("answer is larger than %d bytes", maxBody)

// maxToken caps the length of a session token; real ones are about 60 bytes.
const maxToken = 4096

// client reads paths through one SDK client. The SDK keeps one session token
// for the Fetch and drops it when a GET answers 401, so the next attempt PUTs
// for a new one. The SDK's own retries and timeouts are off: read retries,
// so it can count attempts and name the last status.
type client struct {
	sdk        *sdkimds.Client
	tr         *http.Transport
	opts       Options
	sequential bool // read one path at a time (the benchmark's baseline)
}

func newClient(opts Options) *client {
	tr := &http.Transport{
		Proxy:               nil, // IMDS is link-local: never through a proxy from the environment
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16, // the parallel paths reuse their connections
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	fallback := aws.FalseTernary
	if opts.AllowIMDSv1 {
		fallback = aws.TrueTernary
	}
	return &client{opts: opts, tr: tr, sdk: sdkimds.New(sdkimds.Options{
		Endpoint:                 opts.Endpoint,
		ClientEnableState:        sdkimds.ClientEnabled,
		EnableFallback:           fallback,
		HTTPClient:               &recorder{hc: &http.Client{Transport: tr}},
		Retryer:                  aws.NopRetryer{},
		DisableDefaultTimeout:    true,
		DisableDefaultMaxBackoff: true,
	})}
}

// close releases the client's idle connections.
func (c *client) close() { c.tr.CloseIdleConnections() }

// exchange is what one attempt saw on the wire: the SDK's errors do not
// always carry the status (a failed token PUT's never does), so the HTTP
// client notes it here.
type exchange struct {
	tokenAsked  bool  // this attempt PUT for a token
	tokenStatus int   // status of a token PUT made by this attempt; 0 if none
	tokenErr    error // the token PUT failed without a status, or answered no token
	status      int   // status of the GET; 0 if none
	err         error // the GET failed without a status
}

// exchangeKey is the context key of an attempt's *exchange.
type exchangeKey struct{}

// recorder is the SDK's HTTP client: it notes each exchange of an attempt
// and checks a token before the SDK uses it.
type recorder struct{ hc *http.Client }

// Do sends req and notes the result in the attempt's exchange.
func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	isToken := req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/"+PathToken)
	if ex != nil && isToken {
		ex.tokenAsked = true
	}
	resp, err := r.hc.Do(req)
	if ex == nil {
		return resp, err
	}
	switch {
	case err != nil && isToken:
		ex.tokenErr = unwrapURL(err)
	case err != nil:
		ex.err = unwrapURL(err)
	case isToken:
		ex.tokenStatus = resp.StatusCode
		if resp.StatusCode == http.StatusOK {
			if terr := checkToken(resp); terr != nil {
				ex.tokenErr = terr
				return nil, terr
			}
		}
	default:
		ex.status = resp.StatusCode
	}
	return resp, err
}

// checkToken reads a token answer, checks it looks like a token and puts the
// body back for the SDK.
func checkToken(resp *http.Response) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxToken+1))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read token: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	tok, err := singleLine(string(b))
	switch {
	case err != nil:
		return fmt.Errorf("not a token: %w", err)
	case len(b) > maxToken:
		return fmt.Errorf("not a token: longer than %d bytes", maxToken)
	case strings.ContainsAny(tok, " \t"):
		return fmt.Errorf("not a token: %s", excerpt(tok))
	}
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

// get returns the body of path, or the SDK's error.
func (c *client) get(ctx context.Context, path string) (string, error) {
	var content io.ReadCloser
	var err error
	switch {
	case path == PathUserData:
		var out *sdkimds.GetUserDataOutput
		if out, err = c.sdk.GetUserData(ctx, &sdkimds.GetUserDataInput{}); err == nil {
			content = out.Content
		}
	case strings.HasPrefix(path, "latest/dynamic/"):
		var out *sdkimds.GetDynamicDataOutput
		rest := strings.TrimPrefix(path, "latest/dynamic/")
		if out, err = c.sdk.GetDynamicData(ctx, &sdkimds.GetDynamicDataInput{Path: rest}); err == nil {
			content = out.Content
		}
	default:
		var out *sdkimds.GetMetadataOutput
		rest := strings.TrimPrefix(path, "latest/meta-data/")
		if out, err = c.sdk.GetMetadata(ctx, &sdkimds.GetMetadataInput{Path: rest}); err == nil {
			content = out.Content
		}
	}
	if err != nil {
		return "", err
	}
	defer content.Close()
	b, err := io.ReadAll(io.LimitReader(content, maxBody+1))
	if err != nil {
		return "", fmt.Errorf("read answer: %w", err)
	}
	if len(b) > maxBody {
		return "", errTooLarge
	}
	return string(b), nil
}
