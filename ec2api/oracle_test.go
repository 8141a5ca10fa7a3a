package ec2api

// The SDK's EC2 client is the oracle of these tests (a test dependency only): the
// same answers from the fake, the same request, the same endpoints.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/maxpods"
)

// apiCode is the API error code in err, "" when there is none.
func apiCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// TestAnswersMatchSDK asks the fake the same questions with ec2api and with the
// SDK's EC2 client: the same names, facts and error codes.
func TestAnswersMatchSDK(t *testing.T) {
	srv, c := newFake(t)
	cfg, err := LoadConfig("us-west-2", "")
	if err != nil {
		t.Fatal(err)
	}
	sdk := ec2.NewFromConfig(cfg)
	ctx := context.Background()
	for _, id := range []string{"i-0123456789abcdef0", "i-0000000000000dead", "i-1111111111111111f"} {
		got, err := c.PrivateDNSName(ctx, id)
		var want string
		out, sdkErr := sdk.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if sdkErr == nil {
			want = aws.ToString(out.Reservations[0].Instances[0].PrivateDnsName)
		}
		if got != want || apiCode(err) != apiCode(sdkErr) || (err == nil) != (sdkErr == nil && want != "") {
			t.Errorf("%s: ec2api %q, %v; the SDK %q, %v", id, got, err, want, sdkErr)
		}
	}
	for _, typ := range []string{"m5.large", "m5.8xlarge", "c5.metal", "m5.large2"} {
		got, err := c.InstanceTypeInfo(ctx, typ)
		var want maxpods.TypeInfo
		out, sdkErr := sdk.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []types.InstanceType{types.InstanceType(typ)}})
		if sdkErr == nil {
			it := out.InstanceTypes[0]
			want.Hypervisor = string(it.Hypervisor)
			if it.VCpuInfo != nil {
				want.VCPUs = int(aws.ToInt32(it.VCpuInfo.DefaultVCpus))
			}
			want.IPv4PerENI = int(aws.ToInt32(it.NetworkInfo.Ipv4AddressesPerInterface))
			want.ENIs = int(aws.ToInt32(it.NetworkInfo.NetworkCards[0].MaximumNetworkInterfaces))
		}
		if got != want || apiCode(err) != apiCode(sdkErr) || (err == nil) != (sdkErr == nil) {
			t.Errorf("%s: ec2api %+v, %v; the SDK %+v, %v", typ, got, err, want, sdkErr)
		}
	}
	srv.Update(func(a *ec2test.Answers) {
		a.Errors["DescribeInstances"] = ec2test.Error{Status: 403, Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}
	})
	_, err = c.PrivateDNSName(ctx, "i-0123456789abcdef0")
	_, sdkErr := sdk.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	if apiCode(err) != "UnauthorizedOperation" || apiCode(sdkErr) != "UnauthorizedOperation" {
		t.Errorf("unauthorized: ec2api %v; the SDK %v", err, sdkErr)
	}
}

// capture is a server that records each request's method, path, headers and body
// and answers with an empty DescribeInstancesResponse.
func capture(t *testing.T) (*httptest.Server, *[]*http.Request, *[]string) {
	t.Helper()
	var reqs []*http.Request
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		reqs, bodies = append(reqs, r.Clone(context.Background())), append(bodies, string(b))
		_, _ = io.WriteString(w, `<DescribeInstancesResponse><reservationSet/></DescribeInstancesResponse>`)
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs, &bodies
}

