package eksapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/eksapi"
)

// staticCreds are the credentials the tests sign with.
var staticCreds = aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-test", SessionToken: "token-test"}

// serve starts a server on 127.0.0.1 that answers every request with h, and a Client
// for it.
func serve(t *testing.T, h http.HandlerFunc) *eksapi.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := eksapi.New(aws.Config{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return staticCreds, nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRequestIsSigned checks the request a call sends: GET /clusters/<name>, and a
// SigV4 signature for service eks in the client's region that the SDK's signer,
// signing the same request at the same time, computes too.
func TestRequestIsSigned(t *testing.T) {
	var got *http.Request
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		_, _ = w.Write([]byte(`{"cluster":{"name":"demo","status":"ACTIVE"}}`))
	})
	if _, err := c.DescribeCluster(context.Background(), "demo"); err != nil {
		t.Fatal(err)
	}
	if got.Method != http.MethodGet || got.URL.Path != "/clusters/demo" {
		t.Fatalf("request %s %s, want GET /clusters/demo", got.Method, got.URL.Path)
	}
	auth := got.Header.Get("Authorization")
	if !strings.Contains(auth, "Credential=AKIDTEST/") || !strings.Contains(auth, "/eu-west-1/eks/aws4_request") {
		t.Fatalf("Authorization %q: not signed for eks in eu-west-1 with AKIDTEST", auth)
	}
	if got.Header.Get("X-Amz-Security-Token") != "token-test" {
		t.Errorf("X-Amz-Security-Token %q, want the session token", got.Header.Get("X-Amz-Security-Token"))
	}
	when, err := time.Parse("20060102T150405Z", got.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date: %v", err)
	}
	again, err := http.NewRequest(got.Method, "http://"+got.Host+got.URL.RequestURI(), nil)
	if err != nil {
		t.Fatal(err)
	}
	again.Header.Set("Accept", got.Header.Get("Accept"))
	const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if err := v4.NewSigner().SignHTTP(context.Background(), staticCreds, again, emptySHA256, "eks", "eu-west-1", when); err != nil {
		t.Fatal(err)
	}
	if want := again.Header.Get("Authorization"); auth != want {
		t.Errorf("signature differs from the SDK signer's:\n got %s\nwant %s", auth, want)
	}
}

// TestErrorAnswers decodes error answers in the forms the REST-JSON protocol allows.
func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    string
		body      string
		code, msg string // "" code: not an EKS error
		retryable bool
	}{
		{"header", 403, "AccessDeniedException", `{"message":"not authorized"}`, "AccessDeniedException", "not authorized", false},
		{"header with a suffix", 404, "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazon.coral.service/", `{"message":"No cluster found"}`, "ResourceNotFoundException", "No cluster found", false},
		{"body __type with a namespace", 400, "", `{"__type":"com.amazonaws.eks#InvalidParameterException","message":"bad"}`, "InvalidParameterException", "bad", false},
		{"body code and Message", 429, "", `{"code":"ThrottlingException","Message":"Rate exceeded"}`, "ThrottlingException", "Rate exceeded", true},
		{"unknown code, 503", 503, "SomethingNew", `{}`, "SomethingNew", "", true},
		{"proxy page, 502", 502, "", "<html>Bad Gateway</html>", "", "", true},
		{"proxy page, 403", 403, "", "<html>Forbidden</html>", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.header != "" {
					w.Header().Set("X-Amzn-ErrorType", tc.header)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			_, err := c.DescribeCluster(context.Background(), "demo")
			if err == nil {
				t.Fatal("no error")
			}
			var apiErr smithy.APIError
			isAPI := errors.As(err, &apiErr)
			if tc.code == "" {
				var se *eksapi.StatusError
				if isAPI || !errors.As(err, &se) || se.Status != tc.status {
					t.Fatalf("error %v: want a StatusError %d and no API error", err, tc.status)
				}
			} else if !isAPI || apiErr.ErrorCode() != tc.code || apiErr.ErrorMessage() != tc.msg {
				t.Fatalf("error %v: want code %q, message %q", err, tc.code, tc.msg)
			}
			if got := eksapi.Retryable(err); got != tc.retryable {
				t.Errorf("Retryable = %t, want %t", got, tc.retryable)
			}
			if !strings.Contains(err.Error(), "describe cluster demo") {
				t.Errorf("error %q does not name the cluster", err)
			}
		})
	}
}

