package bootstrap

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/smithy-go"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodesys"
	"github.com/eksboot/eksboot/rootfs"
)

// Node paths eksboot reads (the files it writes are the renderers': kubeletconf,
// containerdconf, nodesys).
const (
	pathContainerdAMI     = "/etc/eks/containerd/containerd-config.toml"
	pathSandboxUnitAMI    = "/etc/eks/containerd/sandbox-image.service"
	pathKubeletVersionTxt = "/etc/eks/kubelet-version.txt"
	pathContainerdVersion = "/etc/eks/containerd-version.txt"
	pathOSRelease         = "/etc/os-release"
	pathNvidiaRuntime     = "/usr/bin/nvidia-container-runtime"
	pathPCIDevices        = "/sys/bus/pci/devices"
	pathFIPS              = "/proc/sys/crypto/fips_enabled"
	pathMounts            = "/proc/mounts"
)

// Facts are what eksboot learns from the node, IMDS and EC2 before it computes
// anything. Gathering them is the only step with outside effects before the writes.
type Facts struct {
	Instance imds.Facts
	// Cluster is the cluster the node joins: the values given, or what cluster
	// discovery answered (discover.go).
	Cluster        ClusterFacts
	KubeletVersion kubeletconf.Version
	// Kubelet is the kubelet table's row for KubeletVersion.
	Kubelet kubeletconf.KubeletRow
	// Profile is the node image's profile, detected or from --image-profile.
	Profile Profile
	// ContainerdMajor is the image's containerd major version, from ContainerdSource.
	ContainerdMajor int
	// ContainerdMinor is its minor version, -1 when ContainerdSource is the
	// profile's default (only the major is assumed).
	ContainerdMinor  int
	ContainerdSource string
	// CredentialConfigOnImage: the image has an image credential provider config.
	CredentialConfigOnImage bool
	// NvidiaRuntime is the path of nvidia-container-runtime when the image has it;
	// NvidiaGPU is set when an NVIDIA PCI device is present.
	NvidiaRuntime string
	NvidiaGPU     bool
	// RuncBinary is the image's runc, written into containerd's config on the
	// profiles that name it (AL2023: /usr/sbin/runc); "" leaves containerd's PATH.
	RuncBinary string
	CPUs       int
	// PrivateDNSName is the node name: EC2's PrivateDnsName, or IMDS local-hostname
	// when it is EC2's own name or EC2 could not say (nodeName); NodeNameSource says
	// which.
	PrivateDNSName string
	NodeNameSource string
	// MaxPods and MaxPodsSource: the table, the node's eni-max-pods.txt, EC2's
	// instance-type facts or the default, with the formula (maxpods.go).
	MaxPods       int
	MaxPodsSource string
	// FIPSHost is set when FIPS mode is on and the ecr-fips registry host resolves.
	FIPSHost bool
	// BPFMounted is set when a bpf file system is mounted or its unit exists.
	BPFMounted bool
	// ContainerdTemplate is the containerd config template and where it came from;
	// nil: the embedded template for the image's containerd.
	ContainerdTemplate       []byte
	ContainerdTemplateSource string
	// SandboxImageUnit is the AMI's sandbox-image.service, nil when the AMI has none.
	SandboxImageUnit []byte
	// SOCI: FastImagePull is on and the instance is large enough (soci.go); SOCIGzip
	// is the image's parallel gzip and PauseTar its cached pause image ("": none).
	SOCI     bool
	SOCIGzip string
	PauseTar string
	// KubeletBase is what kubelet-config.json is made from: the node's file, or the
	// base eksboot kept beside it, or its template (kubeletbase.go).
	KubeletBase KubeletBase
	// KubeconfigBase is the node's own kubeconfig template, when it has one that is
	// not the AMI's (kubeconfigbase.go).
	KubeconfigBase KubeconfigBase
	// KubeletDropIns are the drop-ins of the kubelet's configuration directory that
	// are not eksboot's (the image's, a script's), in the kubelet's order; read only
	// for a kubelet that reads them (Profile.ConfigDir).
	KubeletDropIns []kubeletconf.DropIn
	// APIServerHosts is the API server's resolved addresses and the node's
	// /etc/hosts, on a local cluster on AWS Outposts (nil otherwise).
	APIServerHosts *APIServerHosts
	// ClusterCache is the cache of the discovered cluster, written with the other
	// files; nil when --b64-cluster-ca and --apiserver-endpoint were both given.
	ClusterCache *rootfs.File
	// Warnings are facts that could not be had and the fallback used.
	Warnings []string
}

