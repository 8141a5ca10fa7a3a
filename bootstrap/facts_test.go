package bootstrap

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/siminstance"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/rootfs"
)

// nameEC2 is an EC2 that records each node-name call.
type nameEC2 struct {
	names map[string]string // instance ID -> private DNS name

	mu    sync.Mutex
	calls []string // instance IDs asked for
}

func (e *nameEC2) PrivateDNSName(_ context.Context, id string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, id)
	if name, ok := e.names[id]; ok {
		return name, nil
	}
	return "", ec2api.ErrEmptyDNSName
}

func (e *nameEC2) InstanceTypeInfo(context.Context, string) (maxpods.TypeInfo, error) {
	return maxpods.TypeInfo{}, ec2api.ErrUnknownInstanceType
}

// customDomain is a local-hostname of a VPC whose DHCP options set a custom
// domain-name: it is not EC2's PrivateDnsName (amazon-eks-ami #1264).
const customDomain = "ip-192-168-45-67.corp.example.com"

// gatherWith gathers case 01's facts from a fake IMDS with overrides applied, with a
// nameEC2; clients counts the EC2 clients made.
func gatherWith(t *testing.T, overrides map[string]string) (f *Facts, api *nameEC2, clients int) {
	t.Helper()
	c := base(t)
	srv, err := imdstest.NewServer(c.IMDS)
	must(t, err)
	t.Cleanup(func() { srv.Close() })
	for p, body := range overrides {
		srv.SetOverride(p, &body)
	}
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	root, err := rootfs.New(dir)
	must(t, err)
	args := append(append([]string{}, c.Args...), "--root", dir, "--no-restart", "--kubelet-version", c.KubeletVersion, "--imds-endpoint", srv.URL())
	o, err := parseArgs(args, func(k string) string { return c.Env[k] })
	must(t, err)
	cfg, err := Validate(o)
	must(t, err)

	api = &nameEC2{names: map[string]string{
		c.IMDS.InstanceID:     "ip-10-0-0-1.us-west-2.compute.internal",
		"i-0fffffffffffffff0": "ip-10-0-0-2.us-west-2.compute.internal",
	}}
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(k string) string { return c.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	env.EC2 = func(context.Context, string, string, bool) (ec2api.API, error) { clients++; return api, nil }
	f, err = gatherFacts(context.Background(), cfg, env)
	must(t, err)
	return f, api, clients
}

// TestEC2OwnHostnameMakesNoEC2Call: when IMDS local-hostname is EC2's own private
// DNS name (the default VPC DHCP options), it is the node name: no EC2 client, so no
// credential read and no ec2:DescribeInstances (nodeadm's join failures under
// DescribeInstances throttling were that call).
func TestEC2OwnHostnameMakesNoEC2Call(t *testing.T) {
	f, api, clients := gatherWith(t, nil)
	if clients != 0 || len(api.calls) != 0 {
		t.Errorf("%d EC2 clients, node-name calls %v; want none", clients, api.calls)
	}
	if f.PrivateDNSName != base(t).IMDS.LocalHostname {
		t.Errorf("node name %q, want local-hostname %q", f.PrivateDNSName, base(t).IMDS.LocalHostname)
	}
}

// TestNodeNameForDocumentInstanceID: with a custom DHCP domain the name is EC2's
// PrivateDnsName of the identity document's instance (AWS signs the document, and
// nodeadm takes the ID from it too): a meta-data/instance-id that names another
// instance is not read.
func TestNodeNameForDocumentInstanceID(t *testing.T) {
	f, api, _ := gatherWith(t, map[string]string{imds.PathInstanceID: "i-0fffffffffffffff0", imds.PathLocalHostname: customDomain})
	want := base(t).IMDS.InstanceID
	if f.Instance.InstanceID != want || !slices.Equal(api.calls, []string{want}) {
		t.Fatalf("instance %s, node-name calls %v; want one for the document's %s", f.Instance.InstanceID, api.calls, want)
	}
	if f.PrivateDNSName != "ip-10-0-0-1.us-west-2.compute.internal" {
		t.Errorf("node name %q, want the one of the document's instance", f.PrivateDNSName)
	}
}

// TestNodeNameWithoutDocumentInstanceID: an identity document without instanceId:
// the instance ID is read from meta-data/instance-id, and the node name asked for it.
func TestNodeNameWithoutDocumentInstanceID(t *testing.T) {
	f, api, _ := gatherWith(t, map[string]string{
		imds.PathIdentityDocument: siminstance.IdentityDocument(base(t).IMDS, "instanceId"),
		imds.PathInstanceID:       "i-0fffffffffffffff0",
		imds.PathLocalHostname:    customDomain,
	})
	if f.Instance.InstanceID != "i-0fffffffffffffff0" || !slices.Equal(api.calls, []string{"i-0fffffffffffffff0"}) {
		t.Fatalf("instance %s, node-name calls %v; want one for meta-data's i-0fffffffffffffff0", f.Instance.InstanceID, api.calls)
	}
	if f.PrivateDNSName != "ip-10-0-0-2.us-west-2.compute.internal" {
		t.Errorf("node name %q, want the one of meta-data/instance-id's instance", f.PrivateDNSName)
	}
}

// TestNodeNameFromEC2IsChecked: the PrivateDnsName EC2 answers becomes the node's
// name (the kubelet's --hostname-override) only when it is a private DNS name EC2
// gives an instance in the region, a resource name this instance's; any other
// answer (lines of flags, another domain or region, another instance's, capitals)
// falls back to IMDS local-hostname with a warning naming it, and the boot goes
// on (it used to fail late: "environment variable KUBELET_ARGS: value has control
// chara…", or name the node as the answer said).
func TestNodeNameFromEC2IsChecked(t *testing.T) {
	id := base(t).IMDS.InstanceID
	for _, tc := range []struct {
		answer string
		ok     bool
	}{
		{"ip-10-0-0-1.us-west-2.compute.internal", true},
		{id + ".us-west-2.compute.internal", true},
		{"evil\n--register-node=false $(reboot)", false},
		{"ip-10-0-0-1.us-west-2.compute.internal\n--register-node=false", false},
		{"evil.example.com", false},
		{"kube-apiserver", false},
		{"ip-10-0-0-1.us-east-2.compute.internal", false},
		{"ip-10-0-0-1.ec2.internal", false}, // us-east-1's, not us-west-2's
		{"i-0aaaaaaaaaaaaaaaa.us-west-2.compute.internal", false},
		{"IP-10-0-0-1.US-WEST-2.COMPUTE.INTERNAL", false},
		{"ip-10-0-0-1.us-west-2.compute.internal.", false},
		{strings.Repeat("a", 64) + ".us-west-2.compute.internal", false},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			c := base(t)
			c.IMDS.LocalHostname = customDomain
			fakes := c.StartFor(t) // the fake EC2 on 127.0.0.1, the real client
			unsetAWSExtras(t)
			fakes.EC2.Update(func(a *ec2test.Answers) { a.Instances = []ec2test.Instance{{ID: id, PrivateDNSName: tc.answer}} })
			dir := t.TempDir()
			must(t, c.WriteFiles(dir))
			root, err := rootfs.New(dir)
			must(t, err)
			o, err := parseArgs(append(append([]string{}, c.Args...), "--root", dir, "--no-restart", "--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL()), func(k string) string { return c.Env[k] })
			must(t, err)
			cfg, err := Validate(o)
			must(t, err)
			env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
			env.CPUs, env.Getenv = c.CPUs, func(k string) string { return c.Env[k] }
			env.DNSNameAttempts, env.DNSNameInterval = 1, 0
			f, err := gatherFacts(context.Background(), cfg, env)
			must(t, err)
			want, warned := tc.answer, false
			if !tc.ok {
				want = customDomain
			}
			for _, w := range f.Warnings {
				warned = warned || strings.Contains(w, "not a private DNS name EC2 gives an instance in us-west-2")
			}
			if f.PrivateDNSName != want || warned == tc.ok {
				t.Errorf("node name %q (warnings %q); want %q, warned %t", f.PrivateDNSName, f.Warnings, want, !tc.ok)
			}
		})
	}
}

func TestIsEC2PrivateName(t *testing.T) {
	for _, tc := range []struct {
		host, region string
		want         bool
	}{
		{"ip-10-0-0-1.ec2.internal", "us-east-1", true},
		{"ip-10-0-0-1.us-west-2.compute.internal", "us-west-2", true},
		{"i-0123456789abcdef0.us-west-2.compute.internal", "us-west-2", true},
		{"ip-192-168-45-67.cn-north-1.compute.internal", "cn-north-1", true},
		{"ip-10-0-0-1.ec2.internal", "us-west-2", false},
		{"ip-10-0-0-1.us-east-1.compute.internal", "us-west-2", false},
		{"ip-10-0-0-1.corp.example.com", "us-west-2", false},
		{"ip-10-0-0-1.us-west-2.compute.internal ip-10-0-0-1.corp.example.com", "us-west-2", false},
		{"host.us-west-2.compute.internal", "us-west-2", false},
		{"a.ip-10-0-0-1.us-west-2.compute.internal", "us-west-2", false},
		{"", "us-west-2", false},
	} {
		if got := isEC2PrivateName(tc.host, tc.region); got != tc.want {
			t.Errorf("isEC2PrivateName(%q, %q) = %v, want %v", tc.host, tc.region, got, tc.want)
		}
	}
}

// TestDirectoryThatCannotBeMadeWritesNothing: when a directory eksboot needs cannot be
// created (here /etc/cni is a file), the run fails naming it before any file is
// written.
func TestDirectoryThatCannotBeMadeWritesNothing(t *testing.T) {
	c := base(t)
	c.StartFor(t)
	srv, err := imdstest.NewServer(c.IMDS)
	must(t, err)
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "etc/cni"), []byte("not a directory\n"), 0o644))
	before := tree(t, dir)

	err = runFaulty(c, srv, dir, 20*time.Second, nil)
	if err == nil || !strings.Contains(err.Error(), "/etc/cni") {
		t.Fatalf("error %v, want one naming /etc/cni", err)
	}
	if after := tree(t, dir); !maps.Equal(after, before) {
		t.Errorf("files changed although the run failed:\nbefore %v\nafter  %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	}
}

// TestDomainForRegion: the domain is derived for the partitions whose domain is
// amazonaws.com(.cn), never guessed for the isolated ones or a malformed region.
func TestDomainForRegion(t *testing.T) {
	for region, want := range map[string]string{
		"us-east-1": "amazonaws.com", "ap-southeast-7": "amazonaws.com", "us-gov-west-1": "amazonaws.com",
		"cn-northwest-1": "amazonaws.com.cn",
		"us-iso-east-1":  "", "us-isob-east-1": "", "eu-isoe-west-1": "", "eusc-de-east-1": "", "us-isoz-east-1": "",
		"": "", "US-EAST-1": "", "us-east": "",
	} {
		got, ok := domainForRegion(region)
		if got != want || ok != (want != "") {
			t.Errorf("domainForRegion(%q) = %q, %v; want %q", region, got, ok, want)
		}
	}
}