// TestBadAnswers: an answer that is not a cluster, or that says one thing twice
// (the decoder would keep the last silently), is an error.
func TestBadAnswers(t *testing.T) {
	for name, tc := range map[string]struct{ body, want string }{
		"not JSON":          {"<html>OK</html>", "decoding the answer"},
		"no cluster":        {`{"clusters":[]}`, "the answer has no cluster"},
		"too large":         {`{"cluster":{"name":"` + strings.Repeat("x", 1<<20) + `"}}`, "larger than 1048576 bytes"},
		"an endpoint twice": {`{"cluster":{"name":"demo","endpoint":"https://a.example.com","endpoint":"https://evil.example.com"}}`, "cluster.endpoint: a key given twice"},
		"a cluster twice":   {`{"cluster":{"name":"demo"},"Cluster":{"name":"evil"}}`, "Cluster: a key given twice"},
	} {
		t.Run(name, func(t *testing.T) {
			c := serve(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(tc.body)) })
			if got, err := c.DescribeCluster(context.Background(), "demo"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%+v, error %v; want an error saying %q", got, err, tc.want)
			}
		})
	}
}

func TestCredentialsError(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	t.Cleanup(srv.Close)
	c, err := eksapi.New(aws.Config{
		Region: "us-west-2", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("no role yet")
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeCluster(context.Background(), "demo")
	if err == nil || !strings.Contains(err.Error(), "no role yet") || !eksapi.Retryable(err) || calls != 0 {
		t.Errorf("error %v (retryable %t) after %d requests; want the credentials error, retryable, no request", err, eksapi.Retryable(err), calls)
	}
}

// TestEndpointMatchesSDK holds Endpoint to the SDK's EKS endpoint resolver for
// regions of every partition (and regions no partition names), with and without
// FIPS and dual-stack.
func TestEndpointMatchesSDK(t *testing.T) {
	regions := []string{
		"us-east-1", "us-west-2", "eu-central-1", "ap-southeast-7", "mx-central-1", "il-central-1",
		"cn-north-1", "cn-northwest-1", "us-gov-west-1", "us-gov-east-1",
		"us-iso-east-1", "us-iso-west-1", "us-isob-east-1", "eu-isoe-west-1", "us-isof-south-1", "eusc-de-east-1",
		"xx-new-1", "cn-north-x", "us-gov-west", "us-iso-east-1a", "eusc-fr-east-1", "us-isob-", "cn-north_2-3",
	}
	sdk := eks.NewDefaultEndpointResolverV2()
	for _, region := range regions {
		for _, fips := range []bool{false, true} {
			for _, dual := range []bool{false, true} {
				env := map[string]string{"AWS_USE_FIPS_ENDPOINT": "false", "AWS_USE_DUALSTACK_ENDPOINT": "false"}
				if fips {
					env["AWS_USE_FIPS_ENDPOINT"] = "true"
				}
				if dual {
					env["AWS_USE_DUALSTACK_ENDPOINT"] = "true"
				}
				cfg, err := awsconf.Load(awsconf.Options{Region: region, Getenv: func(k string) string { return env[k] }})
				if err != nil {
					t.Fatal(err)
				}
				got, err := eksapi.Endpoint(cfg)
				want, wantErr := sdk.ResolveEndpoint(context.Background(), eks.EndpointParameters{
					Region: aws.String(region), UseFIPS: aws.Bool(fips), UseDualStack: aws.Bool(dual),
				})
				if err != nil || wantErr != nil || got != want.URI.String() {
					t.Errorf("%s fips=%t dual-stack=%t: %s, %v; the SDK: %s, %v", region, fips, dual, got, err, want.URI.String(), wantErr)
				}
			}
		}
	}
}

// TestCustomEndpoint: AWS_ENDPOINT_URL_EKS wins over AWS_ENDPOINT_URL, and neither
// goes with FIPS or dual-stack (an error, as in the SDK).
func TestCustomEndpoint(t *testing.T) {
	sdk := eks.NewDefaultEndpointResolverV2()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" for an error
	}{
		{"global", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1"}, "http://127.0.0.1:1"},
		{"per service wins", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_EKS": "https://127.0.0.1:2/base"}, "https://127.0.0.1:2/base"},
		{"ignored", map[string]string{"AWS_ENDPOINT_URL_EKS": "http://127.0.0.1:1", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}, "https://eks.us-west-2.amazonaws.com"},
		{"with FIPS", map[string]string{"AWS_ENDPOINT_URL_EKS": "http://127.0.0.1:1", "AWS_USE_FIPS_ENDPOINT": "true"}, ""},
		{"with dual-stack", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_USE_DUALSTACK_ENDPOINT": "true"}, ""},
		{"not a URL", map[string]string{"AWS_ENDPOINT_URL_EKS": "127.0.0.1:1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: func(k string) string { return tc.env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := eksapi.Endpoint(cfg)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("endpoint %s, want an error", got)
				}
			} else if err != nil || got != tc.want {
				t.Fatalf("endpoint %s, %v; want %s", got, err, tc.want)
			}
			if tc.name == "with FIPS" || tc.name == "with dual-stack" {
				_, sdkErr := sdk.ResolveEndpoint(context.Background(), eks.EndpointParameters{
					Region: aws.String("us-west-2"), Endpoint: aws.String("http://127.0.0.1:1"),
					UseFIPS: aws.Bool(tc.env["AWS_USE_FIPS_ENDPOINT"] == "true"), UseDualStack: aws.Bool(tc.env["AWS_USE_DUALSTACK_ENDPOINT"] == "true"),
				})
				if sdkErr == nil {
					t.Errorf("the SDK accepts this configuration")
				}
			}
		})
	}
}

// TestNoRedirects: a redirect is an error naming the request, final for Discover,
// and the other host sees nothing (today's SDK client followed a 307 with the
// session token), whether the client is eksapi's default or awsconf's.
func TestNoRedirects(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("X-Amz-Security-Token"))
		_, _ = w.Write([]byte(`{"cluster":{"name":"demo","status":"ACTIVE"}}`))
	}))
	t.Cleanup(other.Close)
	for _, code := range []int{301, 302, 307, 308} {
		for _, client := range []string{"default", "awsconf"} {
			t.Run(http.StatusText(code)+"/"+client, func(t *testing.T) {
				leaked = nil
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, other.URL+r.URL.Path, code)
				}))
				t.Cleanup(srv.Close)
				cfg := aws.Config{
					Region:       "eu-west-1",
					BaseEndpoint: aws.String(srv.URL),
					Credentials:  aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return staticCreds, nil }),
				}
				if client == "awsconf" {
					loaded, err := awsconf.Load(awsconf.Options{Region: "eu-west-1", Getenv: func(string) string { return "" }})
					if err != nil {
						t.Fatal(err)
					}
					cfg.HTTPClient = loaded.HTTPClient
				}
				c, err := eksapi.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.DescribeCluster(context.Background(), "demo")
				if err == nil || !strings.Contains(err.Error(), "GET /clusters/demo answered") || !strings.Contains(err.Error(), "not followed") {
					t.Errorf("DescribeCluster error %v, want one saying the redirect of GET /clusters/demo was not followed", err)
				}
				if err != nil && eksapi.Retryable(err) {
					t.Errorf("Retryable(%v) = true, want false", err)
				}
				if len(leaked) != 0 {
					t.Errorf("the other host got %d requests (session tokens %q), want none", len(leaked), leaked)
				}
			})
		}
	}
}

