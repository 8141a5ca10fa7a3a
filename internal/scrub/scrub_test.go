package scrub

import (
	"strings"
	"sync"
	"testing"
)

// TestTokens: token shapes are redacted wherever they stand; the words, names and
// IDs of AWS's and eksboot's messages are not.
func TestTokens(t *testing.T) {
	const (
		sessionToken = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLXdlc3QtMiJHMEUCIQD6v1Ee9K+mxXn0bZ3QUw=="
		secretKey    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
		signature    = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
	)
	for _, tc := range []struct{ in, want string }{
		{
			"Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-west-2/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + signature,
			"Authorization: AWS4-HMAC-SHA256 (redacted), SignedHeaders=host;x-amz-date, Signature=(redacted)",
		},
		{"invalid token: X-Amz-Security-Token=" + sessionToken + "&X-Amz-Date=20260101T000000Z", "invalid token: X-Amz-Security-Token=(redacted)&X-Amz-Date=20260101T000000Z"},
		{"x-amz-security-token: short-but-named", "x-amz-security-token: (redacted)"},
		{"X-aws-ec2-metadata-token: AQAEAFakeTokenValue", "X-aws-ec2-metadata-token: (redacted)"},
		{`{"AccessKeyId":"ASIAXAMPLEXAMPLEXAMP","SecretAccessKey":"plain","SessionToken":"plain-too"}`, `{"AccessKeyId":"(redacted)","SecretAccessKey":"(redacted)","SessionToken":"(redacted)"}`},
		{"the token " + sessionToken + " is invalid", "the token (redacted) is invalid"},
		{"key " + secretKey, "key (redacted)"},
		{"sig " + signature + ".", "sig (redacted)."},
		{"Bearer k8s-aws-v1.aHR0cHM6Ly9zdHMuYW1hem9uYXdzLmNvbS8_QWN0aW9uPUdldENhbGxlcklkZW50aXR5", "Bearer (redacted)"},
		{"token k8s-aws-v1.aHR0cHM6Ly9zdHM", "token (redacted)"},
		{"AKIAIOSFODNN7EXAMPLE is not authorized", "(redacted) is not authorized"},
		// Not secrets.
		{"HTTP 403, UnauthorizedOperation: You are not authorized to perform this operation. (request 4d5a8b0e-2f3c-4b6a-9a1e-0f2c3d4e5f60)", ""},
		{"SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided.", ""},
		{"IMDS latest/meta-data/iam/security-credentials/eks-node-role: the credentials: Token: a key given twice", ""},
		{"arn:aws:iam::111122223333:role/eks-node-role, i-0123456789abcdef0, ip-192-168-45-67.us-west-2.compute.internal", ""},
		{"/etc/kubernetes/kubelet/kubelet-config.json /var/lib/eksboot/clusters/us-west-2/my-cluster.json", ""},
		{"AThirtyFiveCharacterLongCamelCaseWordWithoutDigits and kubernetes_io_cluster_something_long_enough_here", ""},
		{"describe instance type zz9.large: InvalidInstanceType: The following supplied instance types do not exist: [zz9.large]", ""},
	} {
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if got := Tokens(tc.in); got != want {
			t.Errorf("Tokens(%q)\n = %q\nwant %q", tc.in, got, want)
		}
	}
}

// TestSecretsAreRemovedWherever: a known secret is removed whatever its shape, the
// longest of two that overlap whole, and Text removes the process's.
func TestSecretsAreRemovedWherever(t *testing.T) {
	var s Secrets
	s.Add("plain words secret", "short", "", "plain words secret and more")
	if got := s.Remove("a: plain words secret and more; b: plain words secret; c: short"); got != "a: (redacted); b: (redacted); c: short" {
		t.Errorf("Remove = %q", got)
	}
	Process.Add("process-own-session-value")
	t.Cleanup(func() { Process = Secrets{} })
	if got := Text(`echo: "process-own-session-value"`); got != `echo: "(redacted)"` {
		t.Errorf("Text = %q", got)
	}
}

// TestSecretsConcurrently: Add and Remove from many goroutines (go test -race).
func TestSecretsConcurrently(t *testing.T) {
	var s Secrets
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			v := "secret-value-" + strings.Repeat("x", i)
			s.Add(v)
			if got := s.Remove("[" + v + "]"); got != "[(redacted)]" {
				t.Errorf("Remove = %q", got)
			}
		})
	}
	wg.Wait()
}
