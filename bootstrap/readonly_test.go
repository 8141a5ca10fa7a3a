package bootstrap

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/nodesys"
	"github.com/eksboot/eksboot/rootfs"
)

// deepCopy returns a copy of v that shares no memory with it: every pointer, slice
// and map is copied, down to the leaves. Funcs and channels are kept (Config has
// none).
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Elem().Type())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(deepCopy(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(deepCopy(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(deepCopy(it.Key()), deepCopy(it.Value()))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v) // unexported fields (netip.Prefix's) are values
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return out
	}
	return v
}

// readOnly runs fn with c and fails t when c is not what it was before: nothing may
// write a Config field once it is validated (validate.go).
func readOnly(t testing.TB, c *Config, fn func() error) error {
	t.Helper()
	before := deepCopy(reflect.ValueOf(c)).Interface().(*Config)
	err := fn()
	b, a := reflect.ValueOf(before).Elem(), reflect.ValueOf(c).Elem()
	for i := range b.NumField() {
		// Only the names: a field may hold the CA.
		if !reflect.DeepEqual(b.Field(i).Interface(), a.Field(i).Interface()) {
			t.Errorf("the run changed its validated Config's %s", b.Type().Field(i).Name)
		}
	}
	return err
}

// runReadOnly is Run, checked by readOnly.
func runReadOnly(t testing.TB, ctx context.Context, c *Config, env *Env) error {
	t.Helper()
	return readOnly(t, c, func() error { return Run(ctx, c, env) })
}

func TestDeepCopySharesNothing(t *testing.T) {
	c := &Config{
		CA: []byte("x"), KubeletFlags: []string{"--a"},
		BaseRuntimeSpecOverlay: map[string]any{"k": map[string]any{"n": []any{1.0}}},
	}
	d := deepCopy(reflect.ValueOf(c)).Interface().(*Config)
	if !reflect.DeepEqual(c, d) {
		t.Fatalf("copy differs: %+v", d)
	}
	c.CA[0] = 'y'
	c.KubeletFlags[0] = "--b"
	c.BaseRuntimeSpecOverlay["k"].(map[string]any)["n"].([]any)[0] = 2.0
	if reflect.DeepEqual(c, d) || string(d.CA) != "x" || d.KubeletFlags[0] != "--a" ||
		d.BaseRuntimeSpecOverlay["k"].(map[string]any)["n"].([]any)[0] != 1.0 {
		t.Errorf("the copy shares memory with the original: %+v", d)
	}
}

// TestConfigIsReadOnlyOnceValidated: a NodeConfig that leaves the CA and the endpoint
// to eks:DescribeCluster, with every kind of field (kubelet config and flags,
// containerd TOML, environment, network), is computed twice, the second time from
// the discovery cache, and its Config is what FromNodeConfig gave every time. The
// golden, discovery, Outposts and scenario tests check the same of every flag run
// (runOptions, runReadOnly).
func TestConfigIsReadOnlyOnceValidated(t *testing.T) {
	gc, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
	cl.ServiceIPv4CIDR, cl.ID = "172.20.0.0/16", "51eaebb5-7e52-4e71-baba-e98a6314b10e"
	eks := newEKS(t, cl)
	t.Setenv("AWS_ENDPOINT_URL_EKS", eks.URL())
	fakes := gc.StartFor(t)
	dir := t.TempDir()
	must(t, gc.WriteFiles(dir))
	root, err := rootfs.New(dir)
	must(t, err)

	nc := &nodeconfig.NodeConfig{Spec: nodeconfig.Spec{
		Cluster: nodeconfig.Cluster{Name: cl.Name},
		Kubelet: nodeconfig.Kubelet{
			Config: checkedOverlay(t, map[string]any{"maxPods": 58.0, "shutdownGracePeriod": "30s", "featureGates": map[string]any{"InPlacePodVerticalScaling": true}}),
			Flags:  []string{"--node-labels=a=b"},
		},
		Containerd: nodeconfig.Containerd{Configs: []string{"version = 2\n"}},
		Instance: nodeconfig.Instance{
			Environment: map[string]map[string]string{"kubelet": {"HTTP_PROXY": "http://proxy:3128"}, "default": {"NO_PROXY": "localhost"}},
			Network:     nodeconfig.Network{Nameservers: []string{"10.0.0.2"}, Domains: []string{"example.internal"}},
		},
	}}
	s := DefaultSettings()
	s.Root, s.NoRestart, s.IMDSEndpoint = dir, true, fakes.IMDS.URL()
	s.KubeletVersion, err = kubeletconf.FindVersion(gc.KubeletVersion)
	must(t, err)
	c, err := FromNodeConfig(nc, s)
	must(t, err)
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = gc.CPUs
	env.Getenv = func(k string) string { return gc.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	env.Discovery = fastDiscovery

	for _, from := range []string{"eks:DescribeCluster", "the cache"} {
		var n *Node
		var f *Facts
		must(t, readOnly(t, c, func() (err error) { f, n, err = ComputeNode(context.Background(), c, env); return err }))
		if c.CA != nil || c.APIServerEndpoint != "" || f.Cluster.Endpoint != cl.Endpoint || f.Cluster.ID != cl.ID ||
			f.Cluster.ServiceIPv4CIDR.String() != "172.20.0.0/16" || !reflect.DeepEqual(n.ClusterDNS, []string{"172.20.0.10"}) {
			t.Errorf("from %s: Config endpoint %q, facts %q %q %v, cluster DNS %v", from, c.APIServerEndpoint, f.Cluster.Endpoint, f.Cluster.ID, f.Cluster.ServiceIPv4CIDR, n.ClusterDNS)
		}
		for _, p := range []string{nodesys.ResolvedDropInPath, nodesys.KubeletEnvironmentPath, nodesys.ManagerEnvironmentPath} {
			if file(n, p) == nil {
				t.Errorf("from %s: no %s", from, p)
			}
		}
		must(t, runReadOnly(t, context.Background(), c, env)) // writes the cache
	}
	if eks.Calls() != 2 { // ComputeNode, then Run; the second round reads the cache
		t.Errorf("%d eks:DescribeCluster calls, want 2", eks.Calls())
	}
}
