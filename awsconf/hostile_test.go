package awsconf_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eksboot/eksboot/awsconf"
	"github.com/eksboot/eksboot/imds/imdstest"
)

const credPath = "latest/meta-data/iam/security-credentials/"

// credGETs counts the fake's GETs of the credential paths (with or without a token).
func credGETs(s *imdstest.Server) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/"+credPath) {
			n++
		}
	}
	return n
}

// TestCredentialsAreIMDSv2Only: the instance-profile read follows the rule of the
// rest of eksboot: when IMDS refuses a token, it fails, unless IMDSv1Fallback
// (--imds-v1-fallback) allows reading without one and AWS_EC2_METADATA_V1_DISABLED
// does not forbid it. The SDK's own default falls back.
func TestCredentialsAreIMDSv2Only(t *testing.T) {
	tests := []struct {
		name     string
		fallback bool
		env      env
		wantErr  string // "" the credentials are read without a token
	}{
		{"default", false, env{}, "refused"},
		{"fallback asked for", true, env{}, ""},
		{"fallback asked for, V1 disabled", true, env{"AWS_EC2_METADATA_V1_DISABLED": "TRUE"}, "refused"},
		{"fallback asked for, V1 not disabled", true, env{"AWS_EC2_METADATA_V1_DISABLED": "false"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearRealEnv(t)
			fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
			fake.SetIMDSv1(true)
			fake.SetFaults("latest/api/token", imdstest.Fault{Kind: imdstest.FaultStatus, Status: http.StatusForbidden})
			cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: tc.env.get, IMDSv1Fallback: tc.fallback})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			creds, err := cfg.Credentials.Retrieve(ctx)
			if tc.wantErr == "" {
				if err != nil || creds.AccessKeyID != "ASIAFROMIMDS" {
					t.Fatalf("Retrieve = %s, %v; want the instance profile's credentials over IMDSv1", creds.AccessKeyID, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Retrieve = %s, want an error", creds.AccessKeyID)
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "IMDSv1") {
				t.Errorf("error %q does not say the token was %s and IMDSv1 is off", err, tc.wantErr)
			}
			if n := credGETs(fake); n != 0 {
				t.Errorf("%d GETs of %s without a token, want none", n, credPath)
			}
		})
	}
}

func TestV1DisabledMustBeABool(t *testing.T) {
	clearRealEnv(t)
	_, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: env{"AWS_EC2_METADATA_V1_DISABLED": "yes"}.get})
	if err == nil || !strings.Contains(err.Error(), `AWS_EC2_METADATA_V1_DISABLED="yes": want true or false`) {
		t.Errorf("Load error %v, want one naming AWS_EC2_METADATA_V1_DISABLED", err)
	}
}

// TestCredentialsWaitForTheRole: early in boot IMDS answers 404 for
// iam/security-credentials/ until the instance profile is attached; the read
// asks again (bounded), as nodeadm does, instead of failing the first call.
func TestCredentialsWaitForTheRole(t *testing.T) {
	t.Run("attached after three 404s", func(t *testing.T) {
		clearRealEnv(t)
		fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
		fake.SetFaults(credPath, imdstest.Fault{Kind: imdstest.FaultStatus, Status: http.StatusNotFound, Times: 3})
		cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: env{}.get})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		creds, err := cfg.Credentials.Retrieve(ctx)
		if err != nil || creds.AccessKeyID != "ASIAFROMIMDS" {
			t.Fatalf("Retrieve = %s, %v; want the credentials once the role is attached", creds.AccessKeyID, err)
		}
		if n := credGETs(fake); n != 5 { // 3 × 404, the list, the role
			t.Errorf("%d GETs of %s, want 5", n, credPath)
		}
	})
	t.Run("never attached", func(t *testing.T) {
		clearRealEnv(t)
		fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
		fake.SetFaults(credPath, imdstest.Fault{Kind: imdstest.FaultStatus, Status: http.StatusNotFound})
		cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: env{}.get, CredentialsWait: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = cfg.Credentials.Retrieve(context.Background())
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("Retrieve took %v, want about the 500ms wait", took)
		}
		if err == nil {
			t.Fatal("Retrieve: no error, want one")
		}
		for _, w := range []string{credPath, "404", "no instance profile role is attached", "500ms"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
		if n := credGETs(fake); n < 2 {
			t.Errorf("%d GETs of %s, want it asked again", n, credPath)
		}
	})
}

