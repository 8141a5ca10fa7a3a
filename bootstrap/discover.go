package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/strictjson"
	"github.com/eksboot/eksboot/rootfs"
)

// pathClusterCacheDir holds what cluster discovery learned: one file per region and
// cluster name, so that a reboot makes no API call.
const pathClusterCacheDir = "/var/lib/eksboot/clusters"

// clusterCacheVersion is the format of the cache files; others are ignored.
const clusterCacheVersion = 1

// clusterCache is the content of a cache file. It holds the CA, so it is written
// with mode 0600 and never printed.
type clusterCache struct {
	Version int    `json:"version"`
	Region  string `json:"region"`
	eksapi.Cluster
}

// clusterCachePath is the cache file of cluster name in region.
func clusterCachePath(region, name string) string {
	return pathClusterCacheDir + "/" + region + "/" + name + ".json"
}

// needsDiscovery reports whether the cluster must be looked up: bootstrap.sh called
// DescribeCluster when the CA or the endpoint was empty.
func needsDiscovery(noCA, noEndpoint bool) bool {
	return noCA || noEndpoint
}

// discovers reports whether the run of c looks its cluster up.
func (c *Config) discovers() bool { return needsDiscovery(c.CA == nil, c.APIServerEndpoint == "") }

// discoverCluster puts the cluster's CA, endpoint, service CIDRs, IP family and ID
// into f.Cluster when c lacks the CA or the endpoint, as bootstrap.sh's
// DescribeCluster fallback did: from the cache of an earlier run when it matches the
// flags, else from eks:DescribeCluster. c is only read. The cache file goes into
// f.ClusterCache for the write step; nothing is written here.
func discoverCluster(ctx context.Context, c *Config, f *Facts, env *Env, imdsEndpoint string) error {
	if !c.discovers() {
		return nil
	}
	region := f.Instance.Region
	path := clusterCachePath(region, c.ClusterName)
	log := env.Log.With(zap.String("cluster", c.ClusterName), zap.String("region", region))
	source := "cache " + path
	cl, data, why := readClusterCache(env.Files, path, c, region)
	if cl == nil {
		if why != "" {
			log.Info("cluster cache ignored", zap.String("path", path), zap.String("why", why))
		}
		log.Info("--b64-cluster-ca or --apiserver-endpoint is not given: looking the cluster up with eks:DescribeCluster")
		var err error
		if cl, err = describeCluster(ctx, c, env, region, imdsEndpoint, log); err != nil {
			return err
		}
		if data, err = json.MarshalIndent(clusterCache{Version: clusterCacheVersion, Region: region, Cluster: *cl}, "", "  "); err != nil {
			return fmt.Errorf("cluster cache: %w", err)
		}
		data = append(data, '\n')
		source = "eks:DescribeCluster"
	}
	found, warnings, err := applyCluster(c, cl)
	if err != nil {
		return fmt.Errorf("cluster %q in %s (from %s): %w", c.ClusterName, region, source, err)
	}
	f.Cluster = found
	f.Warnings = append(f.Warnings, warnings...)
	f.ClusterCache = &rootfs.File{Path: path, Data: data, Mode: 0o600, Secret: true}
	log.Info("cluster discovered", zap.String("source", source), zap.String("endpoint", found.Endpoint),
		zap.String("ipFamily", found.IPFamily), zap.Stringer("serviceIPv4CIDR", found.ServiceIPv4CIDR), zap.Stringer("serviceIPv6CIDR", found.ServiceIPv6CIDR),
		zap.Bool("localOutpost", found.LocalOutpost), zap.String("clusterID", found.ID))
	return nil
}