// TestErrorAnswersAreOneShortLine: an EKS error message (a server's text) is
// quoted short and escaped, however long or strange it is.
func TestErrorAnswersAreOneShortLine(t *testing.T) {
	for name, msg := range map[string]string{
		"100 KB": strings.Repeat("m", 100<<10),
		"lines":  "first\nsecond\x1b[31m",
	} {
		t.Run(name, func(t *testing.T) {
			c := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
				w.WriteHeader(403)
				b, _ := json.Marshal(map[string]string{"message": msg})
				_, _ = w.Write(b)
			})
			_, err := c.DescribeCluster(context.Background(), "demo")
			if err == nil {
				t.Fatal("no error")
			}
			if s := err.Error(); len(s) > 300 || strings.ContainsAny(s, "\n\x1b") {
				t.Errorf("error of %d bytes, want one short line: %.300q", len(s), s)
			}
		})
	}
}

// TestALargeAnswerCostsItsLimit: a DescribeCluster answer of 64 MiB, streamed,
// fails at the 1 MiB limit having cost a few MiB of memory, not its size.
func TestALargeAnswerCostsItsLimit(t *testing.T) {
	const size = 64 << 20
	head, xs := []byte(`{"cluster":{"name":"`), []byte(strings.Repeat("x", 32<<10)) // made once: the server allocates nothing as it sends
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(head)
		for sent := 0; sent < size; sent += len(xs) {
			if _, err := w.Write(xs); err != nil {
				return
			}
		}
	})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.DescribeCluster(context.Background(), "demo")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("DescribeCluster: %v; want the 1 MiB limit named", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("the call allocated %d MiB for a %d MiB answer; want a few MiB, the limit's", alloc>>20, size>>20)
	}
	t.Logf("%.1f MiB allocated: %v", float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), err)
}
