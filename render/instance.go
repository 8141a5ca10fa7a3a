package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/internal/selfsigned"
	"github.com/eksboot/eksboot/internal/siminstance"
)

// simulatedInstance is the instance render boots: siminstance's default instance with
// the given type and region.
func simulatedInstance(instanceType, region string) siminstance.Instance {
	inst := siminstance.Default()
	inst.InstanceType, inst.Region, inst.AvailabilityZone = instanceType, region, region+"a"
	inst.LocalHostname = strings.ReplaceAll(inst.LocalHostname, "us-west-2", region)
	if strings.HasPrefix(region, "cn-") {
		inst.Domain, inst.Partition = "amazonaws.com.cn", "aws-cn"
	}
	return inst
}

// SimulatedMetadata answers the user data's IMDS reads (paths after /latest/) as the
// simulated instance's metadata service would (siminstance.Paths, which the fake IMDS
// serves too): an on-demand instance. Paths it has no value for (tags, credentials,
// spot actions) are known only at boot.
func SimulatedMetadata(instanceType, region string) func(string) (string, bool) {
	inst := simulatedInstance(instanceType, region)
	onDemand := "on-demand"
	inst.Overrides = map[string]*string{"latest/meta-data/instance-life-cycle": &onDemand}
	paths, err := siminstance.Paths(inst)
	if err != nil {
		panic(err) // the default instance has its VPC CIDR
	}
	return func(p string) (string, bool) {
		v, ok := paths["latest/"+p]
		if !ok { // a folder asked without its trailing "/", which IMDS answers too
			v, ok = paths["latest/"+p+"/"]
		}
		return v, ok
	}
}

// Placeholders for what the node takes from eks:DescribeCluster when the user data
// leaves it out and render is offline: documentation values that no cluster has.
const (
	PlaceholderEndpoint = "https://api-server.from-eks-describecluster.invalid"
	placeholderCIDR     = "198.51.100.0/24" // RFC 5737 TEST-NET-2
)

// IsPlaceholderCA says whether b is the placeholder that stands for the cluster's CA
// (offline, when the user data leaves the CA to discovery).
func IsPlaceholderCA(b []byte) bool { return bytes.Equal(b, placeholderCA()) }

// placeholderCAOnce holds placeholderCA's certificate (a sync.Once, not a
// sync.OnceValue, which would allocate at every start of eksboot).
var placeholderCAOnce struct {
	sync.Once
	pem []byte
}

// placeholderCA is a throw-away CA certificate (PEM) standing for the cluster's,
// made on first use.
func placeholderCA() []byte {
	placeholderCAOnce.Do(func() {
		der, err := selfsigned.CA("placeholder: the cluster CA from eks:DescribeCluster", time.Unix(0, 0), time.Unix(0, 0).AddDate(100, 0, 0))
		if err != nil {
			panic(err) // only if the system's random source fails
		}
		placeholderCAOnce.pem = selfsigned.PEM(der)
	})
	return placeholderCAOnce.pem
}

// discovery is render's EKS: placeholders offline, the caller's own credentials
// with --discover. It records what it supplied.
type discovery struct {
	eks   func(ctx context.Context, region string) (eksapi.API, error)
	asked []string
	found *eksapi.Cluster
	live  bool
}

func (d *discovery) api(ctx context.Context, region string) (eksapi.API, error) {
	if d.eks == nil {
		return placeholderEKS{d}, nil
	}
	api, err := d.eks(ctx, region)
	if err != nil {
		return nil, fmt.Errorf("--discover: %w", err)
	}
	d.live = true
	return recordingEKS{api, d}, nil
}

type placeholderEKS struct{ d *discovery }

func (p placeholderEKS) DescribeCluster(_ context.Context, name string) (*eksapi.Cluster, error) {
	p.d.asked = append(p.d.asked, name)
	c := &eksapi.Cluster{
		Name: name, Status: eksapi.StatusActive, Endpoint: PlaceholderEndpoint,
		CAData: base64.StdEncoding.EncodeToString(placeholderCA()), ServiceIPv4CIDR: placeholderCIDR, IPFamily: "ipv4",
	}
	p.d.found = c
	return c, nil
}

type recordingEKS struct {
	api eksapi.API
	d   *discovery
}

func (r recordingEKS) DescribeCluster(ctx context.Context, name string) (*eksapi.Cluster, error) {
	c, err := r.api.DescribeCluster(ctx, name)
	if err == nil && c != nil {
		r.d.asked = append(r.d.asked, name)
		cp := *c
		r.d.found = &cp
	}
	return c, err
}

// report says what discovery supplied and what the node needs for it.
func (d *discovery) report() []string {
	if d.found == nil {
		return nil
	}
	c := d.found
	perm := fmt.Sprintf("the node's IAM role needs eks:DescribeCluster on cluster %q", c.Name)
	if d.live {
		return []string{
			fmt.Sprintf("the user data leaves the CA or the endpoint to discovery: looked up with your credentials (--discover): cluster %q is %s, endpoint %s, CA %d bytes of base64, service CIDR %s", c.Name, c.Status, c.Endpoint, len(c.CAData), c.ServiceIPv4CIDR+c.ServiceIPv6CIDR),
			perm + " (the node calls it with its instance profile at boot; your credentials were used only here)",
		}
	}
	return []string{
		fmt.Sprintf("the user data leaves the CA or the endpoint to discovery: at boot the node calls eks:DescribeCluster for cluster %q; render is offline, so these stand for its answer:", c.Name),
		"  endpoint " + PlaceholderEndpoint + " (the cluster's endpoint; one given with --apiserver-endpoint is replaced by it)",
		"  the CA in /etc/kubernetes/pki/ca.crt (the cluster's certificateAuthority.data)",
		"  service CIDR " + placeholderCIDR + ", so clusterDNS 198.51.100.10 (the cluster's serviceIpv4Cidr and its .10, unless --dns-cluster-ip is given)",
		perm,
		"render --discover looks them up with your own AWS credentials",
	}
}