// ClusterFacts are the cluster the node joins, as the run uses them. Config keeps
// what the flags or the NodeConfig asked (Config.CA, Config.APIServerEndpoint, ...);
// when the CA or the endpoint was missing, cluster discovery answers them by
// bootstrap.sh's rules (applyCluster), and this is where the answer goes: Config
// is never written after validation.
type ClusterFacts struct {
	CA       []byte // the decoded PEM bundle, written verbatim to ca.crt
	Endpoint string // the API server's https URL
	IPFamily string // "ipv4" or "ipv6"
	// ServiceIPv4CIDR and ServiceIPv6CIDR are the service CIDRs (invalid: none).
	ServiceIPv4CIDR netip.Prefix
	ServiceIPv6CIDR netip.Prefix
	// ID is a local cluster's ID; LocalOutpost says the cluster is one (outpost.go).
	ID           string
	LocalOutpost bool
}

// givenCluster is the cluster as c gives it, before any discovery.
func (c *Config) givenCluster() ClusterFacts {
	return ClusterFacts{
		CA: c.CA, Endpoint: c.APIServerEndpoint, IPFamily: c.IPFamily,
		ServiceIPv4CIDR: c.ServiceIPv4CIDR, ServiceIPv6CIDR: c.ServiceIPv6CIDR,
		ID: c.ClusterID, LocalOutpost: c.LocalOutpost,
	}
}

