package bootstrap

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/smithy-go"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/rootfs"
)

// Node paths eksboot reads or writes.
const (
	pathCA                = "/etc/kubernetes/pki/ca.crt"
	pathKubeconfig        = "/var/lib/kubelet/kubeconfig"
	pathKubeletConfig     = "/etc/kubernetes/kubelet/kubelet-config.json"
	pathKubeletUnit       = "/etc/systemd/system/kubelet.service"
	pathArgsDropIn        = "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"
	pathExtraArgsDropIn   = "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"
	pathContainerdConfig  = "/etc/containerd/config.toml"
	pathContainerdAMI     = "/etc/eks/containerd/containerd-config.toml"
	pathSandboxUnitAMI    = "/etc/eks/containerd/sandbox-image.service"
	pathSandboxUnit       = "/etc/systemd/system/sandbox-image.service"
	pathBPFUnit           = "/etc/systemd/system/sys-fs-bpf.mount"
	pathKubeletVersionTxt = "/etc/eks/kubelet-version.txt"
	pathFIPS              = "/proc/sys/crypto/fips_enabled"
	pathMounts            = "/proc/mounts"
)

// Facts are what eksboot learns from the node, IMDS and EC2 before it computes
// anything. Gathering them is the only step with outside effects before the writes.
type Facts struct {
	Instance       imds.Facts
	KubeletVersion version
	CPUs           int
	// PrivateDNSName is the node name: EC2's PrivateDnsName, or IMDS local-hostname
	// when EC2 could not say.
	PrivateDNSName string
	// MaxPods and MaxPodsSource: the table, the node's eni-max-pods.txt, EC2's
	// instance-type facts or the default, with the formula (maxpods.go).
	MaxPods       int
	MaxPodsSource string
	// FIPSHost is set when FIPS mode is on and the ecr-fips registry host resolves.
	FIPSHost bool
	// BPFMounted is set when a bpf file system is mounted or its unit exists.
	BPFMounted bool
	// ContainerdTemplate is the containerd config template and where it came from.
	ContainerdTemplate       string
	ContainerdTemplateSource string
	// SandboxImageUnit is the AMI's sandbox-image.service, nil when the AMI has none.
	SandboxImageUnit []byte
	// ClusterCache is the cache of the discovered cluster, written with the other
	// files; nil when --b64-cluster-ca and --apiserver-endpoint were both given.
	ClusterCache *rootfs.File
	// Warnings are facts that could not be had and the fallback used.
	Warnings []string
}