// readClusterCache returns the cached cluster and the file's bytes when the cache
// exists and still matches the flags (cluster name, region, and the CA or endpoint
// when one of them is given); otherwise nil and why it was not used ("" when there
// is no cache).
func readClusterCache(root NodeFiles, path string, c *Config, region string) (*eksapi.Cluster, []byte, string) {
	data, err := root.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, ""
	}
	if err != nil {
		return nil, nil, err.Error()
	}
	var cc clusterCache
	if err := strictjson.Unmarshal(data, &cc, strictjson.Limits{Bytes: 1 << 20, Values: 10_000}); err != nil {
		return nil, nil, "not valid JSON (a key twice, or past its bounds, is not)"
	}
	switch {
	case cc.Version != clusterCacheVersion:
		return nil, nil, fmt.Sprintf("format version %d, want %d", cc.Version, clusterCacheVersion)
	case cc.Name != c.ClusterName || cc.Region != region:
		return nil, nil, fmt.Sprintf("it is for cluster %q in %q", cc.Name, cc.Region)
	case c.APIServerEndpoint != "" && cc.Endpoint != c.APIServerEndpoint:
		return nil, nil, "--apiserver-endpoint differs from the cached endpoint"
	}
	if c.CA != nil {
		if ca, err := decodeCA(cc.CAData); err != nil || !bytes.Equal(ca, c.CA) {
			return nil, nil, "--b64-cluster-ca differs from the cached CA"
		}
	}
	if _, _, err := applyCluster(c, &cc.Cluster); err != nil {
		return nil, nil, err.Error()
	}
	return &cc.Cluster, data, ""
}

// describeCluster asks EKS under --discovery-timeout, with --aws-api-retry-attempts
// retries in a row, logging every wait.
func describeCluster(parent context.Context, c *Config, env *Env, region, imdsEndpoint string, log *zap.Logger) (*eksapi.Cluster, error) {
	ctx, cancel := context.WithTimeout(parent, c.DiscoveryTimeout)
	defer cancel()
	allowV1, _ := imds.V1Allowed(c.IMDSv1Fallback, env.Getenv) // checked by gatherFacts
	api, err := env.EKS(ctx, region, imdsEndpoint, allowV1)
	if err != nil {
		return nil, fmt.Errorf("cluster discovery for %q in %s: %w", c.ClusterName, region, err)
	}
	p := env.Discovery
	p.Retries = c.APIRetryAttempts
	p.OnWait = func(w eksapi.Wait) {
		if w.Err != nil {
			log.Warn("eks:DescribeCluster failed; retrying", zap.Int("retry", w.Retry), zap.Int("retries", p.Retries),
				zap.Duration("in", w.Delay), zap.String("code", eksapi.Code(w.Err)), zap.Error(w.Err))
			return
		}
		log.Info("waiting for the cluster to become ACTIVE", zap.String("status", w.Status), zap.Duration("next", w.Delay))
	}
	cl, calls, err := eksapi.Discover(ctx, api, c.ClusterName, p)
	if err != nil {
		return nil, discoveryError(parent, c, region, err)
	}
	log.Info("eks:DescribeCluster answered", zap.String("status", cl.Status), zap.Int("calls", calls))
	return cl, nil
}