// gatherFacts reads everything the computation needs. IMDS comes first (the region is
// needed for EC2); the EC2 and DNS look-ups then run in parallel.
func gatherFacts(ctx context.Context, c *Config, env *Env) (*Facts, error) {
	f := &Facts{CPUs: env.CPUs(), Cluster: c.givenCluster()}
	var err error
	if f.KubeletVersion, err = kubeletVersion(ctx, c.KubeletVersion, env); err != nil {
		return nil, err
	}
	var warning string
	if f.Kubelet, warning = kubeletconf.Kubelet(f.KubeletVersion); warning != "" {
		f.Warnings = append(f.Warnings, warning)
	}
	if !f.KubeletVersion.AtLeast(1, 24) && !c.ContainerdChosen {
		// bootstrap.sh's default below 1.24 is dockerd, which eksboot does not drive.
		return nil, &UsageError{msg: fmt.Sprintf("kubelet %s: below Kubernetes 1.24 bootstrap.sh's default runtime is dockerd, which eksboot does not support; pass --container-runtime containerd", f.KubeletVersion)}
	}
	if err := readNodeFiles(c, env, f); err != nil {
		return nil, err
	}
	if err := readImage(ctx, c, env, f); err != nil {
		return nil, err
	}
	if f.KubeletBase, err = readKubeletBase(env.Files, func(w string) { f.Warnings = append(f.Warnings, w) }); err != nil {
		return nil, err
	}
	if f.KubeconfigBase, err = readKubeconfigBase(env.Files, func(w string) { f.Warnings = append(f.Warnings, w) }); err != nil {
		return nil, err
	}
	if f.Profile.ConfigDir(f.Kubelet) {
		if f.KubeletDropIns, err = readKubeletDropIns(env.Files); err != nil {
			return nil, err
		}
	}
	endpoint, err := imds.ResolveEndpoint(c.IMDSEndpoint, env.Getenv)
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	// IMDSv1 only with --imds-v1-fallback, and never when AWS_EC2_METADATA_V1_DISABLED
	// is true: for every IMDS read, the instance profile's credentials included.
	allowV1, err := imds.V1Allowed(c.IMDSv1Fallback, env.Getenv)
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	inst, err := env.IMDS(ctx, imds.Options{
		Endpoint: endpoint, Timeout: c.IMDSTimeout, AllowIMDSv1: allowV1,
		// The node IP: a 404 is IMDS not ready yet. Not when discovery may still turn
		// the cluster's IP family to IPv6 (an IPv6-only instance has no local-ipv4).
		RequireLocalIPv4: c.IPFamily == "ipv4" && !c.discovers(),
		// The IPv6 addresses only where they may be the node IP.
		IPv6: c.IPFamily == "ipv6" || c.discovers(),
	})
	if err != nil {
		return nil, err
	}
	f.Instance = *inst
	f.Warnings = append(f.Warnings, inst.Warnings...)
	if f.Instance.Domain == "" {
		d, ok := domainForRegion(f.Instance.Region)
		if !ok {
			return nil, fmt.Errorf("imds: latest/meta-data/services/domain is missing and region %q has no known domain", f.Instance.Region)
		}
		f.Warnings = append(f.Warnings, fmt.Sprintf("IMDS has no services/domain; using %s, the domain of region %s", d, f.Instance.Region))
		f.Instance.Domain = d
	}
	if err := discoverCluster(ctx, c, f, env, endpoint); err != nil {
		return nil, err
	}
	decideSOCI(c, env, f)
	if f.Cluster.LocalOutpost {
		if f.Cluster.ID == "" { // Validate and FromNodeConfig check it when there is no discovery
			return nil, &UsageError{msg: "a local cluster on AWS Outposts needs its ID: pass --cluster-id (spec.cluster.id)"}
		}
		if f.APIServerHosts, err = resolveAPIServer(ctx, f.Cluster.Endpoint, env); err != nil {
			return nil, err
		}
		if h := f.APIServerHosts; h.AtBoot {
			env.Log.Info("local cluster: the API server's addresses are resolved at boot and added to /etc/hosts", zap.String("host", h.Host))
		} else if h.Host != "" {
			env.Log.Info("local cluster: the API server's addresses for /etc/hosts", zap.String("host", h.Host), zap.Strings("addresses", h.Addrs))
		}
	}

	// The EC2 client (and the instance profile's credentials) only when a call needs
	// it: the node name on a VPC with a custom DHCP domain, the facts of an instance
	// type the table lacks. A default VPC's node in a known type makes no AWS call.
	client := sync.OnceValues(func() (ec2api.API, error) { return env.EC2(ctx, f.Instance.Region, endpoint, allowV1) })
	var wg sync.WaitGroup
	var mu sync.Mutex
	warn := func(s string) { mu.Lock(); f.Warnings = append(f.Warnings, s); mu.Unlock() }
	wg.Go(func() { f.PrivateDNSName, f.NodeNameSource = nodeName(ctx, c, env, &f.Instance, client, warn) })
	wg.Go(func() {
		f.MaxPods, f.MaxPodsSource = maxPods(ctx, c, env, client, f.Instance.InstanceType, f.CPUs, warn)
	})
	wg.Go(func() { f.FIPSHost = fipsHost(ctx, c, env, &f.Instance) })
	wg.Wait()
	if f.PrivateDNSName == "" {
		return nil, errors.New("no node name: EC2 gave no PrivateDnsName and IMDS latest/meta-data/local-hostname is empty")
	}
	return f, nil
}

