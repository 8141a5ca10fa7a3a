package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/rootfs"
)

// The storm's knobs (make storm sets them; make test runs the 50-node smoke run).
const (
	envStormNodes   = "EKSBOOT_STORM_NODES"   // nodes booting at once (default 50)
	envStormRate    = "EKSBOOT_STORM_RATE"    // DescribeInstanceTypes requests per second (default 50)
	envStormBackoff = "EKSBOOT_STORM_BACKOFF" // "sdk": the SDK's own delays after throttling (the before)
	envStormDomain  = "EKSBOOT_STORM_DOMAIN"  // "custom": a custom DHCP domain, so each node also asks DescribeInstances
)

// stormType is an instance type the table lacks, so every node asks EC2; its facts
// give 3 * (10 - 1) + 2 = 29 pods.
const (
	stormType    = "zz9.storm"
	stormMaxPods = 29
	// stormIMDSReaders bounds the nodes reading the shared fake IMDS at a time.
	stormIMDSReaders = 256
)

// ec2Calls counts one simulated node's EC2 requests per operation.
type ec2Calls struct{ types, instances atomic.Int32 }

// countingClient is a node's EC2 HTTP client: it counts each request (each attempt
// of a call) by the operation the SDK is making.
type countingClient struct {
	hc *http.Client
	n  *ec2Calls
}

func (c countingClient) Do(r *http.Request) (*http.Response, error) {
	switch awsmiddleware.GetOperationName(r.Context()) {
	case "DescribeInstanceTypes":
		c.n.types.Add(1)
	case "DescribeInstances":
		c.n.instances.Add(1)
	}
	return c.hc.Do(r)
}

