package ec2api

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/maxpods"
)

// hermeticEnv points the SDK at endpoint with fake static credentials, no shared
// config files and IMDS disabled, so that nothing can leave 127.0.0.1.
func hermeticEnv(t *testing.T, endpoint string) {
	t.Helper()
	for _, k := range []string{
		"AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN",
		"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE",
	} {
		t.Setenv(k, "") // registers the restore
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKEFAKE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ENDPOINT_URL_EC2", endpoint)
}

// newFake starts a fake EC2 with one instance and m5.large, and a Client for it.
func newFake(t *testing.T) (*ec2test.Server, *Client) {
	t.Helper()
	srv, err := ec2test.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	srv.AddInstance("i-0123456789abcdef0", "ip-10-0-1-23.us-west-2.compute.internal")
	srv.AddInstance("i-0000000000000dead", "")
	srv.Update(func(a *ec2test.Answers) {
		a.Types["m5.large"] = maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3, IPv4PerENI: 10}
	})
	srv.Update(func(a *ec2test.Answers) {
		a.Types["m5.8xlarge"] = maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 32, ENIs: 8, IPv4PerENI: 30}
	})
	srv.Update(func(a *ec2test.Answers) { a.Types["c5.metal"] = maxpods.TypeInfo{VCPUs: 96, ENIs: 15, IPv4PerENI: 50} })
	hermeticEnv(t, srv.URL())
	cfg, err := LoadConfig("us-west-2", "")
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return srv, New(cfg)
}

func TestPrivateDNSName(t *testing.T) {
	tests := []struct {
		name     string
		id       string
		setErr   func(*ec2test.Server)
		want     string
		wantIs   error  // errors.Is target, if any
		wantCode string // smithy API error code, if any
		wantErr  string // substring of the error message
		calls    int    // DescribeInstances requests expected (errors other than 5xx are not retried)
	}{
		{name: "ok", id: "i-0123456789abcdef0", want: "ip-10-0-1-23.us-west-2.compute.internal", calls: 1},
		{
			name: "empty name", id: "i-0000000000000dead", wantIs: ErrEmptyDNSName,
			wantErr: "describe instance i-0000000000000dead: empty private DNS name", calls: 1,
		},
		{
			name: "unknown instance", id: "i-1111111111111111f", wantCode: "InvalidInstanceID.NotFound",
			wantErr: "describe instance i-1111111111111111f: ", calls: 1,
		},
		{
			name: "unauthorized", id: "i-0123456789abcdef0", wantCode: "UnauthorizedOperation",
			setErr: func(s *ec2test.Server) {
				s.Update(func(a *ec2test.Answers) {
					a.Errors["DescribeInstances"] = ec2test.Error{Status: 403, Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}
				})
			},
			wantErr: "describe instance i-0123456789abcdef0: ", calls: 1,
		},
		{name: "empty id", id: "", wantErr: "describe instance: empty instance ID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newFake(t)
			if tc.setErr != nil {
				tc.setErr(srv)
			}
			got, err := c.PrivateDNSName(context.Background(), tc.id)
			if n := srv.Calls("DescribeInstances"); n != tc.calls {
				t.Errorf("DescribeInstances calls = %d, want %d", n, tc.calls)
			}
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("PrivateDNSName(%q) = %q, %v; want %q, nil", tc.id, got, err, tc.want)
				}
				return
			}
			checkErr(t, err, tc.wantErr, tc.wantIs, tc.wantCode)
		})
	}
}

