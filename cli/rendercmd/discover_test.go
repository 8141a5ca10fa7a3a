package rendercmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/eksapi/eksapitest"
)

// TestRenderDiscoverCallerProfile: with no keys in the environment, render
// --discover signs with what `aws configure export-credentials --format process`
// prints (here a stand-in aws on PATH that records its arguments; the real CLI
// resolves the caller's profile), and says so when there is no aws at all.
func TestRenderDiscoverCallerProfile(t *testing.T) {
	srv, err := eksapitest.NewServer()
	must(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	srv.AddCluster(eksapitest.Cluster{Name: "my-cluster", Endpoint: "https://ABCDEF.gr7.us-west-2.eks.amazonaws.com", CAData: goldenCA(t), ServiceIPv4CIDR: "172.20.0.0/16"})
	dir := t.TempDir()
	p := filepath.Join(dir, "u.sh")
	must(t, os.WriteFile(p, []byte("#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster\n"), 0o644))
	bin := filepath.Join(dir, "bin")
	must(t, os.Mkdir(bin, 0o755))
	args := filepath.Join(dir, "args")
	must(t, os.WriteFile(filepath.Join(bin, "aws"), []byte("#!/bin/sh\necho \"$@\" > "+args+"\n"+
		`echo '{"Version": 1, "AccessKeyId": "AKIDFROMTHECLI", "SecretAccessKey": "s3cret", "SessionToken": "tok"}'`+"\n"), 0o755))
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_EKS": srv.URL(), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_EC2_METADATA_DISABLED": "true", "PATH": bin,
	} {
		t.Setenv(k, v)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"eksboot render", "--user-data", p, "--instance-type", "m5.large", "--discover"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	got, err := os.ReadFile(args)
	must(t, err)
	if strings.TrimSpace(string(got)) != "configure export-credentials --format process" || srv.LastAccessKey() != "AKIDFROMTHECLI" {
		t.Errorf("aws ran with %q, the call was signed by %q", got, srv.LastAccessKey())
	}
	if !strings.Contains(stdout.String(), "server: https://ABCDEF.gr7.us-west-2.eks.amazonaws.com\n") || strings.Contains(stdout.String()+stderr.String(), "s3cret") {
		t.Errorf("render --discover:\n%s\n%s", stdout.String(), stderr.String())
	}

	t.Setenv("PATH", t.TempDir()) // no aws
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"eksboot render", "--user-data", p, "--instance-type", "m5.large", "--discover"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and the AWS CLI") {
		t.Errorf("without aws: exit %d\n%s", code, stderr.String())
	}
}
