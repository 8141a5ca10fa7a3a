package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/goldencase"
)

// credentialSets are the credentials the echo tests give the process: shaped as
// AWS's (which scrub's token shapes find even unknown) and plain words (which
// only the process's own list of its credentials finds).
var credentialSets = []struct{ name, id, secret, token string }{
	{
		"AWS-shaped", "ASIAQEXAMPLEKEYID123", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLXdlc3QtMiJHMEUCIQD6v1Ee9K+mxXn0bZ3QUw9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0==",
	},
	{"plain words", "plain-access-key-id", "plain-secret-words-only", "plain-session-token-words"},
}

// echoServer is an API endpoint (or a proxy in front of one) on 127.0.0.1 that
// answers every request with status and a body that reflects it: answer gets the
// request's headers and form, and returns the body.
func echoServer(t *testing.T, status int, header http.Header, answer func(r *http.Request) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer(r))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// reflected is what a reflecting endpoint echoes of request r: its signature and
// session token, and (a test's worst case: no endpoint knows it) the secret key.
func reflected(r *http.Request, secret string) string {
	return fmt.Sprintf("Authorization: %s X-Amz-Security-Token=%s secret %s", r.Header.Get("Authorization"), r.Header.Get("X-Amz-Security-Token"), secret)
}

// checkNoSecret fails when any of secrets, or 12 bytes of one in a row, shows in
// outs (what the process printed, logged and recorded), each named by where.
func checkNoSecret(t *testing.T, outs map[string]string, secrets ...string) {
	t.Helper()
	for where, out := range outs {
		for _, s := range secrets {
			for i := 0; i+12 <= len(s); i++ {
				if strings.Contains(out, s[i:i+12]) {
					t.Errorf("%s shows %q of a credential:\n%.2000s", where, s[i:i+12], out)
					break
				}
			}
		}
	}
}

