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
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/rootfs"
)

// orderEC2 is an EC2 that records each node-name call and whether IMDS was still
// being read when it came.
type orderEC2 struct {
	imdsDone *atomic.Bool
	names    map[string]string // instance ID -> private DNS name

	mu     sync.Mutex
	calls  []string // instance IDs asked for
	during []bool   // the call came while IMDS was still being read
}

func (e *orderEC2) PrivateDNSName(_ context.Context, id string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, id)
	e.during = append(e.during, !e.imdsDone.Load())
	if name, ok := e.names[id]; ok {
		return name, nil
	}
	return "", ec2api.ErrEmptyDNSName
}

func (e *orderEC2) InstanceTypeInfo(context.Context, string) (maxpods.TypeInfo, error) {
	return maxpods.TypeInfo{}, ec2api.ErrUnknownInstanceType
}

// gatherWithSlowIMDS gathers case 01's facts from a fake IMDS whose local-hostname
// answers only after a delay, with overrides applied, and an orderEC2.
func gatherWithSlowIMDS(t *testing.T, overrides map[string]string) (*Facts, *orderEC2) {
	t.Helper()
	c := base(t)
	srv, err := imdstest.NewServer(c.IMDS)
	must(t, err)
	t.Cleanup(func() { srv.Close() })
	for p, body := range overrides {
		srv.SetOverride(p, &body)
	}
	// The node-name call must not need this answer to start.
	srv.SetFaults(imds.PathLocalHostname, imdstest.Fault{Kind: imdstest.FaultDelay, Delay: 300 * time.Millisecond})

	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	root, err := rootfs.New(dir)
	must(t, err)
	args := append(append([]string{}, c.Args...), "--root", dir, "--no-restart", "--kubelet-version", c.KubeletVersion, "--imds-endpoint", srv.URL())
	o, err := Parse(args, func(k string) string { return c.Env[k] })
	must(t, err)
	cfg, err := Validate(o)
	must(t, err)

	var done atomic.Bool
	api := &orderEC2{imdsDone: &done, names: map[string]string{
		c.IMDS.InstanceID:     "ip-10-0-0-1.ec2.internal",
		"i-0fffffffffffffff0": "ip-10-0-0-2.ec2.internal",
	}}
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(k string) string { return c.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	env.IMDS = func(ctx context.Context, o imds.Options) (*imds.Facts, error) {
		defer done.Store(true)
		return imds.Fetch(ctx, o)
	}
	env.EC2 = func(context.Context, string, string) (ec2api.API, error) { return api, nil }
	f, err := gatherFacts(context.Background(), cfg, env)
	must(t, err)
	return f, api
}

// TestNodeNameCallOverlapsIMDS: the EC2 node-name call goes out as soon as the
// identity document is read, while IMDS's other paths are still being read.
func TestNodeNameCallOverlapsIMDS(t *testing.T) {
	f, api := gatherWithSlowIMDS(t, nil)
	if !slices.Equal(api.calls, []string{f.Instance.InstanceID}) || !api.during[0] {
		t.Fatalf("node-name calls %v (during IMDS: %v); want one for %s while IMDS was read", api.calls, api.during, f.Instance.InstanceID)
	}
	if f.PrivateDNSName != "ip-10-0-0-1.ec2.internal" {
		t.Errorf("node name %q, want EC2's", f.PrivateDNSName)
	}
}

// TestNodeNameForDocumentInstanceID: the identity document's instance ID is the
// node's (AWS signs the document, and nodeadm takes the ID from it too): a
// meta-data/instance-id that names another instance is not read, and the one
// node-name call, made while IMDS is read, is for the document's instance.
func TestNodeNameForDocumentInstanceID(t *testing.T) {
	f, api := gatherWithSlowIMDS(t, map[string]string{imds.PathInstanceID: "i-0fffffffffffffff0"})
	want := base(t).IMDS.InstanceID
	if f.Instance.InstanceID != want || !slices.Equal(api.calls, []string{want}) || !api.during[0] {
		t.Fatalf("instance %s, node-name calls %v (during IMDS: %v); want one for the document's %s while IMDS was read",
			f.Instance.InstanceID, api.calls, api.during, want)
	}
	if f.PrivateDNSName != "ip-10-0-0-1.ec2.internal" {
		t.Errorf("node name %q, want the one of the document's instance", f.PrivateDNSName)
	}
}

// TestNodeNameWithoutDocumentInstanceID: an identity document without instanceId
// gives no early node-name call; the instance ID is then read from
// meta-data/instance-id, and the node name asked for it once IMDS is read.
func TestNodeNameWithoutDocumentInstanceID(t *testing.T) {
	f, api := gatherWithSlowIMDS(t, map[string]string{
		imds.PathIdentityDocument: imdstest.IdentityDocument(base(t).IMDS, "instanceId"),
		imds.PathInstanceID:       "i-0fffffffffffffff0",
	})
	if f.Instance.InstanceID != "i-0fffffffffffffff0" || !slices.Equal(api.calls, []string{"i-0fffffffffffffff0"}) || api.during[0] {
		t.Fatalf("instance %s, node-name calls %v (during IMDS: %v); want one for meta-data's i-0fffffffffffffff0 after IMDS",
			f.Instance.InstanceID, api.calls, api.during)
	}
	if f.PrivateDNSName != "ip-10-0-0-2.ec2.internal" {
		t.Errorf("node name %q, want the one of meta-data/instance-id's instance", f.PrivateDNSName)
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
