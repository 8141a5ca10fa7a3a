package bootstrap

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/rootfs"
)

// countingTransport counts the HTTP requests of one simulated node.
type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int32
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// TestDiscoveryHerd simulates a fleet scale-out: 2,000 nodes that know only the
// cluster name discover it at the same moment, against an EKS API that answers 50
// requests per second and throttles the rest. Time runs `scale` times faster than on
// a real node: every wait of the policy, the discovery deadline and the API's rate
// interval are divided by it. Every node must be configured (discovery, then the
// whole node computed) without any node making more calls than its retry budget
// allows. The numbers are printed (go test -v -run Herd), not asserted.
func TestDiscoveryHerd(t *testing.T) {
	const (
		nodes   = 2000
		rate    = 50 // requests per second of the fake API
		scale   = 20 // simulated time runs this many times faster
		retries = 3  // --aws-api-retry-attempts' default
	)
	c, cl := discoveryCase(t, "01-m5large-usw2-vpc192")
	eks := newEKS(t, cl)
	eks.SetRateLimit(rate, time.Second/scale)

	// One node's facts, gathered for real from the case's fake IMDS and EC2; each
	// simulated node then discovers the cluster on its own and computes its files.
	fakes := c.StartFor(t)
	root, err := rootfs.New(t.TempDir())
	must(t, err)
	args := append(slices.Clone(c.Args), "--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL(),
		"--discovery-timeout", (10 * time.Minute / scale).String(), "--aws-api-retry-attempts", "3")
	o, err := parseArgs(args, noEnv)
	must(t, err)
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.DNSNameAttempts = 1
	env.EKS = func(context.Context, string, string, bool) (eksapi.API, error) {
		return fakeEKS{cl.Endpoint, cl.CAData}, nil
	}
	conf, err := Validate(o)
	must(t, err)
	facts, err := gatherFacts(context.Background(), conf, env)
	must(t, err)

	// The per-call timeout stays unscaled: the simulated nodes share this machine's
	// CPUs, so a call takes far longer here than on a node of its own.
	env.Discovery = eksapi.Policy{
		Base: eksapi.DefaultBase / scale, Max: eksapi.DefaultMax / scale,
		Poll: eksapi.DefaultPoll / scale, CallTimeout: eksapi.DefaultCallTimeout,
	}
	shared := &http.Transport{MaxIdleConnsPerHost: nodes}
	t.Cleanup(shared.CloseIdleConnections)
	calls := make([]atomic.Int32, nodes)
	took := make([]time.Duration, nodes)
	errs := make([]error, nodes)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			ne := *env
			ne.EKS = func(context.Context, string, string, bool) (eksapi.API, error) {
				c, err := eksapi.New(aws.Config{
					Region:       "us-west-2",
					BaseEndpoint: aws.String(eks.URL()),
					HTTPClient:   &http.Client{Transport: countingTransport{shared, &calls[i]}},
					Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
						return aws.Credentials{AccessKeyID: "AKIDFAKE", SecretAccessKey: "fake"}, nil
					}),
				})
				if err != nil {
					return nil, err
				}
				return c, nil
			}
			nc, err := Validate(o)
			if err != nil {
				errs[i] = err
				return
			}
			f := *facts
			<-start
			t0 := time.Now()
			if errs[i] = discoverCluster(context.Background(), nc, &f, &ne, ""); errs[i] != nil {
				return
			}
			took[i] = time.Since(t0)
			errs[i] = configured(nc, &f, cl.Endpoint)
		})
	}
	close(start)
	wg.Wait()

	var failed, most, total int
	for i := range nodes {
		n := int(calls[i].Load())
		total += n
		most = max(most, n)
		if errs[i] != nil {
			failed++
			if failed <= 3 {
				t.Errorf("node %d: %v", i, errs[i])
			}
		}
		if n > retries+1 {
			t.Errorf("node %d made %d calls; its budget is %d", i, n, retries+1)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d nodes not configured", failed, nodes)
	}
	if total != eks.Calls() {
		t.Errorf("the nodes counted %d calls, the API %d", total, eks.Calls())
	}
	slices.Sort(took)
	p := func(q float64) time.Duration { return took[int(q*float64(nodes-1))] * scale }
	t.Logf("%d nodes, API %d requests/s (time x%d): %d configured; %d DescribeCluster calls (%.2f per node, at most %d; %d throttled); "+
		"time to discover, in node seconds: p50 %v, p99 %v, max %v",
		nodes, rate, scale, nodes-failed, total, float64(total)/nodes, most, eks.Throttled(),
		p(0.5).Round(time.Second), p(0.99).Round(time.Second), p(1).Round(time.Second))
}

// configured computes the whole node and checks that it points at the cluster.
func configured(c *Config, f *Facts, endpoint string) error {
	n, err := Compute(c, f)
	if err != nil {
		return err
	}
	for _, file := range n.Files {
		if file.Path == kubeletconf.KubeconfigPath && !strings.Contains(string(file.Data), "server: "+endpoint) {
			return fmt.Errorf("kubeconfig without the endpoint: %s", file.Data)
		}
	}
	return nil
}

// fakeEKS answers at once with an ACTIVE cluster (to gather the facts shared by the
// simulated nodes).
type fakeEKS struct{ endpoint, ca string }

func (f fakeEKS) DescribeCluster(_ context.Context, name string) (*eksapi.Cluster, error) {
	return &eksapi.Cluster{Name: name, Status: eksapi.StatusActive, Endpoint: f.endpoint, CAData: f.ca, ServiceIPv4CIDR: "10.100.0.0/16", IPFamily: "ipv4"}, nil
}