// statusOf is the root's status.json ("" when there is none).
func statusOf(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "var/lib/eksboot/status.json"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestEC2EchoShowsNoCredential: an EC2 endpoint that reflects the request (an
// AuthFailure quoting the session token, a 502 page that begins with it, a 403
// with the signature, the token and the secret key) never gets the process's
// credentials onto stdout or stderr: eksboot max-pods of a type the table lacks, and
// a boot whose DescribeInstances (a custom DHCP domain) is answered so, which goes
// on with IMDS local-hostname and records its status.
func TestEC2EchoShowsNoCredential(t *testing.T) {
	xml := func(code, msg string) string {
		return "<Response><Errors><Error><Code>" + code + "</Code><Message>" + msg + "</Message></Error></Errors><RequestID>4d5a8b0e-2f3c-4b6a-9a1e-0f2c3d4e5f60</RequestID></Response>"
	}
	for _, cs := range credentialSets {
		for _, tc := range []struct {
			name   string
			status int
			body   func(r *http.Request) string
		}{
			{"AuthFailure quoting the token", 400, func(r *http.Request) string {
				return xml("AuthFailure", "invalid token: "+r.Header.Get("X-Amz-Security-Token"))
			}},
			{"a 502 page beginning with the token", 502, func(r *http.Request) string {
				return r.Header.Get("X-Amz-Security-Token") + " <html><body>Bad Gateway</body></html>"
			}},
			{"a 403 with everything", 403, func(r *http.Request) string { return xml("UnauthorizedOperation", reflected(r, cs.secret)) }},
			{"a 403 page with everything", 403, func(r *http.Request) string { return reflected(r, cs.secret) }},
		} {
			t.Run(cs.name+"/"+tc.name, func(t *testing.T) {
				echo := echoServer(t, tc.status, nil, tc.body)
				env := map[string]string{
					"AWS_ENDPOINT_URL_EC2": echo.URL, "AWS_REGION": "us-west-2", "AWS_EC2_METADATA_DISABLED": "true",
					"AWS_ACCESS_KEY_ID": cs.id, "AWS_SECRET_ACCESS_KEY": cs.secret, "AWS_SESSION_TOKEN": cs.token,
				}
				code, stdout, stderr := run(t, env, "", "max-pods", "--instance-type", "zz9.large")
				if code != 1 || !strings.Contains(stderr, "describe instance type zz9.large") {
					t.Errorf("max-pods: exit %d\n%s", code, stderr)
				}
				checkNoSecret(t, map[string]string{"max-pods stdout": stdout, "max-pods stderr": stderr}, cs.id, cs.secret, cs.token)

				// A boot whose node name EC2 must give, with the same answer.
				c, err := goldencase.Load(filepath.Join(goldenDir, "02-m5large-usw2-vpc10"))
				if err != nil {
					t.Fatal(err)
				}
				c.IMDS.LocalHostname = "ip-10-0-45-67.corp.example.com"
				fakes, err := c.Start()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(fakes.Close)
				root := t.TempDir()
				if err := os.MkdirAll(filepath.Join(root, "var/lib/eksboot"), 0o755); err != nil {
					t.Fatal(err)
				}
				args := append(append([]string{"bootstrap"}, c.Args...), "--root", root, "--no-restart", "--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL())
				code, stdout, stderr = run(t, env, "", args...)
				if code != 0 || !strings.Contains(stderr, "ec2:DescribeInstances gave no PrivateDnsName") {
					t.Errorf("bootstrap: exit %d, want 0 and the fallback's warning\n%s", code, stderr)
				}
				status := statusOf(t, root)
				if status == "" {
					t.Error("no status.json")
				}
				checkNoSecret(t, map[string]string{"bootstrap stdout": stdout, "bootstrap stderr": stderr, "status.json": status}, cs.id, cs.secret, cs.token)
			})
		}
	}
}

// TestEKSEchoShowsNoCredential: a DescribeCluster that answers 403 reflecting the
// request (and the secret key) fails the boot of a node given only its cluster's
// name with one line, on stderr and in status.json, that shows no credential.
func TestEKSEchoShowsNoCredential(t *testing.T) {
	for _, cs := range credentialSets {
		for _, tc := range []struct {
			name   string
			header http.Header
			body   func(r *http.Request) string
		}{
			{"AccessDeniedException", http.Header{"X-Amzn-Errortype": {"AccessDeniedException"}}, func(r *http.Request) string {
				return `{"message":` + fmt.Sprintf("%q", reflected(r, cs.secret)) + `}`
			}},
			{"a page", nil, func(r *http.Request) string { return cs.token + " " + reflected(r, cs.secret) }},
		} {
			t.Run(cs.name+"/"+tc.name, func(t *testing.T) {
				echo := echoServer(t, http.StatusForbidden, tc.header, tc.body)
				c, fakes := startFakes(t, "01-m5large-usw2-vpc192")
				root := t.TempDir()
				if err := os.MkdirAll(filepath.Join(root, "var/lib/eksboot"), 0o755); err != nil {
					t.Fatal(err)
				}
				env := map[string]string{
					"AWS_ENDPOINT_URL_EKS": echo.URL, "AWS_EC2_METADATA_DISABLED": "true",
					"AWS_ACCESS_KEY_ID": cs.id, "AWS_SECRET_ACCESS_KEY": cs.secret, "AWS_SESSION_TOKEN": cs.token,
				}
				// A page without an error code is retried to the deadline: a short one.
				code, stdout, stderr := run(t, env, "", "bootstrap", "demo", "--root", root, "--no-restart", "--kubelet-version", c.KubeletVersion,
					"--imds-endpoint", fakes.IMDS.URL(), "--discovery-timeout", "2s")
				status := statusOf(t, root)
				if code != 1 || !strings.Contains(lastLine(stderr), "eks:DescribeCluster demo") || !strings.Contains(status, "eks:DescribeCluster demo") {
					t.Errorf("bootstrap: exit %d, want 1 and the refusal on stderr and in status.json\n%s\n%s", code, stderr, status)
				}
				t.Logf("%s", lastLine(stderr))
				checkNoSecret(t, map[string]string{"stdout": stdout, "stderr": stderr, "status.json": status}, cs.id, cs.secret, cs.token)
			})
		}
	}
}

// TestIMDSEchoShowsNoToken: an IMDS (a proxy in front of the fake) that puts the
// request's session token into its answers (the host name, a 404 page, the
// instance profile's credentials' message) never gets it onto stdout, stderr or
// status.json, whether the boot fails or falls back and goes on.
func TestIMDSEchoShowsNoToken(t *testing.T) {
	const credPath = "/latest/meta-data/iam/security-credentials/"
	for _, tc := range []struct {
		name   string
		path   string
		status int
		body   func(tok string) string
		exit   int
		want   string // in stderr
	}{
		{"a host name of the token", "/latest/meta-data/local-hostname", 200, func(tok string) string { return "ip-" + tok }, 1, "is not a host name"},
		{"an instance type of the token", "/latest/meta-data/instance-type", 200, func(tok string) string { return tok }, 1, "is not an instance type"},
		{"a 500 page with the token", "/latest/meta-data/mac", 500, func(tok string) string { return "<html>token " + tok + "</html>" }, 1, "status 500"},
		{"credentials whose message is the token", credPath + "eks-node-role", 200, func(tok string) string {
			return `{"Code":"AssumeRoleUnauthorizedAccess","Message":"token ` + tok + `"}`
		}, 0, `no credentials: AssumeRoleUnauthorizedAccess: "token (redacted)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := goldencase.Load(filepath.Join(goldenDir, "02-m5large-usw2-vpc10"))
			if err != nil {
				t.Fatal(err)
			}
			c.IMDS.LocalHostname = "ip-10-0-45-67.corp.example.com" // the node name from EC2, so the credentials are read
			fakes, err := c.Start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(fakes.Close)
			role := "eks-node-role"
			fakes.IMDS.SetOverride(credPath, &role)
			if tc.path == "/latest/meta-data/instance-type" { // read from the identity document otherwise
				doc := strings.Replace(imdstestDocument(t, fakes.IMDS), `"instanceType"`, `"unused"`, 1)
				fakes.IMDS.SetOverride("latest/dynamic/instance-identity/document", &doc)
			}
			target, err := url.Parse(fakes.IMDS.URL())
			if err != nil {
				t.Fatal(err)
			}
			proxy := httputil.NewSingleHostReverseProxy(target)
			echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == tc.path {
					w.WriteHeader(tc.status)
					_, _ = io.WriteString(w, tc.body(r.Header.Get("X-Aws-Ec2-Metadata-Token")))
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(echo.Close)
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "var/lib/eksboot"), 0o755); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"AWS_ENDPOINT_URL_EC2": fakes.EC2.URL(), "AWS_REGION": "us-west-2"} // no keys: the instance profile
			args := append(append([]string{"bootstrap"}, c.Args...), "--root", root, "--no-restart", "--kubelet-version", c.KubeletVersion, "--imds-endpoint", echo.URL, "--imds-timeout", "3s")
			code, stdout, stderr := run(t, env, "", args...)
			status := statusOf(t, root)
			if code != tc.exit || status == "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("bootstrap: exit %d, want %d, %q and a status.json\n%s", code, tc.exit, tc.want, stderr)
			}
			checkNoSecret(t, map[string]string{"stdout": stdout, "stderr": stderr, "status.json": status}, imdstest.Token)
			t.Logf("exit %d: %s", code, lastLine(stderr))
		})
	}
}

// imdstestDocument is the identity document the fake serves.
func imdstestDocument(t *testing.T, s *imdstest.Server) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, s.URL()+"/latest/api/token", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "60")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	req, err = http.NewRequest(http.MethodGet, s.URL()+"/latest/dynamic/instance-identity/document", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Aws-Ec2-Metadata-Token", string(tok))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, _ := io.ReadAll(resp.Body)
	return string(doc)
}

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
