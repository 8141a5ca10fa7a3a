package awsconf_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/imds/imdstest"
)

// env is a fake environment for Options.Getenv.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// clearRealEnv unsets the endpoint variables that the SDK's service clients also
// look up in the process environment themselves.
func clearRealEnv(t *testing.T) {
	t.Helper()
	for _, k := range os.Environ() {
		name, _, _ := strings.Cut(k, "=")
		if strings.HasPrefix(name, "AWS_") {
			t.Setenv(name, "") // registers the restore
			os.Unsetenv(name)
		}
	}
}

// recorder is an HTTP server on 127.0.0.1 that answers 500 to everything and keeps
// the Authorization header of each request.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newRecorder(t *testing.T, tls bool) *recorder {
	t.Helper()
	r := &recorder{}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		http.Error(w, "recorder", http.StatusInternalServerError)
	})
	if tls {
		r.srv = httptest.NewTLSServer(h)
	} else {
		r.srv = httptest.NewServer(h)
	}
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// callEC2 makes one DescribeInstances call, without retries, with cfg.
func callEC2(t *testing.T, cfg aws.Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Retryer = aws.NopRetryer{} })
	_, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	return err
}

// fakeIMDSWithRole starts a fake IMDS that serves instance-profile credentials.
func fakeIMDSWithRole(t *testing.T, accessKey string) *imdstest.Server {
	t.Helper()
	s, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	role := "eks-node-role"
	creds := `{"Code":"Success","LastUpdated":"2026-01-01T00:00:00Z","Type":"AWS-HMAC",` +
		`"AccessKeyId":"` + accessKey + `","SecretAccessKey":"secret","Token":"session-token",` +
		`"Expiration":"` + time.Now().Add(6*time.Hour).UTC().Format(time.RFC3339) + `"}`
	s.SetOverride("latest/meta-data/iam/security-credentials/", &role)
	s.SetOverride("latest/meta-data/iam/security-credentials/"+role, &creds)
	return s
}

func countPath(s *imdstest.Server, prefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Path, prefix) {
			n++
		}
	}
	return n
}

func TestCredentials(t *testing.T) {
	const credPath = "/latest/meta-data/iam/security-credentials/"
	tests := []struct {
		name      string
		env       env
		wantKey   string // the access key that signs the request
		wantToken bool
		imdsCalls bool // the instance profile was asked
	}{
		{"instance profile", env{}, "ASIAFROMIMDS", true, true},
		{"environment keys first", env{awsconf.EnvAccessKeyID: "AKIDFROMENV", awsconf.EnvSecretAccessKey: "s"}, "AKIDFROMENV", false, false},
		{"environment keys with a session token", env{awsconf.EnvAccessKeyID: "ASIAFROMENV", awsconf.EnvSecretAccessKey: "s", awsconf.EnvSessionToken: "t"}, "ASIAFROMENV", true, false},
		{"half a key pair is not a key pair", env{awsconf.EnvAccessKeyID: "AKIDFROMENV"}, "ASIAFROMIMDS", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearRealEnv(t)
			fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
			rec := newRecorder(t, false)
			tc.env[awsconf.EnvEndpointURL+"_EC2"] = rec.srv.URL
			cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: tc.env.get})
			if err != nil {
				t.Fatal(err)
			}
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatalf("Retrieve: %v", err)
			}
			if creds.AccessKeyID != tc.wantKey || (creds.SessionToken != "") != tc.wantToken {
				t.Errorf("credentials %s (session token %t), want %s (%t)", creds.AccessKeyID, creds.SessionToken != "", tc.wantKey, tc.wantToken)
			}
			_ = callEC2(t, cfg) // the recorder answers 500
			auth := rec.requests()
			if len(auth) != 1 || !strings.Contains(auth[0], "Credential="+tc.wantKey+"/") {
				t.Errorf("EC2 requests signed %q, want one signed by %s", auth, tc.wantKey)
			}
			if got := countPath(fake, credPath) > 0; got != tc.imdsCalls {
				t.Errorf("instance profile asked: %t, want %t (%+v)", got, tc.imdsCalls, fake.Requests())
			}
		})
	}
}

func TestCredentialsWithIMDSDisabled(t *testing.T) {
	clearRealEnv(t)
	fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
	cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: env{awsconf.EnvIMDSDisabled: "true"}.get})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.Credentials.Retrieve(context.Background())
	if err == nil || !strings.Contains(err.Error(), "AWS_EC2_METADATA_DISABLED=true") {
		t.Errorf("Retrieve error %v, want one naming AWS_EC2_METADATA_DISABLED", err)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d IMDS requests, want none", n)
	}
}

func TestRegion(t *testing.T) {
	for _, tc := range []struct {
		name, region string
		env          env
		want         string
	}{
		{"given", "eu-west-1", env{awsconf.EnvRegion: "us-east-1"}, "eu-west-1"},
		{"AWS_REGION", "", env{awsconf.EnvRegion: "us-east-1", awsconf.EnvDefaultRegion: "us-east-2"}, "us-east-1"},
		{"AWS_DEFAULT_REGION", "", env{awsconf.EnvDefaultRegion: "us-east-2"}, "us-east-2"},
	} {
		cfg, err := awsconf.Load(awsconf.Options{Region: tc.region, Getenv: tc.env.get})
		if err != nil || cfg.Region != tc.want {
			t.Errorf("%s: region %q, %v; want %q", tc.name, cfg.Region, err, tc.want)
		}
	}
	if _, err := awsconf.Load(awsconf.Options{Getenv: env{}.get}); err == nil || !strings.Contains(err.Error(), "no AWS region") {
		t.Errorf("no region: error %v", err)
	}
}