// discoveryError names the cluster, the region and the API's error code, and says
// what to do about it.
func discoveryError(ctx context.Context, c *Config, region string, err error) error {
	msg := fmt.Sprintf("cluster discovery for %q in %s", c.ClusterName, region)
	var de *eksapi.Error
	if !errors.As(err, &de) {
		return fmt.Errorf("%s: %w", msg, err)
	}
	if de.Code != "" {
		msg += ": " + de.Code
	}
	switch {
	case de.Code == "AccessDeniedException":
		msg += ": the node's IAM role lacks the eks:DescribeCluster permission on this cluster; grant it, or pass --b64-cluster-ca and --apiserver-endpoint"
	case de.Code == "ResourceNotFoundException":
		msg += ": there is no cluster of that name in the instance's region; check the cluster name"
	case de.Code == "UnrecognizedClientException" || de.Code == "InvalidSignatureException" || de.Code == "ExpiredTokenException":
		msg += ": EKS refused the node's AWS credentials"
	case de.Reason == eksapi.ReasonBudget:
		msg += fmt.Sprintf(": more failures in a row than --aws-api-retry-attempts %d allows", c.APIRetryAttempts)
	case de.Reason == eksapi.ReasonDeadline && ctx.Err() != nil: // the run was stopped, not timed out
		msg += fmt.Sprintf(": stopped (%v)", context.Cause(ctx))
	case de.Reason == eksapi.ReasonDeadline:
		msg += fmt.Sprintf(": --discovery-timeout %v ran out", c.DiscoveryTimeout)
	case de.Reason == eksapi.ReasonStatus:
		msg += ": nodes can only join an ACTIVE cluster"
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// applyCluster returns the cluster the node joins, from the answer cl and what c
// gave, by bootstrap.sh's rules: the CA and
// the endpoint replace the flags (both, even when one was given); the service CIDRs
// replace the flags (an absent one unsets it); the IP family is used only when
// neither --ip-family nor --service-ipv6-cidr was given; a cluster ID replaces
// --cluster-id. A cluster with an Outpost ARN is a local cluster unless
// --enable-local-outpost was given (the flag wins, as in bootstrap.sh); a local
// cluster needs an ID. It also returns warnings for flag values that were replaced by
// different ones. c is only read.
func applyCluster(c *Config, cl *eksapi.Cluster) (ClusterFacts, []string, error) {
	var warnings []string
	local := c.LocalOutpost
	if !c.OutpostGiven {
		local = cl.OutpostARN != ""
	}
	id := c.ClusterID
	if cl.ID != "" {
		if !isClusterID(cl.ID) {
			return ClusterFacts{}, nil, fmt.Errorf("id %s: not a cluster ID", quote.Value(cl.ID))
		}
		id = cl.ID
	}
	if local && id == "" {
		return ClusterFacts{}, nil, errors.New("a local cluster on AWS Outposts needs its ID, and the answer has none: pass --cluster-id")
	}
	ca, err := decodeCA(cl.CAData)
	if err != nil {
		return ClusterFacts{}, nil, fmt.Errorf("certificateAuthority.data: %w", err)
	}
	if err := checkEndpoint(cl.Endpoint); err != nil {
		return ClusterFacts{}, nil, fmt.Errorf("endpoint %q: %w", cl.Endpoint, err)
	}
	v4, err := clusterCIDR(cl.ServiceIPv4CIDR, true)
	if err != nil {
		return ClusterFacts{}, nil, fmt.Errorf("serviceIpv4Cidr %q: %w", cl.ServiceIPv4CIDR, err)
	}
	v6, err := clusterCIDR(cl.ServiceIPv6CIDR, false)
	if err != nil {
		return ClusterFacts{}, nil, fmt.Errorf("serviceIpv6Cidr %q: %w", cl.ServiceIPv6CIDR, err)
	}
	family := c.IPFamily
	if !c.IPFamilyGiven {
		switch f := strings.ToLower(cl.IPFamily); f {
		case "":
			family = "ipv4"
		case "ipv4", "ipv6":
			family = f
		default:
			return ClusterFacts{}, nil, fmt.Errorf("ipFamily %q: want ipv4 or ipv6", cl.IPFamily)
		}
	}
	if family == "ipv6" && !v6.IsValid() && len(c.DNSClusterIPs) == 0 {
		return ClusterFacts{}, nil, errors.New("the IP family is ipv6 but the cluster has no IPv6 service CIDR; pass --dns-cluster-ip")
	}
	if c.APIServerEndpoint != "" && c.APIServerEndpoint != cl.Endpoint {
		warnings = append(warnings, fmt.Sprintf("--apiserver-endpoint %s is replaced by the cluster's endpoint %s (as bootstrap.sh does when --b64-cluster-ca is missing)", c.APIServerEndpoint, cl.Endpoint))
	}
	for _, r := range []struct {
		flag      string
		given, to netip.Prefix
	}{{"--service-ipv4-cidr", c.ServiceIPv4CIDR, v4}, {"--service-ipv6-cidr", c.ServiceIPv6CIDR, v6}} {
		if r.given.IsValid() && r.given != r.to {
			to := "none"
			if r.to.IsValid() {
				to = r.to.String()
			}
			warnings = append(warnings, fmt.Sprintf("%s %s is replaced by the cluster's service CIDR (%s), as bootstrap.sh does after eks:DescribeCluster", r.flag, r.given, to))
		}
	}
	return ClusterFacts{
		CA: ca, Endpoint: cl.Endpoint, IPFamily: family, ServiceIPv4CIDR: v4, ServiceIPv6CIDR: v6,
		ID: id, LocalOutpost: local,
	}, warnings, nil
}

// clusterCIDR parses a service CIDR of the answer; "" is no CIDR.
func clusterCIDR(s string, v4 bool) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Is4() != v4 || p.Addr().Is4In6() {
		return netip.Prefix{}, errors.New("not a CIDR of that IP version")
	}
	return p.Masked(), nil
}