func TestInstanceTypeInfo(t *testing.T) {
	tests := []struct {
		name        string
		typ         string
		setErr      func(*ec2test.Server)
		want        maxpods.TypeInfo
		wantClassic int
		wantIs      error
		wantCode    string
		wantErr     string
	}{
		{
			name: "m5.large", typ: "m5.large",
			want: maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3, IPv4PerENI: 10}, wantClassic: 29,
		},
		{
			name: "m5.8xlarge", typ: "m5.8xlarge",
			want: maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 32, ENIs: 8, IPv4PerENI: 30}, wantClassic: 234,
		},
		{
			name: "bare metal without hypervisor", typ: "c5.metal",
			want: maxpods.TypeInfo{VCPUs: 96, ENIs: 15, IPv4PerENI: 50}, wantClassic: 737,
		},
		{
			name: "unknown type", typ: "m5.large2", wantIs: ErrUnknownInstanceType, wantCode: "InvalidInstanceType",
			wantErr: "describe instance type m5.large2: unknown instance type: ",
		},
		{
			name: "empty type", typ: "", wantIs: ErrUnknownInstanceType,
			wantErr: "describe instance type: empty name: unknown instance type",
		},
		{
			name: "unauthorized", typ: "m5.large", wantCode: "UnauthorizedOperation",
			setErr: func(s *ec2test.Server) {
				s.Update(func(a *ec2test.Answers) {
					a.Errors["DescribeInstanceTypes"] = ec2test.Error{Status: 403, Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}
				})
			},
			wantErr: "describe instance type m5.large: ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newFake(t)
			if tc.setErr != nil {
				tc.setErr(srv)
			}
			got, err := c.InstanceTypeInfo(context.Background(), tc.typ)
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("InstanceTypeInfo(%q) = %+v, %v; want %+v, nil", tc.typ, got, err, tc.want)
				}
				if n, err := maxpods.Classic(got); err != nil || n != tc.wantClassic {
					t.Errorf("Classic(%+v) = %d, %v; want %d", got, n, err, tc.wantClassic)
				}
				return
			}
			checkErr(t, err, tc.wantErr, tc.wantIs, tc.wantCode)
			if got, want := errors.Is(err, ErrUnknownInstanceType), tc.wantIs != nil; got != want {
				t.Errorf("errors.Is(%q, ErrUnknownInstanceType) = %v, want %v", err, got, want)
			}
		})
	}
}

// checkErr checks that err contains msg, wraps is (when not nil) and carries an API
// error with code (when not empty), whose code also shows in the message.
func checkErr(t *testing.T, err error, msg string, is error, code string) {
	t.Helper()
	t.Logf("error: %v", err)
	if err == nil {
		t.Fatalf("got no error, want one containing %q", msg)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not contain %q", err, msg)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("error %q does not wrap %v", err, is)
	}
	if code == "" {
		return
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != code {
		t.Errorf("error %q: want an API error with code %s", err, code)
	}
	if !strings.Contains(err.Error(), code) {
		t.Errorf("error %q does not mention %s", err, code)
	}
}

func TestLoadConfig(t *testing.T) {
	for _, region := range []string{"eu-west-1", "us-east-2"} {
		t.Run(region, func(t *testing.T) {
			hermeticEnv(t, "http://127.0.0.1:1")
			cfg, err := LoadConfig(region, "")
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if cfg.Region != region {
				t.Errorf("Region = %q, want %q", cfg.Region, region)
			}
			if cfg.Retryer == nil {
				t.Fatal("Retryer is nil, want a bounded retryer")
			}
			if got := cfg.Retryer().MaxAttempts(); got != MaxAttempts {
				t.Errorf("Retryer().MaxAttempts() = %d, want %d", got, MaxAttempts)
			}
		})
	}
	t.Run("no region", func(t *testing.T) {
		hermeticEnv(t, "http://127.0.0.1:1")
		t.Setenv("AWS_REGION", "")
		t.Setenv("AWS_DEFAULT_REGION", "")
		if _, err := LoadConfig("", ""); err == nil || !strings.Contains(err.Error(), "no AWS region") {
			t.Errorf("LoadConfig without a region: error %v, want one naming the missing region", err)
		}
	})
}

// TestLoadConfigForIMDSv1: the instance-profile read of LoadConfig is IMDSv2 only;
// LoadConfigFor with the fallback may read without a token.
func TestLoadConfigForIMDSv1(t *testing.T) {
	hermeticEnv(t, "http://127.0.0.1:1")
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_V1_DISABLED"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	fake, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	role, creds := "eks-node-role", `{"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"ASIAV1","SecretAccessKey":"s","Token":"t","Expiration":"2100-01-01T00:00:00Z"}`
	fake.SetOverride("latest/meta-data/iam/security-credentials/", &role)
	fake.SetOverride("latest/meta-data/iam/security-credentials/"+role, &creds)
	fake.SetIMDSv1(true)
	fake.SetFaults("latest/api/token", imdstest.Fault{Kind: imdstest.FaultStatus, Status: 403})
	for _, fallback := range []bool{false, true} {
		cfg, err := LoadConfigFor("us-west-2", fake.URL(), fallback)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cfg.Credentials.Retrieve(context.Background())
		if fallback && (err != nil || got.AccessKeyID != "ASIAV1") {
			t.Errorf("fallback on: Retrieve = %s, %v; want the credentials over IMDSv1", got.AccessKeyID, err)
		}
		if !fallback && (err == nil || !strings.Contains(err.Error(), "IMDSv1 fallback is off")) {
			t.Errorf("fallback off: Retrieve = %s, %v; want an error saying IMDSv1 fallback is off", got.AccessKeyID, err)
		}
	}
}