// TestBootStorm boots many nodes at once through the real pipeline (Run, with the
// default Env but for the EC2 HTTP client, which counts; a root of its own each;
// --no-restart) against one fake IMDS and one fake EC2 on 127.0.0.1. Their instance
// type is unknown to the table, so each asks DescribeInstanceTypes, which the fake
// answers at most EKSBOOT_STORM_RATE times a second, throttling the rest
// (RequestLimitExceeded). Every node must be configured, none may make more than
// ec2api.MaxAttempts DescribeInstanceTypes requests, and with eksboot's backoff each
// must get EC2's max pods rather than the fallback. Time runs as on real nodes, so
// the big run (make storm: 2,000 nodes) takes about a minute; make test runs 50.
// The numbers are printed (go test -v -run BootStorm), not asserted.
func TestBootStorm(t *testing.T) {
	nodes, rate := stormInt(t, envStormNodes, 50), stormInt(t, envStormRate, 50)
	sdkBackoff := os.Getenv(envStormBackoff) == "sdk"
	c := golden(t, "01-m5large-usw2-vpc192")
	c.IMDS.InstanceType = stormType
	customDomain := os.Getenv(envStormDomain) == "custom"
	if customDomain { // local-hostname is not the PrivateDnsName: every node asks EC2 for its name
		c.IMDS.LocalHostname = "ip-192-168-45-67.corp.example.com"
	}
	fakes := c.StartFor(t)
	unsetAWSExtras(t)
	fakes.EC2.Update(func(a *ec2test.Answers) {
		a.Types[stormType] = maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3, IPv4PerENI: 10}
	})
	fakes.EC2.Update(func(a *ec2test.Answers) {
		a.RateLimits["DescribeInstanceTypes"] = ec2test.RateLimit{N: rate, Interval: time.Second}
	})
	if customDomain {
		fakes.EC2.Update(func(a *ec2test.Answers) {
			a.RateLimits["DescribeInstances"] = ec2test.RateLimit{N: rate, Interval: time.Second}
		})
	}

	// Every node of a fleet has an IMDS of its own; here one fake serves them all,
	// in this process, and each node reads it over up to 16 connections. So that
	// 2,000 nodes stay within the open-file limit (20,000 on the 2-core machines),
	// at most stormIMDSReaders read IMDS at a time, and the nodes share one
	// connection pool to the fake EC2. Calls to EC2 are not gated.
	imdsGate := make(chan struct{}, stormIMDSReaders)
	shared := &http.Transport{MaxIdleConnsPerHost: 256}
	t.Cleanup(shared.CloseIdleConnections)
	calls := make([]ec2Calls, nodes)
	took := make([]time.Duration, nodes)
	errs := make([]error, nodes)
	runs := make([]func() error, nodes)
	warns := make([]*observer.ObservedLogs, nodes)
	base := t.TempDir()
	for i := range nodes {
		dir := filepath.Join(base, fmt.Sprintf("node-%04d", i))
		must(t, os.Mkdir(dir, 0o755))
		root, err := rootfs.New(dir)
		must(t, err)
		args := append(slices.Clone(c.Args), "--root", dir, "--no-restart",
			"--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL())
		o, err := parseArgs(args, noEnv)
		must(t, err)
		core, logs := observer.New(zap.WarnLevel)
		warns[i] = logs
		env := DefaultEnv(root, zap.New(core), &bytes.Buffer{}, &bytes.Buffer{})
		env.CPUs = c.CPUs
		env.Getenv = noEnv
		env.DNSNameAttempts, env.DNSNameInterval = 1, 0
		env.IMDS = func(ctx context.Context, o imds.Options) (*imds.Facts, error) {
			imdsGate <- struct{}{}
			defer func() { <-imdsGate }()
			return imds.Fetch(ctx, o)
		}
		env.EC2 = func(ctx context.Context, region, imdsEndpoint string, v1 bool) (ec2api.API, error) {
			cfg, err := ec2api.LoadConfigFor(region, imdsEndpoint, v1)
			if err != nil {
				return nil, err
			}
			cfg.HTTPClient = countingClient{hc: &http.Client{Transport: shared}, n: &calls[i]}
			if sdkBackoff { // the retryer LoadConfig gives, with the SDK's delays
				return ec2api.New(cfg, ec2api.WithThrottleBackoff(0)), nil
			}
			return ec2api.New(cfg), nil
		}
		runs[i] = func() error { return runOptions(t, context.Background(), o, env) }
	}

	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			errs[i] = runs[i]()
			took[i] = time.Since(t0)
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t0)

	var configured, failed, fellBack, typeCalls, instCalls, most, lastAttempt int
	for i := range nodes {
		n := int(calls[i].types.Load())
		typeCalls, instCalls, most = typeCalls+n, instCalls+int(calls[i].instances.Load()), max(most, n)
		if n == ec2api.MaxAttempts {
			lastAttempt++ // throttled on every attempt but the last: the margin left
		}
		if n > ec2api.MaxAttempts {
			t.Errorf("node %d made %d DescribeInstanceTypes requests; the budget is %d", i, n, ec2api.MaxAttempts)
		}
		if errs[i] != nil {
			if failed++; failed <= 3 {
				t.Errorf("node %d: %v", i, errs[i])
			}
			continue
		}
		configured++
		if stormNodeMaxPods(t, base, i) != stormMaxPods {
			if fellBack++; fellBack <= 3 {
				for _, e := range warns[i].All() {
					t.Logf("node %d fell back: %s", i, e.Message)
				}
			}
		}
	}
	if configured != nodes {
		t.Errorf("%d of %d nodes not configured", nodes-configured, nodes)
	}
	if !customDomain && instCalls != 0 {
		t.Errorf("%d DescribeInstances requests: local-hostname is EC2's own name, the nodes need not ask", instCalls)
	}
	if fellBack > 0 && !sdkBackoff {
		t.Errorf("%d of %d nodes fell back to max pods %d: throttling outlasted their attempts", fellBack, nodes, maxpods.Default)
	}
	if got := fakes.EC2.Calls("DescribeInstanceTypes"); got != typeCalls {
		t.Errorf("the nodes counted %d DescribeInstanceTypes requests, the fake %d", typeCalls, got)
	}
	backoff := "eksboot (ec2api.ThrottleDelayWithin the 90 s deadline)"
	if sdkBackoff {
		backoff = "the SDK's"
	}
	slices.Sort(took)
	p := func(q float64) time.Duration { return took[int(q*float64(nodes-1))].Round(time.Millisecond) }
	domain := "EC2's own local-hostname"
	if customDomain {
		domain = "a custom DHCP domain (DescribeInstances limited too)"
	}
	var throttled int
	fakes.EC2.Update(func(a *ec2test.Answers) { throttled = a.Throttled["DescribeInstanceTypes"] })
	t.Logf("storm: %d nodes at once, %s, DescribeInstanceTypes limited to %d/s, %s backoff after throttling:\n"+
		"  configured %d/%d; EC2's max pods on %d, fallback %d on %d\n"+
		"  DescribeInstanceTypes requests %d (%.2f per node, at most %d; %d nodes needed their last attempt), throttled %d; DescribeInstances %d\n"+
		"  time to configured: p50 %v, p99 %v, max %v; all done in %v",
		nodes, domain, rate, backoff, configured, nodes, configured-fellBack, maxpods.Default, fellBack,
		typeCalls, float64(typeCalls)/float64(nodes), most, lastAttempt, throttled, instCalls,
		p(0.5), p(0.99), p(1), wall.Round(time.Millisecond))
}