// readNodeFiles reads the node's own files the computation depends on.
func readNodeFiles(c *Config, env *Env, f *Facts) error {
	f.ContainerdTemplate, f.ContainerdTemplateSource = nil, "embedded"
	if c.ContainerdConfigFile != "" {
		b, err := env.Files.ReadFile(c.ContainerdConfigFile)
		if errors.Is(err, fs.ErrNotExist) {
			return &UsageError{msg: fmt.Sprintf("--containerd-config-file %q: no such file (under --root %s)", c.ContainerdConfigFile, c.Root)}
		}
		if err != nil {
			return &UsageError{msg: fmt.Sprintf("--containerd-config-file %q: %v", c.ContainerdConfigFile, err)}
		}
		f.ContainerdTemplate, f.ContainerdTemplateSource = b, c.ContainerdConfigFile
	} else if b, err := optional(env.Files.ReadFile(pathContainerdAMI)); err != nil {
		return err
	} else if b != nil {
		f.ContainerdTemplate, f.ContainerdTemplateSource = b, pathContainerdAMI
	}
	var err error
	if f.SandboxImageUnit, err = optional(env.Files.ReadFile(pathSandboxUnitAMI)); err != nil {
		return err
	}
	mounts, err := optional(env.Files.ReadFile(pathMounts))
	if err != nil {
		return err
	}
	unit, err := optional(env.Files.ReadFile(nodesys.BPFMountPath))
	if err != nil {
		return err
	}
	f.BPFMounted = unit != nil || bpfMounted(mounts)
	return nil
}

// optional turns a missing file into nil content.
func optional(b []byte, err error) ([]byte, error) {
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// bpfMounted reports whether /proc/mounts lists a bpf file system or /sys/fs/bpf.
func bpfMounted(mounts []byte) bool {
	s := bufio.NewScanner(bytes.NewReader(mounts))
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 3 && (fields[2] == "bpf" || fields[1] == "/sys/fs/bpf") {
			return true
		}
	}
	return false
}

// kubeletVersion takes the flag (parsed by Validate), else
// /etc/eks/kubelet-version.txt, else `kubelet --version`.
func kubeletVersion(ctx context.Context, flag kubeletconf.Version, env *Env) (kubeletconf.Version, error) {
	if !flag.IsZero() {
		return flag, nil
	}
	b, err := optional(env.Files.ReadFile(pathKubeletVersionTxt))
	if err != nil {
		return kubeletconf.Version{}, err
	}
	if b != nil {
		v, err := kubeletconf.FindVersion(string(b))
		if err != nil {
			return kubeletconf.Version{}, fmt.Errorf("%s: %w", pathKubeletVersionTxt, err)
		}
		return v, nil
	}
	out, err := env.KubeletVersion(ctx)
	if err != nil {
		return kubeletconf.Version{}, fmt.Errorf("kubelet version: no --kubelet-version, no %s, and `kubelet --version` failed: %w", pathKubeletVersionTxt, err)
	}
	v, err := kubeletconf.FindVersion(out)
	if err != nil {
		return kubeletconf.Version{}, fmt.Errorf("`kubelet --version` printed %q: %w", strings.TrimSpace(out), err)
	}
	return v, nil
}