// TestNoRedirects: neither the instance-profile read nor an EC2 call follows a
// redirect; the other host sees nothing (no session token, no credentials).
func TestNoRedirects(t *testing.T) {
	t.Run("instance profile", func(t *testing.T) {
		clearRealEnv(t)
		fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
		other := fakeIMDSWithRole(t, "ASIAFROMOTHER")
		fake.SetFaults(credPath+"eks-node-role", imdstest.Fault{Kind: imdstest.FaultRedirect, Location: other.URL() + "/" + credPath + "eks-node-role"})
		cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: env{}.get})
		if err != nil {
			t.Fatal(err)
		}
		creds, err := cfg.Credentials.Retrieve(context.Background())
		if err == nil {
			t.Fatalf("Retrieve = %s, want an error", creds.AccessKeyID)
		}
		if !strings.Contains(err.Error(), "redirect") {
			t.Errorf("error %q does not say it was a redirect", err)
		}
		if n := len(other.Requests()); n != 0 {
			t.Errorf("the other host got %d requests, want none", n)
		}
	})
	for _, code := range []int{301, 302, 307, 308} {
		t.Run("EC2 "+http.StatusText(code), func(t *testing.T) {
			clearRealEnv(t)
			var otherHits atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				otherHits.Add(1)
				http.Error(w, "other", http.StatusInternalServerError)
			}))
			t.Cleanup(other.Close)
			ec2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/", code)
			}))
			t.Cleanup(ec2.Close)
			e := env{awsconf.EnvAccessKeyID: "AKID", awsconf.EnvSecretAccessKey: "s", awsconf.EnvSessionToken: "session", awsconf.EnvEndpointURL + "_EC2": ec2.URL}
			cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: e.get})
			if err != nil {
				t.Fatal(err)
			}
			err = callEC2(t, cfg)
			if err == nil || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), "not followed") {
				t.Errorf("DescribeInstances error %v, want one saying the redirect was not followed", err)
			}
			if n := otherHits.Load(); n != 0 {
				t.Errorf("the other host got %d requests, want none", n)
			}
		})
	}
}

// TestBadValuesAreQuotedShort: a bad variable's value is quoted short and escaped
// (a CA pasted into the wrong variable is not echoed).
func TestBadValuesAreQuotedShort(t *testing.T) {
	ca := "-----BEGIN CERTIFICATE-----\nMIIB" + strings.Repeat("A", 4000) + "\n-----END CERTIFICATE-----\n"
	_, err := awsconf.Load(awsconf.Options{Region: "us-west-2", Getenv: env{
		awsconf.EnvUseFIPS: ca, awsconf.EnvUseDualStack: strings.Repeat("y", 10<<10), "AWS_EC2_METADATA_V1_DISABLED": "\x1b[31m",
	}.get})
	if err == nil {
		t.Fatal("no error")
	}
	if s := err.Error(); len(s) > 400 || strings.Contains(s, "BEGIN") || strings.Contains(s, "\x1b") {
		t.Errorf("error of %d bytes quotes too much: %.400q", len(s), s)
	}
}

// TestCredentialsAnswerIsReadThroughALimit: a credentials answer far larger than
// any real one fails the read at its limit and costs no more memory than that.
func TestCredentialsAnswerIsReadThroughALimit(t *testing.T) {
	clearRealEnv(t)
	fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
	fake.SetFaults(credPath+"eks-node-role", imdstest.Fault{Kind: imdstest.FaultLarge, Size: 50 << 20})
	cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: env{}.get})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = cfg.Credentials.Retrieve(context.Background())
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than the 16384-byte limit") {
		t.Errorf("Retrieve error %v, want one naming the 16384-byte limit", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("Retrieve allocated %d MB for a 50 MB answer, want under 8 MB", alloc>>20)
	}
}

// TestCredentialsWithAKeyTwice: credentials that give a key twice (two tokens,
// or the access key once as AccessKeyID) are refused naming the key, the answer
// not quoted: the SDK's decoder would keep the last silently.
func TestCredentialsWithAKeyTwice(t *testing.T) {
	clearRealEnv(t)
	for name, tc := range map[string]struct{ extra, want string }{
		"a token twice":                {`,"Token":"another-session-token"}`, "the credentials: Token: a key given twice"},
		"the access key in two cases":  {`,"AccessKeyID":"ASIAOTHER"}`, "the credentials: AccessKeyID: a key given twice (also as \"AccessKeyId\""},
		"not JSON after the first key": {`,"Other":}`, "the credentials are not JSON"},
	} {
		t.Run(name, func(t *testing.T) {
			fake := fakeIMDSWithRole(t, "ASIAFROMIMDS")
			creds := `{"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"ASIAFROMIMDS","SecretAccessKey":"secret","Token":"session-token",` +
				`"Expiration":"` + time.Now().Add(6*time.Hour).UTC().Format(time.RFC3339) + `"` + tc.extra
			fake.SetOverride(credPath+"eks-node-role", &creds)
			cfg, err := awsconf.Load(awsconf.Options{Region: "us-west-2", IMDSEndpoint: fake.URL(), Getenv: env{}.get})
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.Credentials.Retrieve(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "session-token") {
				t.Errorf("Retrieve = %s, %v; want an error saying %q", got.AccessKeyID, err, tc.want)
			}
		})
	}
}