// gatherFacts reads everything the computation needs. IMDS comes first (the region is
// needed for EC2); the EC2 and DNS look-ups then run in parallel.
func gatherFacts(ctx context.Context, c *Config, o *Options, env *Env) (*Facts, error) {
	f := &Facts{CPUs: env.CPUs()}
	var err error
	if f.KubeletVersion, err = kubeletVersion(ctx, o.KubeletVersion, env); err != nil {
		return nil, err
	}
	if !f.KubeletVersion.atLeast(1, 24) && !c.ContainerdChosen {
		// bootstrap.sh's default below 1.24 is dockerd, which eksboot does not drive.
		return nil, &UsageError{msg: fmt.Sprintf("kubelet %s: below Kubernetes 1.24 bootstrap.sh's default runtime is dockerd, which eksboot does not support; pass --container-runtime containerd", f.KubeletVersion)}
	}
	if err := readNodeFiles(c, env, f); err != nil {
		return nil, err
	}
	endpoint, err := imds.ResolveEndpoint(o.IMDSEndpoint, env.Getenv)
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	inst, err := env.IMDS(ctx, imds.Options{
		Endpoint: endpoint, Timeout: o.IMDSTimeout, AllowIMDSv1: o.IMDSv1Fallback,
		// The node IP: a 404 is IMDS not ready yet. Not when discovery may still turn
		// the cluster's IP family to IPv6 (an IPv6-only instance has no local-ipv4).
		RequireLocalIPv4: c.IPFamily == "ipv4" && !needsDiscovery(o),
	})
	if err != nil {
		return nil, err
	}
	f.Instance = *inst
	if f.Instance.Domain == "" {
		d, ok := domainForRegion(f.Instance.Region)
		if !ok {
			return nil, fmt.Errorf("imds: latest/meta-data/services/domain is missing and region %q has no known domain", f.Instance.Region)
		}
		f.Warnings = append(f.Warnings, fmt.Sprintf("IMDS has no services/domain; using %s, the domain of region %s", d, f.Instance.Region))
		f.Instance.Domain = d
	}
	if err := discoverCluster(ctx, c, o, f, env, endpoint); err != nil {
		return nil, err
	}

	api, apiErr := env.EC2(ctx, f.Instance.Region, endpoint)
	var wg sync.WaitGroup
	var mu sync.Mutex
	warn := func(s string) { mu.Lock(); f.Warnings = append(f.Warnings, s); mu.Unlock() }
	wg.Go(func() { f.PrivateDNSName = privateDNSName(ctx, api, apiErr, &f.Instance, env, warn) })
	wg.Go(func() {
		f.MaxPods, f.MaxPodsSource = maxPods(ctx, c, env, api, apiErr, f.Instance.InstanceType, f.CPUs, warn)
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
	f.ContainerdTemplate, f.ContainerdTemplateSource = assets.ContainerdConfig, "embedded"
	if c.ContainerdConfigFile != "" {
		b, err := env.Root.ReadFile(c.ContainerdConfigFile)
		if errors.Is(err, fs.ErrNotExist) {
			return &UsageError{msg: fmt.Sprintf("--containerd-config-file %q: no such file (under --root %s)", c.ContainerdConfigFile, env.Root.Dir())}
		}
		if err != nil {
			return &UsageError{msg: fmt.Sprintf("--containerd-config-file %q: %v", c.ContainerdConfigFile, err)}
		}
		f.ContainerdTemplate, f.ContainerdTemplateSource = string(b), c.ContainerdConfigFile
	} else if b, err := optional(env.Root.ReadFile(pathContainerdAMI)); err != nil {
		return err
	} else if b != nil {
		f.ContainerdTemplate, f.ContainerdTemplateSource = string(b), pathContainerdAMI
	}
	var err error
	if f.SandboxImageUnit, err = optional(env.Root.ReadFile(pathSandboxUnitAMI)); err != nil {
		return err
	}
	mounts, err := optional(env.Root.ReadFile(pathMounts))
	if err != nil {
		return err
	}
	unit, err := optional(env.Root.ReadFile(pathBPFUnit))
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

// kubeletVersion takes the flag, else /etc/eks/kubelet-version.txt, else `kubelet --version`.
func kubeletVersion(ctx context.Context, flag string, env *Env) (version, error) {
	if flag != "" {
		return parseKubeletVersion(flag)
	}
	b, err := optional(env.Root.ReadFile(pathKubeletVersionTxt))
	if err != nil {
		return version{}, err
	}
	if b != nil {
		v, err := parseKubeletVersion(string(b))
		if err != nil {
			return version{}, fmt.Errorf("%s: %w", pathKubeletVersionTxt, err)
		}
		return v, nil
	}
	out, err := env.KubeletVersion(ctx)
	if err != nil {
		return version{}, fmt.Errorf("kubelet version: no --kubelet-version, no %s, and `kubelet --version` failed: %w", pathKubeletVersionTxt, err)
	}
	v, err := parseKubeletVersion(out)
	if err != nil {
		return version{}, fmt.Errorf("`kubelet --version` printed %q: %w", strings.TrimSpace(out), err)
	}
	return v, nil
}

// privateDNSName asks EC2 for the instance's PrivateDnsName, as bootstrap.sh's
// private-dns-name helper does, retrying while the answer is empty. Where EC2 cannot
// answer (no permission, no endpoint) it falls back to IMDS local-hostname with a
// warning instead of failing the boot.
func privateDNSName(ctx context.Context, api ec2api.API, apiErr error, inst *imds.Facts, env *Env, warn func(string)) string {
	fallback := func(err error) string {
		warn(fmt.Sprintf("ec2:DescribeInstances gave no PrivateDnsName for %s (%v); using IMDS local-hostname %q as the node name", inst.InstanceID, err, inst.LocalHostname))
		return inst.LocalHostname
	}
	if apiErr != nil {
		return fallback(apiErr)
	}
	attempts, interval := env.DNSNameAttempts, env.DNSNameInterval
	for i := 0; ; i++ {
		name, err := api.PrivateDNSName(ctx, inst.InstanceID)
		if err == nil {
			return name
		}
		if !dnsNameRetryable(err) || i+1 >= attempts {
			return fallback(err)
		}
		select {
		case <-ctx.Done():
			return fallback(ctx.Err())
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
	b, err := env.Root.ReadFile(pathFIPS)
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
// region, for the rare IMDS that does not serve services/domain. Other partitions'
// domains are not guessed.
func domainForRegion(region string) (string, bool) {
	if !regionRE.MatchString(region) {
		return "", false
	}
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "amazonaws.com.cn", true
	case strings.Contains(region, "-iso"), strings.HasPrefix(region, "eusc-"):
		return "", false
	}
	return "amazonaws.com", true
}

var regionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// logFacts logs what was learned, without secrets.
func logFacts(log *zap.Logger, f *Facts) {
	log.Info("instance facts",
		zap.String("instanceType", f.Instance.InstanceType),
		zap.String("region", f.Instance.Region),
		zap.String("instanceID", f.Instance.InstanceID),
		zap.String("kubelet", f.KubeletVersion.String()),
		zap.Int("cpus", f.CPUs),
		zap.Int("maxPods", f.MaxPods),
		zap.String("maxPodsSource", f.MaxPodsSource),
		zap.String("nodeName", f.PrivateDNSName),
		zap.String("containerdTemplate", f.ContainerdTemplateSource))
}