func TestMaxAttempts(t *testing.T) {
	cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", MaxAttempts: 3, Getenv: env{}.get})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Retryer == nil || cfg.Retryer().MaxAttempts() != 3 {
		t.Errorf("retryer does not bound attempts to 3")
	}
	if cfg, _ := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: env{}.get}); cfg.Retryer != nil {
		t.Errorf("MaxAttempts 0 set a retryer; want the SDK's default")
	}
}

// TestEndpoints checks which endpoint each service client is given, from its
// options: nothing is sent.
func TestEndpoints(t *testing.T) {
	keys := env{awsconf.EnvAccessKeyID: "AKID", awsconf.EnvSecretAccessKey: "s"}
	with := func(kv ...string) env {
		e := env{}
		for k, v := range keys {
			e[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			e[kv[i]] = kv[i+1]
		}
		return e
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, tc := range []struct {
		name       string
		env        env
		ec2, eks   string
		fips, dual bool
	}{
		{"none", with(), "<nil>", "<nil>", false, false},
		{"per service", with("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:1"), "http://127.0.0.1:1", "<nil>", false, false},
		{"global", with("AWS_ENDPOINT_URL", "http://127.0.0.1:2"), "http://127.0.0.1:2", "http://127.0.0.1:2", false, false},
		{"per service wins", with("AWS_ENDPOINT_URL", "http://127.0.0.1:2", "AWS_ENDPOINT_URL_EKS", "http://127.0.0.1:3"), "http://127.0.0.1:2", "http://127.0.0.1:3", false, false},
		{"ignored", with("AWS_ENDPOINT_URL", "http://127.0.0.1:2", "AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:1", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "TRUE"), "<nil>", "<nil>", false, false},
		{"fips and dual stack", with("AWS_USE_FIPS_ENDPOINT", "true", "AWS_USE_DUALSTACK_ENDPOINT", "true"), "<nil>", "<nil>", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearRealEnv(t)
			cfg, err := awsconf.Load(awsconf.Options{Region: "us-east-1", Getenv: tc.env.get})
			if err != nil {
				t.Fatal(err)
			}
			e2 := ec2.NewFromConfig(cfg).Options()
			ek := eks.NewFromConfig(cfg).Options()
			if got := str(e2.BaseEndpoint); got != tc.ec2 {
				t.Errorf("EC2 endpoint %s, want %s", got, tc.ec2)
			}
			if got := str(ek.BaseEndpoint); got != tc.eks {
				t.Errorf("EKS endpoint %s, want %s", got, tc.eks)
			}
			if got := e2.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled; got != tc.fips {
				t.Errorf("EC2 FIPS %t, want %t", got, tc.fips)
			}
			if got := ek.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled; got != tc.dual {
				t.Errorf("EKS dual stack %t, want %t", got, tc.dual)
			}
			if tc.fips {
				ep, err := e2.EndpointResolverV2.ResolveEndpoint(context.Background(), ec2.EndpointParameters{
					Region: aws.String(cfg.Region), UseFIPS: aws.Bool(true), UseDualStack: aws.Bool(false),
				})
				if err != nil || ep.URI.Host != "ec2-fips.us-east-1.amazonaws.com" {
					t.Errorf("FIPS endpoint %v, %v", ep.URI.String(), err)
				}
			}
		})
	}
}

func TestBadValues(t *testing.T) {
	_, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: env{
		awsconf.EnvUseFIPS: "yes", awsconf.EnvUseDualStack: "1", awsconf.EnvIgnoreEndpointURLs: "on",
	}.get})
	if err == nil {
		t.Fatal("no error for bad true/false values")
	}
	for _, want := range []string{`AWS_USE_FIPS_ENDPOINT="yes": want true or false`, `AWS_USE_DUALSTACK_ENDPOINT="1"`, `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS="on"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %s", err, want)
		}
	}
}

// TestCABundle calls an HTTPS server on 127.0.0.1 whose certificate only the bundle
// vouches for: with AWS_CA_BUNDLE the request arrives; without it, the TLS
// handshake fails and nothing arrives.
func TestCABundle(t *testing.T) {
	clearRealEnv(t)
	rec := newRecorder(t, true)
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rec.srv.Certificate().Raw})
	if err := os.WriteFile(bundle, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	base := env{awsconf.EnvAccessKeyID: "AKID", awsconf.EnvSecretAccessKey: "s", "AWS_ENDPOINT_URL_EC2": rec.srv.URL}

	cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: base.get})
	if err != nil {
		t.Fatal(err)
	}
	if err := callEC2(t, cfg); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the bundle: error %v, want a certificate error", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("without the bundle %d requests arrived", n)
	}

	base[awsconf.EnvCABundle] = bundle
	cfg, err = awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: base.get})
	if err != nil {
		t.Fatal(err)
	}
	_ = callEC2(t, cfg) // the recorder answers 500
	if n := len(rec.requests()); n != 1 {
		t.Errorf("with the bundle %d requests arrived, want 1", n)
	}

	for name, content := range map[string]string{"not PEM": "hello", "missing": ""} {
		path := filepath.Join(t.TempDir(), "bundle")
		if content != "" {
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		base[awsconf.EnvCABundle] = path
		if _, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: base.get}); err == nil || !strings.HasPrefix(err.Error(), "AWS_CA_BUNDLE") {
			t.Errorf("%s bundle: error %v, want one naming AWS_CA_BUNDLE", name, err)
		}
	}
}