// stormNodeMaxPods reads the maxPods that node i's kubelet-config.json sets.
func stormNodeMaxPods(t *testing.T, base string, i int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(base, fmt.Sprintf("node-%04d", i), kubeletconf.ConfigPath))
	must(t, err)
	var k struct {
		MaxPods int `json:"maxPods"`
	}
	must(t, json.Unmarshal(b, &k))
	return k.MaxPods
}

// stormInt reads a positive whole number from the environment, else def.
func stormInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 10000 {
		t.Fatalf("%s=%q: want a whole number from 1 to 10000", name, s)
	}
	return n
}

// TestKnownTypeMakesNoTypeCall runs every golden case whose instance type the
// table knows and checks that none asks ec2:DescribeInstanceTypes: the common case
// costs EC2 nothing, so a scale-out of known types cannot be throttled on it.
func TestKnownTypeMakesNoTypeCall(t *testing.T) {
	cases, err := goldencase.LoadAll(goldenDir)
	must(t, err)
	for _, c := range cases {
		if _, known := maxpods.Lookup(c.IMDS.InstanceType); c.ExitCode != 0 || !known {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			// A custom DHCP domain, so that the node name is asked of this EC2 and
			// the count below is of a fake the run really used.
			c.IMDS.LocalHostname += ".corp"
			fakes, err := c.Start()
			must(t, err)
			t.Cleanup(fakes.Close)
			_, err = runCaseWith(t, c, zap.NewNop(), func(*Env) { t.Setenv("AWS_ENDPOINT_URL_EC2", fakes.EC2.URL()) })
			must(t, err)
			if got := fakes.EC2.Calls("DescribeInstanceTypes"); got != 0 {
				t.Errorf("%s is in the table, yet DescribeInstanceTypes was asked %d times", c.IMDS.InstanceType, got)
			}
			if c.DescribeInst != nil && fakes.EC2.Calls("DescribeInstances") == 0 {
				t.Errorf("the run did not use this fake EC2 (no DescribeInstances): the count above proves nothing")
			}
		})
	}
}

// TestDefaultVPCBootMakesNoAWSCall: golden case 01 (a known instance type, IMDS
// local-hostname EC2's own name) configures the node with no call to EC2 and no read
// of the instance profile's credentials: with the environment's keys removed, any
// AWS client would have asked IMDS for them.
func TestDefaultVPCBootMakesNoAWSCall(t *testing.T) {
	c := base(t)
	fakes := c.StartFor(t)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	root, err := rootfs.New(dir)
	must(t, err)
	o, err := parseArgs(append(slices.Clone(c.Args), "--root", dir, "--no-restart", "--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL()), func(string) string { return "" })
	must(t, err)
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(string) string { return "" }
	must(t, runOptions(t, context.Background(), o, env))
	if n := fakes.EC2.Calls("DescribeInstances") + fakes.EC2.Calls("DescribeInstanceTypes"); n != 0 {
		t.Errorf("%d EC2 calls, want none", n)
	}
	for _, r := range fakes.IMDS.Requests() {
		if strings.Contains(r.Path, "iam/") {
			t.Errorf("IMDS %s %s: a credential read, want none", r.Method, r.Path)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"))
	must(t, err)
	if kubeletArgs := string(b); !strings.Contains(kubeletArgs, "--hostname-override="+c.IMDS.LocalHostname+" ") {
		t.Errorf("drop-in %s: want the node named %s", kubeletArgs, c.IMDS.LocalHostname)
	}
}