// readImage learns what kind of image the root is: its profile (--image-profile, else
// from /etc/os-release), its containerd's major version
// (/etc/eks/containerd-version.txt, else `containerd --version` on the node itself,
// else the profile's), whether it ships an image credential provider config, and
// NVIDIA's runtime and devices.
func readImage(ctx context.Context, c *Config, env *Env, f *Facts) error {
	if c.ImageProfile != "" {
		f.Profile, _ = lookupProfile(c.ImageProfile, "--image-profile")
	} else {
		osRelease, err := optional(env.Files.ReadFile(pathOSRelease))
		if err != nil {
			return err
		}
		f.Profile = detectProfile(osRelease)
	}

	f.ContainerdMajor, f.ContainerdMinor, f.ContainerdSource = f.Profile.ContainerdMajor, -1, "the "+f.Profile.Name+" image's default"
	b, err := optional(env.Files.ReadFile(pathContainerdVersion))
	if err != nil {
		return err
	}
	text, from := string(b), pathContainerdVersion
	if b == nil && env.OnNode() && env.ContainerdVersion != nil {
		if out, err := env.ContainerdVersion(ctx); err == nil {
			text, from = out, "containerd --version"
		}
	}
	if text != "" {
		v, err := kubeletconf.FindVersion(text)
		if err != nil {
			return fmt.Errorf("containerd version: %s: %w", from, err)
		}
		f.ContainerdMajor, f.ContainerdMinor, f.ContainerdSource = v.Major, v.Minor, from+" ("+v.String()+")"
	}

	if _, err := env.Files.Stat(kubeletconf.CredentialProviderConfig); err == nil {
		f.CredentialConfigOnImage = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if p := f.Profile.RuncBinary; p != "" {
		if st, err := env.Files.Stat(p); err == nil && st.Mode().IsRegular() {
			f.RuncBinary = p
		}
	}
	if st, err := env.Files.Stat(pathNvidiaRuntime); err == nil && st.Mode().IsRegular() {
		f.NvidiaRuntime = pathNvidiaRuntime
	}
	devices, err := env.Files.ReadDir(pathPCIDevices)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, d := range devices {
		vendor, err := env.Files.ReadFile(pathPCIDevices + "/" + d + "/vendor")
		if err == nil && strings.TrimSpace(string(vendor)) == nvidiaPCIVendor {
			f.NvidiaGPU = true
			break
		}
	}
	return nil
}

// nvidiaPCIVendor is NVIDIA's PCI vendor ID, as /sys/bus/pci/devices/*/vendor shows it.
const nvidiaPCIVendor = "0x10de"

// nodeName is the node's name and where it came from: the instance ID with the
// InstanceIdNodeName feature gate; IMDS local-hostname when it is EC2's own private
// DNS name, which then is PrivateDnsName (ip-10-0-0-1.ec2.internal in us-east-1,
// <name>.<region>.compute.internal elsewhere); otherwise, with a custom DHCP
// domain-name that local-hostname carries (amazon-eks-ami #1264), EC2's
// PrivateDnsName, falling back to local-hostname with a warning.
func nodeName(ctx context.Context, c *Config, env *Env, inst *imds.Facts, client func() (ec2api.API, error), warn func(string)) (string, string) {
	if c.NodeNameFromInstanceID {
		return inst.InstanceID, "the instance ID (spec.featureGates.InstanceIdNodeName)"
	}
	if isEC2PrivateName(inst.LocalHostname, inst.Region) {
		return inst.LocalHostname, "IMDS local-hostname, EC2's own private DNS name (no ec2:DescribeInstances)"
	}
	api, err := client()
	name := ""
	if err == nil {
		name, err = privateDNSName(ctx, api, inst.InstanceID, env)
	}
	if err != nil {
		warn(fmt.Sprintf("ec2:DescribeInstances gave no PrivateDnsName for %s (%v); using IMDS local-hostname %q as the node name", inst.InstanceID, err, inst.LocalHostname))
		return inst.LocalHostname, "IMDS local-hostname (EC2 could not say)"
	}
	// The name becomes the kubelet's --hostname-override and the Node's name: only
	// a name EC2 gives this instance will do.
	if !isEC2PrivateName(name, inst.Region) || !ownResourceName(name, inst.InstanceID) {
		warn(fmt.Sprintf("ec2:DescribeInstances gave %s for %s, not a private DNS name EC2 gives an instance in %s (ip-<address> or %s, then %s); using IMDS local-hostname %q as the node name",
			quote.Value(scrub.Text(name)), inst.InstanceID, inst.Region, inst.InstanceID, privateDomain(inst.Region), inst.LocalHostname))
		return inst.LocalHostname, "IMDS local-hostname (EC2's answer was not a private DNS name)"
	}
	return name, "ec2:DescribeInstances PrivateDnsName (local-hostname " + strconv.Quote(inst.LocalHostname) + " is not EC2's own name)"
}

// privateDomain is the domain of EC2's private DNS names in region.
func privateDomain(region string) string {
	if region == "us-east-1" {
		return "ec2.internal"
	}
	return region + ".compute.internal"
}

// ownResourceName reports whether host, a private DNS name, names instanceID when
// it is resource-based (i-0123....<domain>); an IP-based name names an address.
func ownResourceName(host, instanceID string) bool {
	label, _, _ := strings.Cut(host, ".")
	return !strings.HasPrefix(label, "i-") || label == instanceID
}

// isEC2PrivateName reports whether host is a private DNS name EC2 itself gives in
// region: one name (no custom domain appended) in ec2.internal (us-east-1) or
// <region>.compute.internal, IP-based (ip-10-0-0-1) or resource-based (i-0123...).
func isEC2PrivateName(host, region string) bool {
	var label string
	switch {
	case region == "us-east-1" && strings.HasSuffix(host, ".ec2.internal"):
		label = strings.TrimSuffix(host, ".ec2.internal")
	case region != "" && strings.HasSuffix(host, "."+region+".compute.internal"):
		label = strings.TrimSuffix(host, "."+region+".compute.internal")
	default:
		return false
	}
	return isDNSLabel(label) && (strings.HasPrefix(label, "ip-") || strings.HasPrefix(label, "i-"))
}

// privateDNSName asks EC2 for the instance's PrivateDnsName, as bootstrap.sh's
// private-dns-name helper does, retrying while the answer is empty or the instance
// is not visible yet. Where EC2 cannot answer (no permission, no endpoint) the caller
// falls back to IMDS local-hostname with a warning instead of failing the boot.
func privateDNSName(ctx context.Context, api ec2api.API, instanceID string, env *Env) (string, error) {
	attempts, interval := env.DNSNameAttempts, env.DNSNameInterval
	for i := 0; ; i++ {
		name, err := api.PrivateDNSName(ctx, instanceID)
		if err == nil {
			return name, nil
		}
		if !dnsNameRetryable(err) || i+1 >= attempts {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(interval):
		}
	}
}

// dnsNameRetryable reports whether EC2 may still give the name on a later attempt: the
// name is empty, or the instance is not visible to the API yet (eventual consistency
// just after launch).
func dnsNameRetryable(err error) bool {
	var apiErr smithy.APIError
	return errors.Is(err, ec2api.ErrEmptyDNSName) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidInstanceID.NotFound")
}

// fipsHost reports whether FIPS mode is on and the region's ecr-fips host resolves, in
// which case the pause image comes from there (get-ecr-uri.sh's rule).
func fipsHost(ctx context.Context, c *Config, env *Env, inst *imds.Facts) bool {
	if c.PauseContainerImage != "" {
		return false
	}
	b, err := env.Files.ReadFile(pathFIPS)
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		return false
	}
	account, region := ecrRegistry(inst.Region, c.PauseContainerAccount)
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := env.LookupHost(lctx, ECRHost(account, region, inst.Domain, true))
	return err == nil && len(addrs) > 0
}