// TestRequestMatchesSDK: ec2api sends the SDK's request (POST /, the same form),
// signed for ec2 in the region, with a signature the SDK's signer computes too.
func TestRequestMatchesSDK(t *testing.T) {
	srv, reqs, bodies := capture(t)
	creds := aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-test", SessionToken: "token-test"}
	cfg := aws.Config{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil }),
	}
	ctx := context.Background()
	_, _ = New(cfg).PrivateDNSName(ctx, "i-0123456789abcdef0")
	_, _ = ec2.NewFromConfig(cfg).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	if len(*reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(*reqs))
	}
	got, sdk := (*reqs)[0], (*reqs)[1]
	if got.Method != sdk.Method || got.URL.Path != sdk.URL.Path || got.Header.Get("Content-Type") != sdk.Header.Get("Content-Type") {
		t.Errorf("request %s %s (%s); the SDK's %s %s (%s)", got.Method, got.URL.Path, got.Header.Get("Content-Type"),
			sdk.Method, sdk.URL.Path, sdk.Header.Get("Content-Type"))
	}
	gotForm, err1 := url.ParseQuery((*bodies)[0])
	sdkForm, err2 := url.ParseQuery((*bodies)[1])
	if err1 != nil || err2 != nil || gotForm.Encode() != sdkForm.Encode() {
		t.Errorf("form %q; the SDK's %q", (*bodies)[0], (*bodies)[1])
	}
	auth := got.Header.Get("Authorization")
	if !strings.Contains(auth, "Credential=AKIDTEST/") || !strings.Contains(auth, "/eu-west-1/ec2/aws4_request") {
		t.Fatalf("Authorization %q: not signed for ec2 in eu-west-1 with AKIDTEST", auth)
	}
	if got.Header.Get("X-Amz-Security-Token") != "token-test" {
		t.Errorf("X-Amz-Security-Token %q, want the session token", got.Header.Get("X-Amz-Security-Token"))
	}
	when, err := time.Parse("20060102T150405Z", got.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date: %v", err)
	}
	again, err := http.NewRequest(got.Method, "http://"+got.Host+got.URL.RequestURI(), strings.NewReader((*bodies)[0]))
	if err != nil {
		t.Fatal(err)
	}
	again.Header.Set("Content-Type", got.Header.Get("Content-Type"))
	sum := sha256.Sum256([]byte((*bodies)[0]))
	if err := v4.NewSigner().SignHTTP(ctx, creds, again, hex.EncodeToString(sum[:]), "ec2", "eu-west-1", when); err != nil {
		t.Fatal(err)
	}
	if want := again.Header.Get("Authorization"); auth != want {
		t.Errorf("signature differs from the SDK signer's:\n got %s\nwant %s", auth, want)
	}
}

// TestEndpointMatchesSDK holds Endpoint to the SDK's EC2 endpoint resolver for
// regions of every partition (and regions no partition names), with and without
// FIPS and dual-stack, and for the configured endpoints.
func TestEndpointMatchesSDK(t *testing.T) {
	regions := []string{
		"us-east-1", "us-west-2", "eu-central-1", "ap-southeast-7", "mx-central-1", "il-central-1",
		"cn-north-1", "cn-northwest-1", "us-gov-west-1", "us-gov-east-1",
		"us-iso-east-1", "us-iso-west-1", "us-isob-east-1", "eu-isoe-west-1", "us-isof-south-1", "eusc-de-east-1",
		"xx-new-1", "cn-north-x", "us-gov-west", "us-iso-east-1a", "eusc-fr-east-1", "us-isob-", "cn-north_2-3",
	}
	sdk := ec2.NewDefaultEndpointResolverV2()
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
				got, err := Endpoint(cfg)
				want, wantErr := sdk.ResolveEndpoint(context.Background(), ec2.EndpointParameters{
					Region: aws.String(region), UseFIPS: aws.Bool(fips), UseDualStack: aws.Bool(dual),
				})
				if err != nil || wantErr != nil || got != want.URI.String() {
					t.Errorf("%s fips=%t dual-stack=%t: %s, %v; the SDK: %s, %v", region, fips, dual, got, err, want.URI.String(), wantErr)
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" for an error
	}{
		{"global", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1"}, "http://127.0.0.1:1"},
		{"per service wins", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_EC2": "https://127.0.0.1:2/base"}, "https://127.0.0.1:2/base"},
		{"another service's", map[string]string{"AWS_ENDPOINT_URL_EKS": "http://127.0.0.1:1"}, "https://ec2.us-west-2.amazonaws.com"},
		{"ignored", map[string]string{"AWS_ENDPOINT_URL_EC2": "http://127.0.0.1:1", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}, "https://ec2.us-west-2.amazonaws.com"},
		{"with FIPS", map[string]string{"AWS_ENDPOINT_URL_EC2": "http://127.0.0.1:1", "AWS_USE_FIPS_ENDPOINT": "true"}, ""},
		{"with dual-stack", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_USE_DUALSTACK_ENDPOINT": "true"}, ""},
		{"not a URL", map[string]string{"AWS_ENDPOINT_URL_EC2": "127.0.0.1:1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: func(k string) string { return tc.env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Endpoint(cfg)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("endpoint %s, want an error", got)
				}
				if _, callErr := New(cfg).PrivateDNSName(context.Background(), "i-1"); callErr == nil || !strings.Contains(callErr.Error(), err.Error()) {
					t.Errorf("a call with a bad endpoint setting: %v; want %v", callErr, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("endpoint %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}