// domainForRegion derives the AWS DNS suffix of a commercial, GovCloud or China
// region (imds.PartitionOf), for the rare IMDS that does not serve services/domain.
// Other partitions' domains are not guessed.
func domainForRegion(region string) (string, bool) {
	p, ok := imds.PartitionOf(region)
	switch {
	case !ok:
		return "", false
	case p.Name == "aws", p.Name == "aws-cn", p.Name == "aws-us-gov":
		return p.Domain, true
	}
	return "", false
}

// logFacts logs what was learned, without secrets.
func logFacts(log *zap.Logger, f *Facts) {
	log.Info("instance facts",
		zap.String("instanceType", f.Instance.InstanceType),
		zap.String("region", f.Instance.Region),
		zap.String("instanceID", f.Instance.InstanceID),
		zap.String("kubelet", f.KubeletVersion.String()),
		zap.String("imageProfile", f.Profile.Name),
		zap.String("imageProfileReason", f.Profile.Reason),
		zap.Int("containerdMajor", f.ContainerdMajor),
		zap.String("containerdVersion", f.ContainerdSource),
		zap.Int("cpus", f.CPUs),
		zap.Int("maxPods", f.MaxPods),
		zap.String("maxPodsSource", f.MaxPodsSource),
		zap.String("nodeName", f.PrivateDNSName),
		zap.String("nodeNameSource", f.NodeNameSource),
		zap.String("containerdTemplate", f.ContainerdTemplateSource))
}
